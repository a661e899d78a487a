"""The bubblewrap sandbox really confines: filesystem, network, output, time, environment."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from passepartout.cli.doctor import check_sandbox
from passepartout.security.sandbox import (
    MINIMAL_PATH,
    SandboxUnavailable,
    build_argv,
    run_sandboxed,
)
from passepartout.security.sandbox import scope as sandbox_scope
from passepartout.security.sandbox.probe import sandbox_check
from passepartout.security.sandbox.scope import SCOPE_ABI, landlock_abi
from passepartout.security.shell.git_hardening import GIT_ENV


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory outside /tmp (which the sandbox replaces), so it is seen read-only."""
    path = Path(tempfile.mkdtemp(prefix="pp-sandbox-", dir="/var/tmp"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


def test_command_runs_in_workspace_and_can_write_there(ws: Path) -> None:
    result = run_sandboxed("pwd; echo hello > out.txt; cat out.txt", ws, timeout=10)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{ws.resolve()}\nhello\n"
    assert (ws / "out.txt").read_text() == "hello\n"
    assert not result.truncated and not result.timed_out


def test_exit_code_and_stderr_are_the_commands(ws: Path) -> None:
    result = run_sandboxed("echo oops >&2; exit 7", ws, timeout=10)
    assert (result.exit_code, result.stdout, result.stderr) == (7, "", "oops\n")


def test_write_outside_workspace_fails(ws: Path, outside_tmp: Path) -> None:
    target = outside_tmp / "escaped.txt"
    result = run_sandboxed(f"echo pwned > {target}", ws, timeout=10)
    assert result.exit_code != 0
    assert "Read-only file system" in result.stderr
    assert not target.exists()


def test_existing_file_outside_workspace_cannot_be_changed(ws: Path, outside_tmp: Path) -> None:
    victim = outside_tmp / "victim.txt"
    victim.write_text("original\n")
    result = run_sandboxed(f"rm -f {victim}; echo x >> {victim}; cat {victim}", ws, timeout=10)
    assert result.exit_code == 0  # cat succeeds, the writes do not
    assert result.stdout == "original\n"
    assert victim.read_text() == "original\n"


def test_tmp_is_a_private_tmpfs(ws: Path, tmp_path: Path) -> None:
    host_file = tmp_path / "host-only.txt"
    host_file.write_text("host\n")
    result = run_sandboxed(
        f"cat {host_file}; echo x > /tmp/scratch && cat /tmp/scratch", ws, timeout=10
    )
    assert "No such file" in result.stderr
    assert result.stdout == "x\n"
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "x\n"


def test_secret_paths_are_hidden(ws: Path, outside_tmp: Path) -> None:
    secret = outside_tmp / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    visible = run_sandboxed(f"cat {secret}", ws, timeout=10)
    assert visible.stdout == "PRIVATE KEY\n"  # control: readable when not hidden
    hidden = run_sandboxed(
        f"cat {secret}; ls -A {outside_tmp}", ws, timeout=10, hidden=[outside_tmp]
    )
    assert "PRIVATE KEY" not in hidden.stdout
    assert hidden.stdout == ""


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.setblocking(False)
    return sock


def _received(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_network_is_unreachable_without_grant(ws: Path) -> None:
    with _listener() as sock:
        port = sock.getsockname()[1]
        cmd = f"echo hi > /dev/tcp/127.0.0.1/{port} && echo connected"
        denied = run_sandboxed(cmd, ws, timeout=10)
        assert "connected" not in denied.stdout
        assert not _received(sock)
        python = run_sandboxed(
            f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'",
            ws,
            timeout=10,
        )
        assert python.exit_code != 0
        assert not _received(sock)
        granted = run_sandboxed(cmd, ws, timeout=10, allow_network=True)
        assert "connected" in granted.stdout  # control: the same command works when granted
        assert _received(sock)


def test_output_is_capped_and_the_process_killed(ws: Path) -> None:
    result = run_sandboxed("yes", ws, timeout=30, output_cap=10_000)
    assert result.truncated
    assert len(result.stdout) == 10_000
    assert not result.timed_out  # killed at the cap, not at the timeout


def test_stderr_is_capped_too(ws: Path) -> None:
    result = run_sandboxed("yes >&2", ws, timeout=30, output_cap=5_000)
    assert result.truncated and len(result.stderr) == 5_000


def test_timeout_kills_the_process(ws: Path) -> None:
    result = run_sandboxed("sleep 30; touch late", ws, timeout=1)
    assert result.timed_out
    assert not (ws / "late").exists()  # the shell went with it: no touch, thirty s on


def test_background_children_die_with_the_command(ws: Path) -> None:
    result = run_sandboxed("(sleep 1; touch late) & echo started", ws, timeout=10)
    assert result.stdout == "started\n" and not result.timed_out
    time.sleep(1.5)
    assert not (ws / "late").exists()


def test_environment_is_minimal_plus_git_hardening(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASSEPARTOUT_TEST_SECRET", "s3cret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/0/ssh")
    result = run_sandboxed("env -0", ws, timeout=10, env={"EXTRA": "yes"})
    env = dict(item.split("=", 1) for item in result.stdout.split("\0") if item)
    assert "s3cret" not in result.stdout and "sk-test" not in result.stdout
    assert {k: env[k] for k in GIT_ENV} == GIT_ENV
    assert (env["PATH"], env["LANG"], env["EXTRA"]) == (MINIMAL_PATH, "C.UTF-8", "yes")
    assert set(env) <= {"PATH", "HOME", "LANG", "EXTRA", "PWD", "SHLVL", "_", *GIT_ENV}


@pytest.mark.parametrize(
    "name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "AWS_PROFILE", "EMACS_SOCKET_NAME",
             "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "GIT_SSH_COMMAND", "GIT_CONFIG_COUNT"]
)
def test_credential_and_service_variables_are_refused(ws: Path, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        run_sandboxed("touch ran", ws, timeout=10, env={name: "x"})
    assert not (ws / "ran").exists()


@pytest.mark.parametrize("name", ["BASH_ENV", "ENV", "LD_PRELOAD", "BASH_FUNC_ls%%"])
def test_environment_that_runs_code_is_refused(ws: Path, name: str) -> None:
    with pytest.raises(ValueError, match=name.split("%")[0]):
        run_sandboxed("true", ws, timeout=10, env={name: "/tmp/x"})


def test_command_is_one_argv_element_never_requoted(ws: Path) -> None:
    cmd = "printf '%s|' \"a'b\" 'c\"d' $'e\\tf' \"$((1+1))\""
    argv = build_argv("bwrap", cmd, ws, timeout=5, allow_network=False)
    assert argv[-3:] == ["bash", "-c", cmd]
    assert "--unshare-net" in argv and "--die-with-parent" in argv and "--new-session" in argv
    assert "--unshare-net" not in build_argv("bwrap", cmd, ws, timeout=5, allow_network=True)
    result = run_sandboxed(cmd, ws, timeout=10)
    assert result.stdout == "a'b|c\"d|e\tf|2|"


def test_nul_byte_is_refused(ws: Path) -> None:
    with pytest.raises(ValueError, match="NUL"):
        run_sandboxed("ls\x00rm", ws, timeout=10)


def test_missing_bwrap_on_path_raises(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap") as info:
        run_sandboxed("touch ran", ws, timeout=10)
    assert "not on PATH" in info.value.message
    assert not (ws / "ran").exists()
    ok, message = sandbox_check()
    assert not ok and "bubblewrap" in message


def test_configured_missing_bwrap_raises(ws: Path) -> None:
    with pytest.raises(SandboxUnavailable, match="does not exist"):
        run_sandboxed("touch ran", ws, timeout=10, bwrap="/nonexistent/bwrap")
    assert not (ws / "ran").exists()


def test_bwrap_that_cannot_set_up_raises(ws: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="Creating new namespace failed"):
        run_sandboxed("touch ran", ws, timeout=10, bwrap=str(fake))
    assert not (ws / "ran").exists()


def test_sandbox_check_reports_working_bwrap() -> None:
    ok, message = sandbox_check()
    assert ok, message
    assert "bwrap" in message


def test_workspace_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory"):
        run_sandboxed("true", tmp_path / "missing", timeout=10)


def test_sandbox_runs_as_its_own_pid_namespace(ws: Path) -> None:
    result = run_sandboxed("echo $$; ls /proc | grep -c '^[0-9]'", ws, timeout=10)
    own_pid, visible = result.stdout.split()
    assert int(visible) < 10  # the host's processes are not visible
    assert int(own_pid) != os.getpid()


def test_doctor_reports_what_the_sandbox_holds() -> None:
    checks = {c.name: c for c in check_sandbox()}
    assert all(c.ok for c in checks.values()), [c.line() for c in checks.values()]
    assert checks["sandbox capabilities"].detail == "CapEff 0000000000000000 inside (none)"
    assert checks["sandbox user namespace"].detail.startswith("one per command")
    assert "host Unix sockets reachable" in checks["sandbox sockets"].detail
    assert checks["sandbox filesystem"].ok


def test_doctor_fails_loudly_without_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    (line,) = [c.line() for c in check_sandbox()]
    assert line.startswith("[FAIL] sandbox: bubblewrap (bwrap) is not on PATH")
    assert "fix: install bubblewrap" in line


@pytest.mark.skipif(os.geteuid() != 0, reason="only root has capabilities to keep")
def test_doctor_fails_loudly_when_capabilities_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bubblewrap that ignores --cap-drop: root keeps its capabilities in the sandbox.
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/bash\nargs=()\nwhile [ $# -gt 0 ]; do\n"
        '  if [ "$1" = --cap-drop ]; then shift 2; continue; fi\n'
        '  args+=("$1"); shift\ndone\n'
        f'exec {shutil.which("bwrap")} "${{args[@]}}"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    checks = {c.name: c for c in check_sandbox()}
    assert not checks["sandbox capabilities"].ok
    assert checks["sandbox capabilities"].line().startswith("[FAIL] sandbox capabilities: CapEff")


def test_a_network_command_that_cannot_be_scoped_does_not_run(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if landlock_abi() < SCOPE_ABI:
        pytest.skip("this kernel cannot scope abstract sockets: network commands run unscoped")
    failing = "import sys; sys.stderr.write('passepartout-sandbox: no Landlock'); sys.exit(125)"
    monkeypatch.setattr(sandbox_scope, "LAUNCHER", failing)
    with pytest.raises(SandboxUnavailable, match="no Landlock"):
        run_sandboxed("touch ran", ws, timeout=10, allow_network=True)
    assert not (ws / "ran").exists()
    assert run_sandboxed("touch ran", ws, timeout=10).exit_code == 0  # without the network
