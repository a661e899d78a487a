"""How ``passepartout serve`` reads its token: stdin's first line, a file, the old variable.

The whole server is started in tests/test_wire_lifecycle.py; here the reading alone, on
real pipes, terminals and files, for what a start never shows: a writer that never
writes, a line too long, bytes that are not text.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from passepartout.wire.token import (
    MAX_TOKEN,
    TOKEN_VARIABLE,
    TokenError,
    read_token_line,
    receive_token,
)


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_the_first_line_is_the_token_and_the_rest_is_not_kept(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, b"abc123\r\nsomething else\n")
    assert read_token_line(read, 1.0) == "abc123"


def test_a_silent_writer_is_given_up_after_the_timeout(pipe: tuple[int, int]) -> None:
    with pytest.raises(TokenError, match=r"no token on stdin within 0\.2 s"):
        read_token_line(pipe[0], 0.2)


@pytest.mark.parametrize("data,message", [
    (b"x" * (MAX_TOKEN + 10), "too long to be a token"),
    (b"\xff\xfe\n", "not UTF-8 text"),
    (b"", "is empty"),
])
def test_a_bad_line_is_a_clear_error(pipe: tuple[int, int], data: bytes, message: str) -> None:
    read, write = pipe
    os.write(write, data)
    os.close(write)
    with pytest.raises(TokenError, match=message):
        read_token_line(read, 1.0)


def test_a_terminal_is_refused_rather_than_echoing_the_token() -> None:
    leader, follower = os.openpty()
    try:
        with pytest.raises(TokenError, match="stdin is a terminal"):
            read_token_line(follower, 1.0)
    finally:
        os.close(leader)
        os.close(follower)


def test_the_old_variable_is_taken_out_of_the_environment_with_a_warning(
    pipe: tuple[int, int], caplog: pytest.LogCaptureFixture
) -> None:
    environ = {TOKEN_VARIABLE: "from-the-variable", "HOME": "/home/x"}
    with caplog.at_level(logging.WARNING, logger="passepartout.wire.token"):
        assert receive_token(None, environ, stdin=pipe[0]) == "from-the-variable"
    assert environ == {"HOME": "/home/x"}
    assert "/proc/PID/environ" in caplog.text


def test_a_token_file_wins_and_the_variable_is_dropped_anyway(
    tmp_path: Path, pipe: tuple[int, int]
) -> None:
    path = tmp_path / "token"
    path.write_text("from-the-file\n")
    path.chmod(0o600)
    environ = {TOKEN_VARIABLE: "stale"}
    assert receive_token(path, environ, stdin=pipe[0]) == "from-the-file"
    assert environ == {} and not path.exists()


def test_without_file_or_variable_stdin_is_read(pipe: tuple[int, int]) -> None:
    os.write(pipe[1], b"from-stdin\n")
    assert receive_token(None, {}, stdin=pipe[0], timeout=1.0) == "from-stdin"
