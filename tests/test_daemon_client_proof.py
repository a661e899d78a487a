"""A client proves the daemon before it speaks: the place (directory and daemon.json) is
its own user's and closed, no symlink; the token comes only from a 0600 daemon.token of
its own; the process listening on the socket is of its own user (SO_PEERCRED).  Where
any of this fails, it sends nothing: the "daemon" listening there (an attacker's socket
in these tests) receives not a byte.  ``passepartout stop`` signals only the process it
proved to be the daemon, never a pid from a file; and with no XDG_RUNTIME_DIR the place
is in the state directory, however long its path, never a shared /tmp fallback.

Another user's files and listeners need root (as in test_daemon_users.py): that part is
skipped when run as a normal user; the rest runs as any user.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons, wait_for
from test_daemon_users import ROOT_ONLY, other_uid

from passepartout.wire.client import DaemonError, connect
from passepartout.wire.place import Place, PlaceError

pytestmark = pytest.mark.attack
TOKEN = "f" * 64


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Daemons]:
    yield from scratch_daemons(tmp_path)


@dataclass
class Squat:
    """A place laid out as an attacker would: a listening socket, a lock held, a
    daemon.json naming a token file; ``env`` finds it."""

    home: Path
    runtime: Path
    listener: socket.socket
    lock: int

    @property
    def dir(self) -> Path:
        return self.runtime / "passepartout"

    @property
    def env(self) -> dict[str, str]:
        return {"XDG_RUNTIME_DIR": str(self.runtime)}

    def received(self) -> bytes:
        """Every byte any client sent to the listener (none connected: b"")."""
        self.listener.setblocking(False)
        got = b""
        while True:
            try:
                conn, _ = self.listener.accept()
            except BlockingIOError:
                return got
            with conn:
                conn.settimeout(5)
                while chunk := conn.recv(1 << 16):
                    got += chunk


@pytest.fixture
def squat(tmp_path: Path) -> Iterator[Squat]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    token = home / "daemon.token"
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    runtime = Path(tempfile_dir())
    place = runtime / "passepartout"
    place.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(place / "daemon.sock"))
    listener.listen(8)
    lock = os.open(place / "daemon.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    info = place / "daemon.json"
    info.write_text(json.dumps({"pid": 1, "socket": str(place / "daemon.sock"),
                                "token-file": str(token)}))
    info.chmod(0o600)
    try:
        yield Squat(home, runtime, listener, lock)
    finally:
        listener.close()
        os.close(lock)
        subprocess.run(["rm", "-rf", str(runtime)], check=False)


def tempfile_dir() -> str:
    return tempfile.mkdtemp(prefix="ppq-", dir="/tmp")  # short: a socket path


def refused(squat: Squat, match: str) -> None:
    with pytest.raises(PlaceError, match=match):
        connect(squat.home, environ=squat.env)
    assert squat.received() == b""


def test_the_squat_itself_would_be_spoken_to(squat: Squat) -> None:
    """The layout of the attacks below is a place a client does talk to: each attack
    changes one thing, so that thing is what it refuses."""
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = squat.listener.accept()
        with conn:
            conn.settimeout(5)
            got.append(conn.recv(1 << 16))

    thread = threading.Thread(target=serve)
    thread.start()
    with pytest.raises(DaemonError, match=r"closed the connection|no answer"):
        connect(squat.home, timeout=0.5, environ=squat.env)
    thread.join(10)
    assert got and TOKEN.encode() in got[0]


@pytest.mark.parametrize(("attack", "match"), [
    (lambda s: s.dir.chmod(0o755), "others may enter"),
    (lambda s: s.dir.chmod(0o711), "others may enter"),
    (lambda s: (s.dir / "daemon.json").chmod(0o644), "others may read or write"),
    (lambda s: (s.dir / "daemon.json").chmod(0o620), "others may read or write"),
    (lambda s: (s.home / "daemon.token").chmod(0o640), "others may read or write"),
], ids=["dir-0755", "dir-0711", "json-0644", "json-group-writable", "token-0640"])
def test_a_place_open_to_others_is_refused_and_nothing_is_sent(
        squat: Squat, attack: Callable[[Squat], object], match: str) -> None:
    attack(squat)
    refused(squat, match)


def test_a_symlinked_daemon_json_is_refused(squat: Squat, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.json"
    (squat.dir / "daemon.json").rename(real)
    (squat.dir / "daemon.json").symlink_to(real)
    refused(squat, "is a symlink")


def test_a_symlinked_directory_is_refused(squat: Squat) -> None:
    moved = squat.runtime / "real"
    squat.dir.rename(moved)
    squat.dir.symlink_to(moved)
    refused(squat, "not a directory")


def test_a_token_file_that_is_not_the_daemons_is_never_sent(squat: Squat) -> None:
    """daemon.json naming a key of ours (0600, ours: it passes every mode check) as the
    token: the name alone is refused, so no file of the attacker's choosing leaves."""
    ssh = squat.home / ".ssh"
    ssh.mkdir(mode=0o700)
    key = ssh / "id_rsa"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    key.chmod(0o600)
    info = squat.dir / "daemon.json"
    info.write_text(json.dumps({"pid": 1, "socket": str(squat.dir / "daemon.sock"),
                                "token-file": str(key)}))
    refused(squat, "only a daemon.token is one")
    link = squat.home / "daemon.token"
    link.unlink()
    link.symlink_to(key)
    info.write_text(json.dumps({"pid": 1, "token-file": str(link)}))
    refused(squat, "is a symlink")


