"""Starting and stopping ``passepartout serve``: the port line, the token, clean exits.

The token comes as Emacs hands it (the first line of stdin), from a file of the
person's, or (for older clients) from the environment; the first two never put it in
the process's environment block, which ``/proc/PID/environ`` keeps for its whole life.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from pathlib import Path

import pytest
from wire_client import PYTHON, ROOT, WireClient, server_env, start_server

from passepartout.testing.skilltrust import trust_skills

HERE = Path(__file__).parent
EMACS_COMMAND = [PYTHON, "-m", "passepartout", "serve"]  # passepartout-server-args


def _serve(tmp_path: Path, *args: str, token: str | None = None,
           stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    (tmp_path / "config").mkdir(exist_ok=True)
    return subprocess.run([*EMACS_COMMAND, *args], cwd=ROOT, env=server_env(tmp_path, token),
                          capture_output=True, timeout=30, input=stdin)


@pytest.mark.parametrize("stdin,token", [(b"", None), (b"\n", None), (b"  \r\n", None),
                                         (b"", "")],
                         ids=["stdin-closed", "empty-line", "blank-line", "empty-variable"])
def test_without_a_token_the_server_refuses_to_start(
    tmp_path: Path, stdin: bytes, token: str | None
) -> None:
    done = _serve(tmp_path, token=token, stdin=stdin)
    assert done.returncode == 2
    assert done.stdout == b""  # no port: Emacs sees the start fail
    assert b"no token: the first line of stdin is empty" in done.stderr
    assert b"Traceback" not in done.stderr


def _environ(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def _start_like_emacs(tmp_path: Path, token: str, *args: str,
                      env_token: str | None = None) -> tuple[subprocess.Popen[bytes], int]:
    """``passepartout serve`` as Emacs starts it: the token written on stdin."""
    (tmp_path / "config").mkdir(exist_ok=True)
    proc = subprocess.Popen([*EMACS_COMMAND, *args], cwd=ROOT,
                            env=server_env(tmp_path, env_token),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=(tmp_path / "server.stderr").open("wb"))
    assert proc.stdin is not None and proc.stdout is not None
    if not args and env_token is None:
        proc.stdin.write(token.encode() + b"\n")
        proc.stdin.flush()
    line = proc.stdout.readline()
    assert line.strip().isdigit(), (line, (tmp_path / "server.stderr").read_text())
    return proc, int(line)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """No clean stop needed (the other tests check it): the agent's boot is not awaited."""
    proc.kill()
    proc.wait(20)
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


@pytest.mark.attack
def test_the_token_is_not_in_the_servers_environment_block(tmp_path: Path) -> None:
    token = secrets.token_hex(32)
    proc, port = _start_like_emacs(tmp_path, token)
    try:
        client = WireClient(port)
        assert client.hello(token)[0] == "return"
        assert client.ok("ping") == "pong"
        for read in (_environ, _cmdline):
            assert token.encode() not in read(proc.pid)
        assert b"PASSEPARTOUT_TOKEN" not in _environ(proc.pid)
        client.close()
    finally:
        _kill(proc)


@pytest.mark.attack
def test_the_old_variable_still_works_but_stays_in_the_environment_block(
    tmp_path: Path
) -> None:
    """The check above can fail: the variable's token is there, for the process's life."""
    token = secrets.token_hex(32)
    proc, port = _start_like_emacs(tmp_path, token, env_token=token)
    try:
        client = WireClient(port)
        assert client.hello(token)[0] == "return"
        assert token.encode() in _environ(proc.pid)  # os.environ.pop cannot erase it
        client.close()
    finally:
        _kill(proc)
    assert "hand it over on stdin or with --token-file" in (
        tmp_path / "server.stderr").read_text()


@pytest.mark.attack
def test_a_token_file_is_read_then_deleted(tmp_path: Path) -> None:
    token = secrets.token_hex(32)
    path = tmp_path / "token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, token.encode() + b"\n")
    os.close(fd)
    proc, port = _start_like_emacs(tmp_path, token, "--token-file", str(path))
    try:
        assert not path.exists()
        client = WireClient(port)
        assert client.hello(token)[0] == "return"
        assert token.encode() not in _environ(proc.pid)
        client.close()
    finally:
        _kill(proc)


@pytest.mark.attack
@pytest.mark.parametrize("kind", ["readable-by-others", "symlink", "fifo", "missing"])
def test_an_unsafe_token_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "token"
    if kind == "readable-by-others":
        path.write_text("secret-token\n")
        path.chmod(0o644)
    elif kind == "symlink":
        (tmp_path / "real").write_text("secret-token\n")
        (tmp_path / "real").chmod(0o600)
        path.symlink_to(tmp_path / "real")
    elif kind == "fifo":
        os.mkfifo(path, 0o600)  # opening it must not block the start
    done = _serve(tmp_path, "--token-file", str(path))
    assert done.returncode == 2 and done.stdout == b""
    message = done.stderr.decode()
    assert "token file" in message and "Traceback" not in message
    expected = {"readable-by-others": "chmod 600", "symlink": "cannot open",
                "fifo": "not a regular file", "missing": "cannot open"}[kind]
    assert expected in message


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGHUP", "stdin-eof"])
def test_a_stop_request_exits_0_without_a_traceback(tmp_path: Path, how: str) -> None:
    server = start_server(tmp_path)
    client = server.client()
    assert client.ok("ping") == "pong"
    if how == "stdin-eof":
        assert server.proc.stdin is not None
        server.proc.stdin.close()
    else:
        server.proc.send_signal(getattr(signal, how))
    assert server.proc.wait(20) == 0
    assert server.proc.stdout is not None
    assert server.proc.stdout.read() == b""  # the port was the only line
    log = server.log()
    assert "Traceback" not in log and "stopped" in log
    assert client.is_closed()


def test_the_command_line_entry_prints_only_the_port(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    (tmp_path / "config").mkdir()
    proc = subprocess.Popen(EMACS_COMMAND, cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(b"a-token\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    assert line.strip().isdigit() and line.endswith(b"\n")
    proc.stdin.close()
    assert proc.wait(20) == 0
    assert proc.stdout.read() == b""
    assert b"Traceback" not in proc.stderr.read()


def test_stopping_with_an_approval_pending_denies_it_and_exits(tmp_path: Path) -> None:
    trust_skills(tmp_path / "home", HERE / "wire_skills")  # as the person would
    server = start_server(tmp_path, script=str(HERE / "wire_scripted_server.py"),
                          SKILLS_DIR=str(HERE / "wire_skills"))
    client = server.client()
    client.ok("chat-send", "s", "t-stop", "tool", None)
    client.wait_callback("approval", a2="t-stop")
    server.proc.terminate()
    assert server.proc.wait(20) == 0  # well before the 60 s approval timeout
    log = server.log()
    assert "denied" in log and "Traceback" not in log

