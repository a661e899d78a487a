"""Where a running daemon can be found: its private directory, lock, socket and info.

The directory is ``$XDG_RUNTIME_DIR/passepartout`` (the session's private runtime
directory); without that variable, ``<PASSEPARTOUT_HOME>/run``, in the state directory,
whatever its length: a socket path too long for ``sun_path`` is bound and reached
through the directory's descriptor (``/proc/self/fd/N/daemon.sock``), never moved to a
shared place.  Whichever it is, it must be a real directory (no symlink) of ours with
mode 0700, or nothing is put in it and nothing in it is believed: the socket's directory
is what keeps other users off the socket, and a client that finds a directory, a
``daemon.json`` or a token file someone else could have written sends nothing.

- ``daemon.lock``: held (``flock``) by the running daemon for its whole life; the
  kernel lets go of it when the process dies, even by SIGKILL, so a stale file never
  blocks a start;
- ``daemon.sock``: the EPC socket (0600; the daemon checks the peer's uid, and each
  client checks the daemon's: ``SO_PEERCRED`` both ways);
- ``daemon.json``: pid, socket, TCP port, token file, model, start time (0600).

The token for TCP clients is in the state directory (``<PASSEPARTOUT_HOME>/daemon.token``,
0600), where every tool and the sandbox already refuse to look.

One daemon per state directory, whatever environment started it: the daemon also holds
``<PASSEPARTOUT_HOME>/daemon.lock`` for its life (a second start, with another
``XDG_RUNTIME_DIR`` or none, finds it taken and refuses), and writes where its place is
to ``<PASSEPARTOUT_HOME>/daemon.place`` (0600).  A client whose environment names a place
where no daemon runs (one started with only HOME, PATH and USER) follows that pointer,
read with the same checks as ``daemon.json`` (a regular file of ours, private, no
symlink), to a place that is then proved as any other: directory, files, the socket's
peer.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import stat
import struct
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passepartout.errors import DaemonError
from passepartout.fsutil import atomic_write

LOCK_TRIES = 10
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS
MAX_INFO = 64 * 1024
MAX_TOKEN = 1024
TOKEN_NAME = "daemon.token"
HOME_LOCK_NAME = "daemon.lock"
POINTER_NAME = "daemon.place"
MAX_POINTER = 4096


class PlaceError(DaemonError):
    """The daemon's directory, or a file in it, is missing, someone else's or open to
    others (nothing is sent to a daemon found there)."""

    kind = "place-error"

    def __init__(self, message: str) -> None:
        super().__init__(message, "place-error")


@dataclass(frozen=True)
class Place:
    """The daemon's files, whether or not one runs."""

    dir: Path
    token_file: Path

    @property
    def lock_file(self) -> Path:
        return self.dir / "daemon.lock"

    @property
    def socket(self) -> Path:
        return self.dir / "daemon.sock"

    @property
    def info_file(self) -> Path:
        return self.dir / "daemon.json"

    @classmethod
    def own(cls, home: Path, environ: Mapping[str, str] | None = None) -> Place:
        """The place a daemon started in ``environ`` uses for the state directory
        ``home`` (nothing is created)."""
        env = os.environ if environ is None else environ
        runtime = env.get("XDG_RUNTIME_DIR", "").strip()
        if runtime and Path(runtime).is_absolute():
            where = Path(runtime) / "passepartout"
        else:
            where = Path(home) / "run"
        return cls(where, Path(home) / TOKEN_NAME)

    @classmethod
    def find(cls, home: Path, environ: Mapping[str, str] | None = None) -> Place:
        """Where the daemon of ``home`` is: the environment's own place, or, when no
        daemon holds that one, the place the running daemon's pointer names (nothing is
        created).  A pointer that is not a private file of ours is refused
        (:class:`PlaceError`); one that names no running daemon is ignored."""
        place = cls.own(home, environ)
        if place.held():
            return place
        pointed = read_pointer(Path(home))
        if pointed is None or pointed == place.dir:
            return place
        other = cls(pointed, place.token_file)
        return other if other.held() else place

    def make(self) -> None:
        """Create the directory 0700 (its parent too), or check the one that is there."""
        try:
            self.dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with contextlib.suppress(FileExistsError):
                self.dir.mkdir(mode=0o700)
        except OSError as err:
            raise PlaceError(f"cannot create {self.dir}: {err.strerror}") from None
        self.check()

    def check(self) -> None:
        """The directory is a real one, ours, and closed to everyone else."""
        fd = self.open_dir()
        if fd is None:
            raise PlaceError(f"cannot read {self.dir}: {os.strerror(errno.ENOENT)}")
        os.close(fd)

    def open_dir(self) -> int | None:
        """A descriptor (``O_PATH``) of the directory once it is proved a real directory
        of ours closed to others; None when there is none.  Everything else in the place
        is opened relative to it, so what was checked is what is used."""
        try:
            fd = os.open(self.dir, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as err:
            if err.errno in (errno.ENOTDIR, errno.ELOOP):
                raise PlaceError(f"{self.dir} is not a directory (a symlink or a file); "
                                 "nothing was sent to a daemon there") from None
            raise PlaceError(f"cannot read {self.dir}: {err.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISDIR(info.st_mode):
                raise PlaceError(f"{self.dir} is not a directory (a symlink or a file)")
            _prove_private(info, self.dir, "enter", "700")
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def opened(self) -> Iterator[int | None]:
        """:meth:`open_dir` for a ``with`` block (the descriptor closed after it)."""
        fd = self.open_dir()
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)

    def address(self, fd: int) -> str:
        """Where to bind or reach the socket: its path, or through ``fd`` (the proved
        directory) when the path is too long for a Unix socket."""
        path = str(self.socket)
        if len(os.fsencode(path)) <= MAX_SOCKET_PATH:
            return path
        return f"/proc/self/fd/{fd}/{self.socket.name}"

    # -- the lock -------------------------------------------------------------------------

    def lock(self) -> int | None:
        """Take the lock: its descriptor (keep it open), or None when a daemon holds it."""
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            # A client's look (held) takes the lock shared for an instant: try again briefly.
            for _ in range(LOCK_TRIES):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return fd
                except BlockingIOError:
                    time.sleep(0.02)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
        return None

    def held(self) -> bool:
        """Whether a daemon holds the lock now (it runs, or is still stopping)."""
        with self.opened() as dirfd:
            return dirfd is not None and _held(dirfd, self.lock_file.name)

    # -- what the running daemon says about itself ------------------------------------

    def write_info(self, info: Mapping[str, Any]) -> None:
        atomic_write(self.info_file, json.dumps(dict(info), indent=1) + "\n", mode=0o600)

    def read_info(self, dirfd: int | None = None, *,
                  running: bool = True) -> dict[str, Any] | None:
        """The running daemon's ``daemon.json`` (None when none runs or it is unreadable),
        read only from the proved directory and only when the file is ours and closed;
        with ``running=False``, also the file a killed daemon left."""
        if dirfd is None:
            with self.opened() as fd:
                return None if fd is None else self.read_info(fd, running=running)
        if running and not _held(dirfd, self.lock_file.name):
            return None
        data = _read_private(self.info_file.name, MAX_INFO, dir_fd=dirfd,
                             where=self.info_file)
        if data is None:
            return None
        try:
            raw = json.loads(data.decode("utf-8"))
        except ValueError:
            return None
        return raw if isinstance(raw, dict) else None

    def clear(self) -> None:
        """Remove what a stopping daemon leaves (the lock file stays: it is harmless)."""
        for path in (self.socket, self.info_file, self.token_file):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


class HomeLock:
    """The lock of the state directory itself (``<home>/daemon.lock``), held by the
    daemon for its life whatever its place: two daemons never share a state directory,
    even when their environments put their places apart."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)

    @property
    def file(self) -> Path:
        return self.home / HOME_LOCK_NAME

    def take(self) -> int | None:
        """Its descriptor (keep it open), or None when a daemon holds it."""
        fd = os.open(self.file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def held(self) -> bool:
        try:
            fd = os.open(self.home, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            return _held(fd, HOME_LOCK_NAME)
        finally:
            os.close(fd)


def write_pointer(home: Path, place: Place) -> None:
    """Say in the state directory where the daemon's place is (0600)."""
    atomic_write(Path(home) / POINTER_NAME, str(place.dir) + "\n", mode=0o600)


def clear_pointer(home: Path, place: Place) -> None:
    """Remove the pointer if it still names ``place`` (a stopping daemon's)."""
    with contextlib.suppress(PlaceError, OSError):
        if read_pointer(Path(home)) == place.dir:
            (Path(home) / POINTER_NAME).unlink()


def read_pointer(home: Path) -> Path | None:
    """The directory ``<home>/daemon.place`` names: None when there is none; a file
    that is not a regular one of ours closed to others, a symlink, or that names no
    absolute path is refused (:class:`PlaceError`)."""
    where = Path(home) / POINTER_NAME
    data = _read_private(str(where), MAX_POINTER, dir_fd=None, where=where)
    if data is None:
        return None
    text = data.decode("utf-8", "replace").split("\n", 1)[0].strip()
    if not text or not os.path.isabs(text) or "\0" in text:
        raise PlaceError(f"{where} names no absolute directory; nothing was sent to a daemon")
    return Path(text)


def read_token(path: Path) -> str:
    """The token in ``path``: a regular file named ``daemon.token``, ours and closed to
    others, no symlink (anything else is refused: it is no token of our daemon's)."""
    if path.name != TOKEN_NAME:
        raise PlaceError(f"daemon.json names {path} as the token file; only a "
                         f"{TOKEN_NAME} is one (nothing was sent)")
    data = _read_private(str(path), MAX_TOKEN + 2, dir_fd=None, where=path)
    if data is None:
        raise PlaceError(f"cannot read the daemon's token: {path} is missing")
    token = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if not token:
        raise PlaceError(f"the daemon's token file {path} is empty")
    return token


def peer_credentials(sock: socket.socket) -> tuple[int, int] | None:
    """(pid, uid) of the process at the other end of a Unix socket; None where the
    system has no ``SO_PEERCRED``."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option,
                                                         struct.calcsize("3i")))
    return int(pid), int(uid)


def _held(dirfd: int, name: str) -> bool:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dirfd)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _prove_private(info: os.stat_result, where: Path, access: str, mode: str) -> None:
    """Raise unless what ``info`` describes is ours and closed to everyone else."""
    if info.st_uid != os.geteuid():
        raise PlaceError(f"{where} belongs to someone else (uid {info.st_uid}); "
                         "nothing was sent to a daemon there")
    if info.st_mode & 0o077:
        raise PlaceError(f"others may {access} {where}: chmod {mode} it "
                         "(nothing was sent to a daemon there)")


def _read_private(name: str, limit: int, *, dir_fd: int | None, where: Path) -> bytes | None:
    """The bytes of a regular file of ours that no one else may read or write, opened
    without following a symlink; None when it does not exist."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise PlaceError(f"{where} is a symlink; nothing was sent to a daemon") from None
        raise PlaceError(f"cannot read {where}: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PlaceError(f"{where} is not a regular file; nothing was sent to a daemon")
        _prove_private(info, where, "read or write", "600")
        chunks = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise PlaceError(f"{where} is too large to be the daemon's")
    return b"".join(chunks)
