"""The sandbox does not depend on what other accounts keep on the machine.

Another account's daemon listens in a 0700 directory of its own; its home is closed
and holds credentials. A sandboxed command cannot reach either anyway, so the sandbox
leaves both alone: before, it tried to mask them, bubblewrap could not get there, and
every command failed (``ls`` included). What the command could reach is still masked.
When bubblewrap cannot set a sandbox up, the error names its real cause.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import other_account
import pytest
from passepartout.security.sandbox.probe import probe
from passepartout.security.sandbox.reach import Credentials, reachable, searchable

from passepartout.security.sandbox import FIX_HINT, SandboxUnavailable, run_sandboxed
from passepartout.security.sandbox import mounts as sandbox_mounts

pytestmark = pytest.mark.attack
ROOT = os.geteuid() == 0
CONNECT = (
    "python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.settimeout(2); "
    "c.connect(sys.argv[1]); print(\"CONNECTED\")' {path} 2>/dev/null; true"
)


@pytest.fixture
def other_socket() -> Iterator[Path]:
    """A listening socket of another account, behind a directory closed to us."""
    given = other_account.given()
    if given is not None:
        yield given.socket
        return
    if not ROOT:
        pytest.skip("another account's socket needs root, or tests/attacks-as-user's")
    listener = other_account.start()
    try:
        yield listener.socket
    finally:
        listener.stop()


def test_commands_run_beside_another_accounts_socket(tmp_path: Path, other_socket: Path) -> None:
    assert not reachable(other_socket)  # closed to us: its directory is another's 0700
    result = run_sandboxed("ls /; echo DONE", tmp_path, timeout=20)
    assert result.exit_code == 0, result.stderr
    assert "DONE" in result.stdout and "bin" in result.stdout


def test_another_accounts_socket_stays_out_of_reach(tmp_path: Path, other_socket: Path) -> None:
    result = run_sandboxed(CONNECT.format(path=other_socket), tmp_path, timeout=20)
    assert result.exit_code == 0, result.stderr
    assert "CONNECTED" not in result.stdout


@pytest.mark.skipif(not ROOT, reason="opening another account's directory needs root")
def test_a_socket_the_command_could_reach_is_still_masked(tmp_path: Path) -> None:
    listener = other_account.start()
    try:
        listener.socket.parent.chmod(0o755)  # now the sandbox's command could get there
        with contextlib.closing(__import__("socket").socket(1)) as probe_sock:
            probe_sock.connect(str(listener.socket))  # control: reachable from outside
        result = run_sandboxed(CONNECT.format(path=listener.socket), tmp_path, timeout=20)
        assert result.exit_code == 0, result.stderr
        assert "CONNECTED" not in result.stdout
    finally:
        listener.stop()


@pytest.fixture
def closed_home() -> Iterator[Path]:
    """Another account's home under /home, closed (0700), with a private key in it."""
    if not ROOT:
        pytest.skip("making another account's home needs root")
    home = Path(tempfile.mkdtemp(prefix="pp-other-home-", dir="/home"))
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("OTHER-ACCOUNTS-KEY\n")
    for path in (home, home / ".ssh", home / ".ssh" / "id_rsa"):
        os.chown(path, other_account.NOBODY, other_account.NOBODY)
    home.chmod(0o700)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_commands_run_beside_another_accounts_closed_home(
    tmp_path: Path, closed_home: Path
) -> None:
    result = run_sandboxed("echo DONE", tmp_path, timeout=20)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "DONE"
    closed_home.chmod(0o755)  # opened: its credentials are in reach, so they are hidden
    result = run_sandboxed(f"cat {closed_home}/.ssh/id_rsa; echo DONE", tmp_path, timeout=20)
    assert result.exit_code == 0, result.stderr
    assert "OTHER-ACCOUNTS-KEY" not in result.stdout and "DONE" in result.stdout


