"""Reporting what the security layer refused or changed on its own, where the person
looks: ``events.org`` under the state directory (and the log).

A forged Flight Plan, a grant without the agent's seal, a ``policy.toml`` changed and
not yet accepted: each is reported once per process (the same unsealed grant is seen
again on every reload of the rules; it is reported the first time).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from passepartout.org.eventlog import Entry, EventLog

log = logging.getLogger(__name__)

EVENTS_FILE = "events.org"


class Alarms:
    """Writes security reports into ``events.org``."""

    def __init__(self, events_file: Path) -> None:
        self.events = EventLog(events_file)
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def in_state(cls, state_dir: Path) -> Alarms:
        return cls(Path(state_dir) / EVENTS_FILE)

    def report(self, title: str, text: str = "", *, key: str | None = None) -> bool:
        """Record a report (once per ``key`` when one is given); True when written."""
        if key is not None:
            with self._lock:
                if key in self._seen:
                    return False
                self._seen.add(key)
        self.events.record(Entry("security", title, text, level="warning"))
        return True
