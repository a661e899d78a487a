"""A small memex of org files for the event orchestrator's tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

UTC = ZoneInfo("UTC")

WEEKLY = """#+TITLE: Reports
#+TODO: NEXT WAIT | DONE
* Work
** NEXT [#A] Weekly summary                                        :work:
:PROPERTIES:
:CRON: <2026-05-04 Mon 09:00 +1w>
:END:
Summarize my notes of the week.
** Integrity
:PROPERTIES:
:ID: integrity-1
:cron: <2026-05-03 Sun 10:00 +1d>
:TIER: reflex
:REFLEX: check-integrity
:END:
Check the store.
* Plans
** Architecture
:PROPERTIES:
:ID: arch-1
:CRON: <2026-06-01 Mon 08:00>
:END:
Plan the project architecture for the next quarter.
"""

GUARDED = """* Inbox
* Guarded notes
:PROPERTIES:
:ID: guard-1
:HOOK: verify-integrity  notify-me
:END:
Keep these notes intact.
* A heading that only mentions it
Text with a line
:CRON: <2026-05-04 Mon> that is body, not a drawer
"""

BROKEN_TIMESTAMP = """* Bad job
:PROPERTIES:
:CRON: <2026-13-45 Xyz +1w>
:END:
* Good job
:PROPERTIES:
:ID: good-1
:CRON: <2026-05-05 Tue 07:30 ++1d>
:END:
Find the list of open tasks.
"""


def build(root: Path) -> Path:
    """Write the fixture memex under ``root`` and return its directory."""
    memex = root / "memex"
    (memex / "projects" / "deep").mkdir(parents=True, exist_ok=True)
    (memex / "system").mkdir(parents=True, exist_ok=True)
    (memex / "outside").mkdir(parents=True, exist_ok=True)
    (memex / "projects" / "reports.org").write_text(WEEKLY, encoding="utf-8")
    (memex / "projects" / "deep" / "guarded.org").write_text(GUARDED, encoding="utf-8")
    (memex / "system" / "broken.org").write_text(BROKEN_TIMESTAMP, encoding="utf-8")
    (memex / "system" / "latin1.org").write_bytes(
        b"* Caf\xe9\n:PROPERTIES:\n:CRON: <2026-05-04 Mon>\n:END:\n")
    (memex / "system" / "plain.org").write_text("* Nothing here\nJust text.\n" * 50)
    (memex / "system" / ".#reports.org").write_text("lock file")
    (memex / "outside" / "ignored.org").write_text(
        "* Not scanned\n:PROPERTIES:\n:CRON: <2026-05-04 Mon>\n:END:\n")
    return memex


def at(text: str) -> dt.datetime:
    """A UTC moment from ``YYYY-MM-DD HH:MM``."""
    return dt.datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, start: str) -> None:
        self.now = at(start)

    def __call__(self) -> dt.datetime:
        return self.now

    def set(self, text: str) -> None:
        self.now = at(text)