@pytest.mark.skipif(not ROOT, reason="only root sees into the closed directory to mask it")
def test_a_sandbox_that_cannot_be_set_up_says_why(
    tmp_path: Path, other_socket: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As before the fix: every host socket masked, reachable or not.
    monkeypatch.setattr(sandbox_mounts, "reachable_only", lambda paths: list(paths))
    with pytest.raises(SandboxUnavailable) as caught:
        run_sandboxed("echo DONE", tmp_path, timeout=20)
    # This run's other account, or another's on a busy machine: a closed place named.
    closed = str(other_socket.parent.parent / "pp-other-account-")
    assert closed in caught.value.message and "Permission denied" in caught.value.message
    assert caught.value.fields["fix"] != FIX_HINT
    findings = {f.name: f for f in probe()}
    assert not findings["sandbox probe"].ok
    assert closed in findings["sandbox probe"].detail
    assert "install bubblewrap" not in findings["sandbox probe"].fix


# -- the reach check against the kernel's own ----------------------------------------


@pytest.mark.skipif(not ROOT, reason="judging for another uid needs root")
@pytest.mark.skipif(shutil.which("setfacl") is None, reason="needs setfacl (Debian's acl)")
def test_the_reach_check_agrees_with_the_kernel(tmp_path: Path) -> None:
    """Directories of every owner, mode and ACL: the check and the kernel agree."""
    top = Path(tempfile.mkdtemp(prefix="pp-reach-", dir="/var/tmp"))
    top.chmod(0o755)
    who = Credentials(other_account.NOBODY, frozenset({other_account.NOBODY, 100}))
    owners = [(0, 0), (other_account.NOBODY, 0), (0, other_account.NOBODY), (0, 100), (1, 1)]
    acls = ["", f"u:{who.uid}:--x", f"u:{who.uid}:r--", "g:100:--x", "u:1:--x,m::r--",
            f"u:{who.uid}:--x,m::r--", "o::--x"]
    dirs: list[Path] = []
    try:
        for n, ((uid, gid), mode, acl) in enumerate(
            (o, m, a) for o in owners for m in (0o700, 0o710, 0o701, 0o711, 0o750)
            for a in acls
        ):
            d = top / f"d{n}"
            d.mkdir()
            os.chown(d, uid, gid)
            d.chmod(mode)
            if acl:
                subprocess.run(["setfacl", "-m", acl, str(d)], check=True)
            dirs.append(d)
        ask = (
            "import os,sys; "
            "print(''.join('1' if os.access(d, os.X_OK) else '0' for d in sys.argv[1:]))"
        )
        kernel = subprocess.run(
            [other_account.PYTHON, "-I", "-S", "-c", ask, *map(str, dirs)],
            user=who.uid, group=who.uid, extra_groups=[100],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
        ours = "".join("1" if searchable(d, who) else "0" for d in dirs)
        disagree = [str(d) for d, k, o in zip(dirs, kernel, ours, strict=True) if k != o]
        assert not disagree, disagree
        assert "0" in kernel and "1" in kernel
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_socket_closed_between_plan_and_mounts_is_planned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host socket that goes away after the mounts were planned made bubblewrap stop
    ("Can't create file at ..."), and the command failed for nothing."""
    import socket

    from passepartout.security import sandbox

    launch = subprocess.Popen
    top = Path(tempfile.mkdtemp(prefix="pp-brief-", dir="/var/tmp"))
    path = top / "brief.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    launches: list[int] = []

    def popen(*args: object, **kwargs: object) -> object:
        launches.append(1)
        if len(launches) == 1:
            path.unlink()  # closed by its owner just now
        return launch(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(sandbox.subprocess, "Popen", popen)
    try:
        result = run_sandboxed("echo DONE", tmp_path, timeout=20)
    finally:
        server.close()
        shutil.rmtree(top, ignore_errors=True)
    assert result.exit_code == 0 and result.stdout.strip() == "DONE", result.stderr
    assert len(launches) == 2
