"""Watching the memex for org files created, modified, deleted or moved (watchdog).

Editors save in bursts (a temporary file, a rename, a metadata change), so events
are debounced per path: the callback sees each path once, after it has been quiet
for ``delay`` seconds, with whether it still exists.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from passepartout.events.scan import worth_scanning as is_org_file

log = logging.getLogger(__name__)

Callback = Callable[[Path], object]


class _Handler(FileSystemEventHandler):
    def __init__(self, touch: Callable[[str], None], within: Path | None = None) -> None:
        self._touch = touch
        self._within = within  # watching a parent: only what is under this directory

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [event.src_path, getattr(event, "dest_path", "")]
        for path in paths:
            text = path.decode() if isinstance(path, bytes) else str(path)
            if not text or not (event.is_directory or is_org_file(text)):
                continue
            if self._within is None or Path(text).is_relative_to(self._within):
                self._touch(text)


class MemexWatcher:
    """Calls ``callback(path)`` for each org file that changed under ``dirs``."""

    def __init__(self, dirs: Iterable[Path], callback: Callback, *, delay: float = 0.2) -> None:
        self.dirs = [Path(d) for d in dirs]
        self.callback = callback
        self.delay = delay
        self._pending: dict[str, float] = {}
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._observer: Observer | None = None  # type: ignore[valid-type]
        self._worker: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._observer is not None

    def start(self) -> list[Path]:
        """Start watching the directories that exist; returns them.  One that does not
        exist yet but whose parent does is watched through the parent, so the files of
        a scan directory made after the start (a new memex's projects/) are seen."""
        watched = [d for d in self.dirs if d.is_dir()]
        later = [d for d in self.dirs if d not in watched and d.parent.is_dir()]
        for missing in set(self.dirs) - set(watched) - set(later):
            log.info("memex watcher: %s does not exist, not watched", missing)
        if not watched and not later:
            return []
        observer = Observer()
        for directory in watched:
            observer.schedule(_Handler(self._touch), str(directory), recursive=True)
        for directory in later:
            observer.schedule(_Handler(self._touch, within=directory), str(directory.parent),
                              recursive=True)
            log.info("memex watcher: %s does not exist yet, watched from its parent", directory)
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._worker = threading.Thread(target=self._drain, name="memex-watcher", daemon=True)
        self._worker.start()
        log.info("memex watcher: watching %s", ", ".join(map(str, watched)))
        return watched

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        if self._worker is not None:
            self._worker.join(timeout=5)
            self._worker = None

    def _touch(self, path: str) -> None:
        with self._lock:
            self._pending[path] = time.monotonic() + self.delay
            self._lock.notify_all()

    def _drain(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                if not self._pending:
                    self._lock.wait(1.0)
                    continue
                now = time.monotonic()
                ready = [p for p, t in self._pending.items() if t <= now]
                if not ready:
                    self._lock.wait(min(self._pending.values()) - now)
                    continue
                for path in ready:
                    del self._pending[path]
            for path in sorted(ready):
                try:
                    self.callback(Path(path))
                except Exception:  # one bad file must not stop the watcher
                    log.exception("memex watcher: handling %s failed", path)
