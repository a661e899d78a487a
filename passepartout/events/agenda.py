"""The agenda: what the memex's SCHEDULED and DEADLINE lines say is due, as org shows it.

For a day: entries scheduled that day (a repeated one on each of its occurrences), not
yet done ones scheduled before it (org's "Sched. 3x"), deadlines that day, overdue, or
within their warning period (org's 14 days unless the timestamp says ``-3d``).  Done
headings (DONE, CANCELLED, CANCELED) are left out, and so is every line of a subtree
tagged private (the reader :mod:`passepartout.org.private`).  Only regular
``.org`` files are read (no symlink is followed, hidden directories are skipped).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from passepartout.errors import PipelineError
from passepartout.org.private import DEFAULT_TAG, read_private
from passepartout.org.timestamps import OrgTimestamp, TimestampError, Unit, parse_timestamp
from passepartout.tools import Tool, make_tool

log = logging.getLogger(__name__)

DONE = frozenset({"DONE", "CANCELLED", "CANCELED"})
TODO_WORDS = frozenset({"TODO", "NEXT", "WAITING", "HOLD", "STARTED", *DONE})
WARNING_DAYS = 14  # org-deadline-warning-days
FILE_LIMIT = 5_000_000
_HEADING = re.compile(r"^(\*+)\s+(?:(?P<todo>[A-Z]+)\s+)?(?P<title>.*?)(?:\s+:[\w@#%:]+:)?\s*$")
_PLAN = re.compile(r"\b(SCHEDULED|DEADLINE):\s*(<[^>\n]+>)")


@dataclass(frozen=True)
class Entry:
    """One line of the agenda."""

    day: dt.date
    time: dt.time | None
    kind: str  # "Scheduled", "Deadline", "Sched. 3x", "In 5 d.", "3 d. ago"
    todo: str
    title: str
    file: str

    def line(self) -> str:
        clock = f"{self.time:%H:%M} " if self.time else ""
        todo = f"{self.todo} " if self.todo else ""
        return f"- {clock}{self.kind}: {todo}{self.title} ({self.file})"


def _occurs_on(stamp: OrgTimestamp, day: dt.date) -> bool:
    """Whether a (possibly repeated) timestamp falls on ``day``."""
    if stamp.date == day:
        return True
    if not stamp.repeats or day < stamp.date:
        return False
    assert stamp.repeater is not None
    n, unit = stamp.repeater.interval.value, stamp.repeater.interval.unit
    if unit is Unit.HOUR:
        return True
    if unit in (Unit.DAY, Unit.WEEK):
        step = n * (7 if unit is Unit.WEEK else 1)
        return (day - stamp.date).days % step == 0
    months = (day.year - stamp.date.year) * 12 + day.month - stamp.date.month
    step = n * (12 if unit is Unit.YEAR else 1)
    return day.day == stamp.date.day and months % step == 0


def _entries_for(kind: str, stamp: OrgTimestamp, todo: str, title: str, file: str,
                 day: dt.date, today: dt.date) -> list[Entry]:
    done = todo in DONE
    if done:
        return []
    if kind == "SCHEDULED":
        if _occurs_on(stamp, day):
            return [Entry(day, stamp.time, "Scheduled", todo, title, file)]
        if day == today and stamp.date < day and todo and not stamp.repeats:
            late = (day - stamp.date).days
            return [Entry(day, None, f"Sched. {late}x", todo, title, file)]
        return []
    if _occurs_on(stamp, day):
        return [Entry(day, stamp.time, "Deadline", todo, title, file)]
    if day != today:
        return []
    left = (stamp.date - day).days
    warn = WARNING_DAYS
    if stamp.warning is not None and stamp.warning.interval.unit is Unit.DAY:
        warn = stamp.warning.interval.value
    if left < 0 and todo and not stamp.repeats:
        return [Entry(day, None, f"{-left} d. ago", todo, title, file)]
    if 0 < left <= warn:
        return [Entry(day, None, f"In {left} d.", todo, title, file)]
    return []


def _org_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith(".org") and not name.startswith(".") and path.is_file() \
                    and not path.is_symlink():
                found.append(path)
    return found


def scan(root: Path, days: list[dt.date], today: dt.date,
         tag: str = DEFAULT_TAG, skip: Callable[[Path], bool] | None = None) -> list[Entry]:
    """The agenda entries of ``days`` in the org files under ``root`` (but ``skip``'s)."""
    out: list[Entry] = []
    for path in _org_files(root):
        if skip is not None and skip(path):
            continue
        try:
            if path.stat().st_size > FILE_LIMIT:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            log.debug("agenda: cannot read %s: %s", path, err)
            continue
        if "SCHEDULED:" not in text and "DEADLINE:" not in text:
            continue
        reading = read_private(text, tag)
        if reading.file_private:
            continue
        name = str(path.relative_to(root))
        todo, title = "", ""
        for line, hidden in zip(reading.lines, reading.private, strict=True):
            if hidden:
                continue
            if line.startswith("*") and (m := _HEADING.match(line)):
                word = m["todo"] or ""
                todo = word if word in TODO_WORDS else ""
                title = m["title"] if todo else f"{word} {m['title']}".strip()
                continue
            if not title:
                continue
            for kind, raw in _PLAN.findall(line):
                try:
                    stamp = parse_timestamp(raw)
                except TimestampError:
                    continue
                for day in days:
                    out.extend(_entries_for(kind, stamp, todo, title, name, day, today))
    return out


def agenda_text(root: Path, day: str = "today", *, today: dt.date | None = None,
                tag: str = DEFAULT_TAG, skip: Callable[[Path], bool] | None = None) -> str:
    """The agenda of ``day`` ("today", "tomorrow", "week" or YYYY-MM-DD) as org lines."""
    now = today or dt.date.today()
    key = day.strip().lower()
    if key in ("", "today"):
        days = [now]
    elif key == "tomorrow":
        days = [now + dt.timedelta(days=1)]
    elif key in ("week", "this week"):
        days = [now + dt.timedelta(days=i) for i in range(7)]
    else:
        try:
            days = [dt.date.fromisoformat(key)]
        except ValueError:
            raise ValueError(f"day must be today, tomorrow, week or a date YYYY-MM-DD, "
                             f"not {day!r}") from None
    entries = scan(root, days, now, tag, skip) if root.is_dir() else []
    blocks = []
    for d in days:
        lines = sorted((e for e in entries if e.day == d),
                       key=lambda e: (e.time is None, e.time or dt.time(), e.kind, e.title))
        head = f"{d:%A %Y-%m-%d}"
        body = "\n".join(e.line() for e in lines) if lines else "- nothing due"
        blocks.append(f"{head}\n{body}")
    return "\n\n".join(blocks)


def agenda_tool(memex: Callable[[], Path], tag: Callable[[], str] = lambda: DEFAULT_TAG) -> Tool:
    """The ``agenda`` tool over the memex ``memex()`` names, hiding ``tag()`` subtrees."""

    def agenda(day: str = "today") -> str:
        """What is scheduled or due in the org files of the memex (SCHEDULED and
        DEADLINE lines, as org's agenda shows them; private subtrees left out).

        Args:
            day: today, tomorrow, week (the next seven days) or a date YYYY-MM-DD
        """
        try:
            return agenda_text(memex(), day, tag=tag())
        except ValueError as err:
            raise PipelineError(str(err)) from None

    return make_tool(agenda, name="agenda")
