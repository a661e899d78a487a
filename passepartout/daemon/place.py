"""Where a running daemon can be found: its private directory, lock, socket and info.

The directory is ``$XDG_RUNTIME_DIR/passepartout`` (the session's private runtime
directory); without that variable, ``<PASSEPARTOUT_HOME>/run``, or
``/tmp/passepartout-UID`` when that path is too long for a socket.  Whichever it is,
it must be a real directory (no symlink) of ours with mode 0700, or nothing is put in
it: the socket's directory is what keeps other users off the socket.

- ``daemon.lock``: held (``flock``) by the running daemon for its whole life; the
  kernel lets go of it when the process dies, even by SIGKILL, so a stale file never
  blocks a start;
- ``daemon.sock``: the EPC socket (0600; the daemon also checks the peer's uid);
- ``daemon.json``: pid, socket, TCP port, token file, model, start time (0600).

The token for TCP clients is in the state directory (``<PASSEPARTOUT_HOME>/daemon.token``,
0600), where every tool and the sandbox already refuse to look.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passepartout.errors import PassepartoutError
from passepartout.fsutil import atomic_write

LOCK_TRIES = 10
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


class PlaceError(PassepartoutError):
    """The daemon's directory is missing, someone else's or open to others."""

    kind = "place-error"


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
    def find(cls, home: Path, environ: Mapping[str, str] | None = None) -> Place:
        """The place for the state directory ``home`` (nothing is created)."""
        env = os.environ if environ is None else environ
        runtime = env.get("XDG_RUNTIME_DIR", "").strip()
        if runtime and Path(runtime).is_absolute():
            where = Path(runtime) / "passepartout"
        else:
            where = Path(home) / "run"
            if len(str(where / "daemon.sock")) > MAX_SOCKET_PATH:
                where = Path(f"/tmp/passepartout-{os.geteuid()}")
        return cls(where, Path(home) / "daemon.token")

    def make(self) -> None:
        """Create the directory 0700 (its parent too), or check the one that is there."""
        try:
            self.dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with contextlib.suppress(FileExistsError):
                self.dir.mkdir(mode=0o700)
        except OSError as err:
            raise PlaceError(f"cannot create {self.dir}: {err.strerror}") from None
        self.check()
        if len(str(self.socket)) > MAX_SOCKET_PATH:
            raise PlaceError(f"the socket path {self.socket} is too long for a Unix socket; "
                             "set XDG_RUNTIME_DIR to a shorter directory")

    def check(self) -> None:
        """The directory is a real one, ours, and closed to everyone else."""
        try:
            info = os.lstat(self.dir)
        except OSError as err:
            raise PlaceError(f"cannot read {self.dir}: {err.strerror}") from None
        if not stat.S_ISDIR(info.st_mode):
            raise PlaceError(f"{self.dir} is not a directory (a symlink or a file)")
        if info.st_uid != os.geteuid():
            raise PlaceError(f"{self.dir} belongs to someone else (uid {info.st_uid})")
        if info.st_mode & 0o077:
            raise PlaceError(f"others may enter {self.dir}: chmod 700 it")

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
        try:
            fd = os.open(self.lock_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    # -- what the running daemon says about itself ------------------------------------

    def write_info(self, info: Mapping[str, Any]) -> None:
        atomic_write(self.info_file, json.dumps(dict(info), indent=1) + "\n", mode=0o600)

    def read_info(self) -> dict[str, Any] | None:
        """The running daemon's ``daemon.json`` (None when none runs or it is unreadable)."""
        if not self.held():
            return None
        try:
            raw = json.loads(self.info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return raw if isinstance(raw, dict) else None

    def clear(self) -> None:
        """Remove what a stopping daemon leaves (the lock file stays: it is harmless)."""
        for path in (self.socket, self.info_file, self.token_file):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
