"""Starting and stopping ``passepartout serve``: the port line, the token, clean exits."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from wire_client import PYTHON, ROOT, server_env, start_server

HERE = Path(__file__).parent


@pytest.mark.parametrize("token", [None, ""])
def test_without_a_token_the_server_refuses_to_start(tmp_path: Path, token: str | None) -> None:
    env = server_env(tmp_path, token)
    done = subprocess.run([PYTHON, "-m", "passepartout.serve"], cwd=ROOT, env=env,
                          capture_output=True, timeout=30, stdin=subprocess.PIPE)
    assert done.returncode == 2
    assert done.stdout == b""  # no port: Emacs sees the start fail
    assert b"PASSEPARTOUT_TOKEN is not set" in done.stderr
    assert b"Traceback" not in done.stderr


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
    env = server_env(tmp_path, "a-token")
    (tmp_path / "config").mkdir()
    proc = subprocess.Popen([PYTHON, "-m", "passepartout", "serve"], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    line = proc.stdout.readline()
    assert line.strip().isdigit() and line.endswith(b"\n")
    proc.stdin.close()
    assert proc.wait(20) == 0
    assert proc.stdout.read() == b""
    assert b"Traceback" not in proc.stderr.read()


def test_stopping_with_an_approval_pending_denies_it_and_exits(tmp_path: Path) -> None:
    server = start_server(tmp_path, script=str(HERE / "wire_scripted_server.py"),
                          SKILLS_DIR=str(HERE / "wire_skills"))
    client = server.client()
    client.ok("chat-send", "s", "t-stop", "tool", None)
    client.wait_callback("passepartout--on-approval", a2="t-stop")
    server.proc.terminate()
    assert server.proc.wait(20) == 0  # well before the 60 s approval timeout
    log = server.log()
    assert "denied" in log and "Traceback" not in log

