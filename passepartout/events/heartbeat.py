"""The heartbeat bus: several handlers (cron, memory autosave, flight plans ...) run on
one tick of the stimulus heartbeat.

A handler may ask to run only every so many seconds (autosave every
MEMORY_AUTO_SAVE_INTERVAL); one that raises is reported and the others still run.
The tick itself proposes no action, so it never reaches a model: a tick with nothing
due costs nothing.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tick:
    """One heartbeat: when, and how many came before."""

    now: dt.datetime
    count: int


HeartbeatHandler = Callable[[Tick], Any]


@dataclass
class _Entry:
    name: str
    fn: HeartbeatHandler
    every: float | None
    last: float | None = None  # monotonic time of the last run
    runs: int = 0
    errors: int = 0
    last_error: str | None = None


@dataclass
class TickReport:
    ran: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


class HeartbeatBus:
    """Handlers run in registration order on every tick (or every ``every`` seconds)."""

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._entries: list[_Entry] = []
        self._lock = threading.Lock()
        self._monotonic = monotonic
        self.ticks = 0

    def register(self, fn: HeartbeatHandler, *, name: str | None = None,
                 every: float | None = None) -> None:
        """Run ``fn(tick)`` on each heartbeat, or at most once per ``every`` seconds."""
        label = name or str(getattr(fn, "__name__", None) or repr(fn))
        if every is not None and every <= 0:
            raise ValueError(f"heartbeat handler {label}: every must be positive, not {every}")
        with self._lock:
            self._entries = [e for e in self._entries if e.name != label]
            self._entries.append(_Entry(label, fn, every, last=self._monotonic()))

    def unregister(self, name: str) -> None:
        with self._lock:
            self._entries = [e for e in self._entries if e.name != name]

    def handlers(self) -> list[dict[str, Any]]:
        with self._lock:
            return [{"name": e.name, "every": e.every, "runs": e.runs, "errors": e.errors,
                     "last-error": e.last_error} for e in self._entries]

    def tick(self, now: dt.datetime | None = None) -> TickReport:
        """Run every handler that is due on this tick."""
        moment = now or dt.datetime.now().astimezone()
        with self._lock:
            self.ticks += 1
            tick = Tick(moment, self.ticks)
            entries = list(self._entries)
        report = TickReport()
        clock = self._monotonic()
        for entry in entries:
            if entry.every is not None and entry.last is not None \
                    and clock - entry.last < entry.every:
                continue
            entry.last = clock
            try:
                entry.fn(tick)
                entry.runs += 1
                report.ran.append(entry.name)
            except Exception as err:
                entry.errors += 1
                entry.last_error = f"{type(err).__name__}: {err}"
                report.failed[entry.name] = entry.last_error
                log.exception("heartbeat handler %s failed", entry.name)
        return report