def test_another_users_directory_or_daemon_json_is_refused(squat: Squat) -> None:
    if os.geteuid() != 0:
        pytest.skip(ROOT_ONLY)
    uid = other_uid()
    os.chown(squat.dir / "daemon.json", uid, uid)
    refused(squat, "belongs to someone else")
    os.chown(squat.dir / "daemon.json", 0, 0)
    os.chown(squat.dir, uid, uid)
    refused(squat, "belongs to someone else")
    os.chown(squat.dir, 0, 0)
    os.chown(squat.home / "daemon.token", uid, uid)
    refused(squat, "belongs to someone else")


def test_a_socket_served_by_another_user_is_refused_and_hears_nothing(
        squat: Squat) -> None:
    """Everything in the place is ours and private, but the process listening on the
    socket is another user's (it bound it, then listened as that user): the client
    asks the kernel who it is and closes without a byte."""
    if os.geteuid() != 0:
        pytest.skip(ROOT_ONLY)
    squat.listener.close()
    path = squat.dir / "daemon.sock"
    path.unlink()
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound.bind(str(path))
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other user: listen, take one connection, count what it sends
        code = 99
        try:
            uid = other_uid()
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            bound.listen(1)
            os.write(ready_w, b"x")
            bound.settimeout(30)
            conn, _ = bound.accept()
            conn.settimeout(30)
            total = 0
            while chunk := conn.recv(1 << 16):
                total += len(chunk)
            code = min(total, 90)
        finally:
            os._exit(code)
    bound.close()
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.close(ready_r)
    try:
        with pytest.raises(PlaceError, match=f"another user's \\(uid {other_uid()}"):
            connect(squat.home, environ=squat.env)
    finally:
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0  # connected, and got not one byte


def sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])


def test_stop_signals_no_pid_a_squatted_place_names(squat: Squat, daemons: Daemons) -> None:
    victim = sleeper()
    try:
        info = squat.dir / "daemon.json"
        info.write_text(json.dumps({"pid": victim.pid, "token-file":
                                    str(squat.home / "daemon.token")}))
        squat.dir.chmod(0o755)
        daemons.env.update(XDG_RUNTIME_DIR=str(squat.runtime),
                           PASSEPARTOUT_HOME=str(squat.home))
        stopped = daemons.cli("stop")
        assert stopped.returncode == 1, stopped
        assert "others may enter" in stopped.stderr and "nothing was signalled" in (
            stopped.stderr)
        assert "Traceback" not in stopped.stderr
        # Private again, but the listener is no daemon: it never answers the hello.
        squat.dir.chmod(0o700)
        stopped = daemons.cli("stop", timeout=120)
        assert stopped.returncode == 1 and "nothing was signalled" in stopped.stderr
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


def test_stop_stops_the_daemon_it_proved_not_the_pid_its_file_names(
        daemons: Daemons) -> None:
    proc = daemons.start()
    victim = sleeper()
    try:
        info_file = daemons.rundir / "daemon.json"
        info = json.loads(info_file.read_text())
        info["pid"] = victim.pid  # our own file, rewritten: stop does not go by it
        info_file.write_text(json.dumps(info))
        stopped = daemons.cli("stop")
        assert stopped.returncode == 0, stopped
        assert f"pid {proc.pid}" in stopped.stdout
        assert proc.wait(30) == 0
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


