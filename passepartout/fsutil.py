"""Atomic file writes: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
from pathlib import Path

log = logging.getLogger(__name__)


def atomic_write(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file, fsync and rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        elif path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class DeferredSave:
    """A file rewritten atomically from ``_render()``: at once (``save``), or ``delay``
    seconds after the first of a burst of changes (``save_soon``), so that whoever
    changes it does not wait for the disk.  After ``close`` nothing touches the file."""

    what = "state"  # for the error message

    def __init__(self, path: Path, *, delay: float = 0.5) -> None:
        self.path = Path(path)
        self.delay = delay
        self._save_lock = threading.Lock()  # one save at a time: the last is the newest
        self._timer: threading.Timer | None = None
        self._closed = False

    def _render(self) -> str:
        raise NotImplementedError

    def save(self) -> None:
        with self._save_lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            text = self._render()
            try:
                atomic_write(self.path, text)
            except OSError as err:
                log.error("cannot save the %s %s: %s", self.what, self.path, err)

    def save_soon(self) -> None:
        with self._save_lock:
            if self._timer is not None or self._closed:
                return
            self._timer = threading.Timer(self.delay, self._save_later)
            self._timer.daemon = True
            self._timer.start()

    def _save_later(self) -> None:
        with self._save_lock:
            if self._closed:
                return
        self.save()

    def close(self) -> None:
        """Save what is pending; no later save touches the file."""
        with self._save_lock:
            pending = self._timer is not None
        if pending:
            self.save()
        with self._save_lock:
            self._closed = True
