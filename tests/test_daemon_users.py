"""Only the person who runs the daemon can drive it: another local user can neither
enter the socket's directory nor read the token; where the directory was opened up,
the daemon itself refuses a peer of another uid (SO_PEERCRED), token or not.  And the
daemon puts its socket only in a directory that is really its own and closed.

The other user is ``passepartout-test`` (made by tests/attacks-as-user) when it exists,
else ``nobody``'s uid: a forked child of the test takes it (setuid), so it needs no
access to the checkout.  Acting as another user needs root; run as a normal user, that
part is skipped and the rest (what the place accepts, our own access) still runs.
"""

from __future__ import annotations

import errno
import os
import pwd
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons, wait_for

from passepartout.signals import Symbol
from passepartout.wire.client import connect, frame
from passepartout.wire.place import Place, PlaceError

pytestmark = pytest.mark.attack
ROOT_ONLY = "acting as a second local user needs root (the run as root checks it)"


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Daemons]:
    yield from scratch_daemons(tmp_path)


def other_uid() -> int:
    try:
        return pwd.getpwnam("passepartout-test").pw_uid
    except KeyError:
        return 65534  # nobody: setuid needs no account


def as_other_user(work: Callable[[], int]) -> int:
    """Run ``work`` in a forked child with another uid; its exit status."""
    pid = os.fork()
    if pid == 0:  # the child: only plain calls, then _exit
        code = 99
        try:
            uid = other_uid()
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            code = work()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def try_hello(path: Path, token: str) -> int:
    """0: the daemon closed the connection unanswered; 1: it answered; errno: no entry."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    try:
        sock.connect(str(path))
        sock.sendall(frame([Symbol("call"), 1, Symbol("hello"), [token, None]]))
        return 1 if sock.recv(1 << 16) else 0
    except (ConnectionResetError, BrokenPipeError):
        return 0  # closed before or while the hello went in
    except OSError as err:
        return err.errno or 98
    finally:
        sock.close()


def try_read(path: Path) -> int:
    try:
        path.read_bytes()
    except OSError as err:
        return err.errno or 98
    return 0


def test_another_user_cannot_reach_the_socket_nor_read_the_token(daemons: Daemons) -> None:
    if os.geteuid() != 0:
        pytest.skip(ROOT_ONLY)
    daemons.start()
    sock = daemons.rundir / "daemon.sock"
    token_file = daemons.home / "daemon.token"
    token = token_file.read_text().strip()
    assert as_other_user(lambda: try_hello(sock, token)) == errno.EACCES
    assert as_other_user(lambda: try_read(token_file)) == errno.EACCES
    # Opened up by mistake (directory and socket for all): the daemon still refuses the
    # other uid, though it brings the right token.
    runtime = Path(daemons.env["XDG_RUNTIME_DIR"])
    for path, mode in ((runtime, 0o711), (daemons.rundir, 0o711), (sock, 0o666)):
        path.chmod(mode)
    assert as_other_user(lambda: try_hello(sock, token)) == 0
    wait_for(lambda: f"another user (uid {other_uid()})" in daemons.log(), 10,
             "the refusal in the daemon's log")
    # Our own clients do not trust a directory opened up: they send nothing there.
    with pytest.raises(PlaceError, match="others may enter"):
        connect(daemons.home, environ=daemons.env)
    daemons.rundir.chmod(0o700)
    client = connect(daemons.home, environ=daemons.env)  # closed again: we get in
    assert client is not None
    with client:
        assert client.call("ping") == "pong"


def test_our_own_connection_is_admitted_and_needs_the_token(daemons: Daemons) -> None:
    daemons.start()
    sock = daemons.rundir / "daemon.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert try_hello(sock, "not-the-token") == 1  # answered: an unauthorized error
    client = connect(daemons.home, environ=daemons.env)
    assert client is not None
    with client:
        assert client.call("ping") == "pong"


def test_the_socket_admits_as_the_tcp_port_does(daemons: Daemons) -> None:
    """At most 16 connections wait for their token, each for the auth deadline: over the
    cap the oldest is closed, and a silent one is closed when its time is up."""
    daemons.start(PASSEPARTOUT_AUTH_TIMEOUT="1.5")
    sock = daemons.rundir / "daemon.sock"
    waiting = []
    for _ in range(17):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(5)
        conn.connect(str(sock))
        waiting.append(conn)
    try:
        assert waiting[0].recv(1) == b""  # the oldest, closed for the newcomer
        assert waiting[-1].recv(1) == b""  # the rest at the deadline
    finally:
        for conn in waiting:
            conn.close()
    client = connect(daemons.home, environ=daemons.env)
    assert client is not None
    with client:
        assert client.call("ping") == "pong"


def test_the_daemon_keeps_its_socket_only_in_a_closed_directory_of_its_own(
    daemons: Daemons, tmp_path: Path
) -> None:
    runtime = Path(daemons.env["XDG_RUNTIME_DIR"])
    (runtime / "passepartout").mkdir(mode=0o755)
    (runtime / "passepartout").chmod(0o755)
    refused = daemons.start(wait=False)
    assert refused.wait(30) == 2
    assert "others may enter" in daemons.log() and "chmod 700 it" in daemons.log()
    assert "Traceback" not in daemons.log()
    assert not (runtime / "passepartout" / "daemon.sock").exists()
    (runtime / "passepartout").rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (runtime / "passepartout").symlink_to(elsewhere)
    with pytest.raises(PlaceError, match="not a directory"):
        Place.find(tmp_path, {"XDG_RUNTIME_DIR": str(runtime)}).make()
    if os.geteuid() == 0:
        (runtime / "passepartout").unlink()
        (runtime / "passepartout").mkdir(mode=0o700)
        os.chown(runtime / "passepartout", other_uid(), other_uid())
        with pytest.raises(PlaceError, match="belongs to someone else"):
            Place.find(tmp_path, {"XDG_RUNTIME_DIR": str(runtime)}).make()


def test_without_a_runtime_directory_the_place_is_in_the_state_directory() -> None:
    """However long the path: a socket path too long is reached through the directory's
    descriptor (test_daemon_client_proof.py), never moved to a shared /tmp place."""
    long_home = Path("/x") / ("long" * 40)
    assert Place.find(long_home, {}).dir == long_home / "run"
    assert Place.find(Path("/home/a/.local/state/passepartout"), {}).dir == Path(
        "/home/a/.local/state/passepartout/run")
    assert Place.find(Path("/h"), {"XDG_RUNTIME_DIR": "/run/user/7"}).dir == Path(
        "/run/user/7/passepartout")