def test_without_a_runtime_directory_a_long_state_path_works(
        daemons: Daemons, tmp_path: Path) -> None:
    """No XDG_RUNTIME_DIR and a state path too long for a socket: the place is still
    <home>/run (made 0700 and checked), reached through its descriptor; nothing goes
    to a shared /tmp place."""
    home = tmp_path / ("state-" + "x" * 90) / "passepartout"
    del daemons.env["XDG_RUNTIME_DIR"]
    daemons.env["PASSEPARTOUT_HOME"] = str(home)
    shared = Path(f"/tmp/passepartout-{os.geteuid()}")
    before = shared.exists()
    place = Place.find(home, daemons.env)
    assert place.dir == home / "run" and len(str(place.socket)) > 108
    proc = daemons.start()
    assert (os.stat(home / "run").st_mode & 0o777) == 0o700
    assert (home / "run" / "daemon.sock").exists()
    client = connect(home, environ=daemons.env)
    assert client is not None
    with client:
        assert client.call("ping") == "pong"
    status = daemons.cli("status")
    assert status.returncode == 0 and str(home / "run" / "daemon.sock") in status.stdout
    stopped = daemons.cli("stop")
    assert stopped.returncode == 0, stopped
    assert proc.wait(30) == 0
    assert shared.exists() == before
    wait_for(lambda: not place.held(), 10, "the lock to be let go")


def point(squat: Squat) -> Path:
    """The state directory's pointer naming the squat's place, as a daemon started in
    another environment writes it; the client's own environment has no place."""
    pointer = squat.home / "daemon.place"
    pointer.write_text(f"{squat.dir}\n")
    pointer.chmod(0o600)
    return pointer


def test_the_pointer_leads_a_client_with_no_runtime_directory_to_the_place(
        squat: Squat) -> None:
    """The layout of the pointer attacks below is one a client follows."""
    point(squat)
    assert Place.find(squat.home, {}).dir == squat.dir
    got: list[bytes] = []

    def serve() -> None:
        conn, _ = squat.listener.accept()
        with conn:
            conn.settimeout(5)
            got.append(conn.recv(1 << 16))

    thread = threading.Thread(target=serve)
    thread.start()
    with pytest.raises(DaemonError, match=r"closed the connection|no answer"):
        connect(squat.home, timeout=0.5, environ={})
    thread.join(10)
    assert got and TOKEN.encode() in got[0]


def refused_pointer(squat: Squat, match: str) -> None:
    with pytest.raises(PlaceError, match=match):
        connect(squat.home, environ={})
    assert squat.received() == b""


@pytest.mark.parametrize(("attack", "match"), [
    (lambda s, p: p.chmod(0o644), "others may read or write"),
    (lambda s, p: p.chmod(0o620), "others may read or write"),
    (lambda s, p: s.dir.chmod(0o755), "others may enter"),
    (lambda s, p: p.write_text("passepartout\n"), "names no absolute directory"),
], ids=["pointer-0644", "pointer-group-writable", "pointed-dir-0755", "relative"])
def test_a_forged_pointer_is_refused_and_nothing_is_sent(
        squat: Squat, attack: Callable[[Squat, Path], object], match: str) -> None:
    attack(squat, point(squat))
    refused_pointer(squat, match)


def test_a_symlinked_pointer_is_refused(squat: Squat, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    point(squat).rename(real)
    (squat.home / "daemon.place").symlink_to(real)
    refused_pointer(squat, "is a symlink")


def test_another_users_pointer_is_refused(squat: Squat) -> None:
    if os.geteuid() != 0:
        pytest.skip(ROOT_ONLY)
    uid = other_uid()
    os.chown(point(squat), uid, uid)
    refused_pointer(squat, "belongs to someone else")


def test_a_pointer_to_where_no_daemon_runs_is_ignored(squat: Squat) -> None:
    point(squat)
    os.close(squat.lock)
    squat.lock = os.open(os.devnull, os.O_RDONLY)  # the fixture closes it
    assert Place.find(squat.home, {}).dir == squat.home / "run"
    assert connect(squat.home, environ={}) is None
    assert squat.received() == b""
