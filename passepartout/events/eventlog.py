"""Where the results of hooks and cron jobs become visible: the log, a notification in
Emacs (when it is connected), and an entry in an org file under PASSEPARTOUT_HOME.

The org file is written whole through a temporary file and a rename, so a reader (or
a crash) never sees half an entry; entries past the size cap drop the oldest first.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from passepartout.fsutil import atomic_write
from passepartout.org.escape import body, drawer
from passepartout.org.escape import org_line as one_line
from passepartout.org.heading import heading_line

log = logging.getLogger(__name__)

Notifier = Callable[[str, str], None]  # (level, text)

HEADER = "#+TITLE: Passepartout events\n#+STARTUP: overview\n\n"
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Entry:
    """One thing that happened: a hook fired, a cron job ran or failed."""

    kind: str  # hook | cron
    title: str
    text: str = ""
    level: str = "info"  # info | warning | error
    node_id: str | None = None
    file: str | None = None

    def to_org(self, when: dt.datetime) -> str:
        stamp = when.strftime("[%Y-%m-%d %a %H:%M:%S]")
        # Titles and texts come from jobs, hooks and tools: nothing in them is structure.
        title = f"{stamp} {one_line(self.kind, 40)}: {one_line(self.title, 400)}"
        lines = [heading_line(1, title)]
        props = {k: v for k, v in
                 (("LEVEL", self.level), ("NODE", self.node_id), ("FILE", self.file)) if v}
        if props:
            lines.append(drawer(props).rstrip("\n"))
        if self.text and self.text.strip():
            lines.append(body(self.text.rstrip()))
        return "\n".join(lines) + "\n"


def _one_line(text: str) -> str:
    return one_line(text, 10_000)


_LOCKS: dict[Path, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(path: Path) -> threading.Lock:
    """One lock per file, shared by every EventLog of this process that writes it (the
    security layer reports into the same events.org as the orchestrator)."""
    key = Path(os.path.abspath(path))
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


class EventLog:
    """Records entries in the log, the org file and (if set) Emacs."""

    def __init__(self, path: Path, *, notify: Notifier | None = None,
                 clock: Callable[[], dt.datetime] | None = None) -> None:
        self.path = Path(path)
        self.notify = notify
        self._clock = clock or (lambda: dt.datetime.now().astimezone())
        self._lock = _lock_for(self.path)

    def record(self, entry: Entry) -> None:
        level = {"warning": logging.WARNING, "error": logging.ERROR}.get(entry.level, logging.INFO)
        log.log(level, "%s: %s%s", entry.kind, entry.title,
                f": {_one_line(entry.text)[:300]}" if entry.text else "")
        try:
            self._append(entry.to_org(self._clock()))
        except OSError as err:
            log.error("cannot write the event log %s: %s", self.path, err)
        if self.notify is not None:
            summary = entry.title if not entry.text else f"{entry.title}: {_one_line(entry.text)}"
            try:
                self.notify(entry.level, f"{entry.kind}: {summary}"[:500])
            except Exception as err:  # Emacs gone: the log and the file still have it
                log.warning("notification failed: %s", err)

    def _append(self, text: str) -> None:
        with self._lock:
            try:
                old = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                old = HEADER
            content = old + text
            if len(content) > MAX_BYTES:
                content = HEADER + _drop_oldest(content[len(HEADER):], MAX_BYTES // 2)
            atomic_write(self.path, content)


def _drop_oldest(body: str, keep: int) -> str:
    tail = body[-keep:]
    start = tail.find("\n* ")
    return tail[start + 1:] if start >= 0 else tail
