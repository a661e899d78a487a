"""Which agent runs the automation of a state directory: one, never two.

Emacs's own server, the daemon and a standalone terminal chat may all run on one state
directory and memex.  Each may chat, but only the one holding ``automation.lock``
(an ``flock``, which the kernel releases when its holder dies, even by SIGKILL) runs
cron jobs and fires hooks; the others ask again at each heartbeat, so when the holder
stops, another takes over.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path

log = logging.getLogger(__name__)


class Leadership:
    """The automation lock of one state directory, taken when it is free."""

    def __init__(self, lock_file: Path) -> None:
        self.lock_file = lock_file
        self._fd: int | None = None
        self._lock = threading.Lock()
        self._said = False

    def held(self) -> bool:
        """True when this process runs the automation (taking the lock if it is free)."""
        with self._lock:
            if self._fd is not None:
                return True
            try:
                self.lock_file.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as err:
                log.warning("automation: cannot open %s (%s); running it here", self.lock_file,
                            err.strerror)
                return True  # an unwritable state directory fails elsewhere, loudly
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read(fd)
                os.close(fd)
                if not self._said:
                    log.warning("automation: cron jobs and hooks run in the agent holding %s"
                                "%s; this one only chats", self.lock_file,
                                f" (pid {holder})" if holder else "")
                    self._said = True
                return False
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._fd = fd
            if self._said:
                log.info("automation: taken over (%s)", self.lock_file)
            return True

    def release(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
