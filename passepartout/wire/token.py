"""How ``passepartout serve`` receives its token: never through its environment.

The environment a process starts with stays readable in ``/proc/PID/environ`` for its
whole life (``os.environ.pop`` changes only Python's copy), so Emacs writes the token as
the first line of the server's stdin, which it holds anyway.  A person starting the
server by hand names a file instead (``--token-file``): it must be a regular file of
theirs that no one else may read, and it is deleted once read.  ``PASSEPARTOUT_TOKEN``
is still read, for older clients, with a warning.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import stat
import time
from collections.abc import MutableMapping
from pathlib import Path

from passepartout.errors import PassepartoutError

log = logging.getLogger(__name__)

TOKEN_VARIABLE = "PASSEPARTOUT_TOKEN"
STDIN_TIMEOUT = 10.0  # Emacs writes the line right after starting the process
MAX_TOKEN = 1024


class TokenError(PassepartoutError):
    """No usable token was handed over."""

    kind = "token-error"


def receive_token(token_file: Path | None, environ: MutableMapping[str, str],
                  *, stdin: int = 0, timeout: float = STDIN_TIMEOUT) -> str:
    """The token: from ``token_file``, else the old variable, else stdin's first line."""
    # Out of Python's environment in every case, so that no tool's subprocess inherits it.
    legacy = environ.pop(TOKEN_VARIABLE, "")
    if token_file is not None:
        return read_token_file(token_file)
    if legacy:
        log.warning("the token came in %s, where /proc/PID/environ keeps it readable; "
                    "hand it over on stdin or with --token-file", TOKEN_VARIABLE)
        return legacy
    return read_token_line(stdin, timeout)


def read_token_line(fd: int, timeout: float) -> str:
    """The first line of ``fd``, read within ``timeout`` (later bytes are not kept)."""
    try:
        if os.isatty(fd):
            raise TokenError("stdin is a terminal: give the token in a file (--token-file)")
        deadline = time.monotonic() + timeout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TokenError(f"no token on stdin within {timeout:g} s")
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
            if b"\n" not in data and len(data) > MAX_TOKEN + 1:
                raise TokenError("the first line of stdin is too long to be a token")
    except OSError as err:
        raise TokenError(f"cannot read the token from stdin: {err.strerror}") from None
    return _token(data.split(b"\n", 1)[0], "the first line of stdin")


def read_token_file(path: Path) -> str:
    """The token in ``path``, a regular file only its owner (us) can read; then delete it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise TokenError(f"cannot open the token file {path}: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokenError(f"the token file {path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise TokenError(f"the token file {path} belongs to someone else")
        if info.st_mode & 0o077:
            raise TokenError(f"others may read the token file {path}: chmod 600 it")
        data = os.read(fd, MAX_TOKEN + 2)
    finally:
        os.close(fd)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    return _token(data.split(b"\n", 1)[0], f"the token file {path}")


def _token(line: bytes, where: str) -> str:
    try:
        token = line.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise TokenError(f"{where} is not UTF-8 text") from None
    if not token:
        raise TokenError(f"no token: {where} is empty. Emacs hands the server a fresh "
                         "random token when it starts it (M-x passepartout-start); the "
                         "server does not run without one.")
    if len(token) > MAX_TOKEN:
        raise TokenError(f"{where} is too long to be a token")
    return token
