"""The cron headings of the background skills, written into the memex once.

Each skill's job is a heading in ``system/background.org`` (the first scanned
directory when ``system`` is not scanned) with ``:ID: passepartout-NAME``, a
``:CRON:`` timestamp, ``:TIER: reflex`` and ``:REFLEX: NAME``.  It is created at the
first start only: the names created are recorded in ``$PASSEPARTOUT_HOME/background/
jobs.json``, so a heading the person deleted, or whose ``:CRON:`` they removed, is
never made again (turning a job off is removing it), and a heading the person wrote
themselves with that ID is kept as it is.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.fsutil import atomic_write
from passepartout.org.edits import NewHeading, add_heading

log = logging.getLogger(__name__)

FILE_NAME = "background.org"
RECORD = "jobs.json"
HEADER = ("#+TITLE: Background jobs\n\n"
          "Passepartout's background skills.  Edit a :CRON: to reschedule a job; delete\n"
          "the heading or its :CRON: to turn it off (it is not made again).\n\n")
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_ID_LINE = re.compile(r"^[ \t]*:ID:[ \t]+(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class JobSpec:
    """One background skill's cron heading."""

    name: str
    title: str
    at: dt.time  # the first run's time of day
    repeat: str  # org repeater, "+1d"
    body: str
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def node_id(self) -> str:
        return f"passepartout-{self.name}"

    def stamp(self, now: dt.datetime) -> str:
        """The :CRON: timestamp: the next ``at`` after ``now``, repeating."""
        first = now.replace(hour=self.at.hour, minute=self.at.minute, second=0,
                            microsecond=0)
        if first <= now:
            first += dt.timedelta(days=1)
        return f"<{first:%Y-%m-%d} {DAYS[first.weekday()]} {first:%H:%M} {self.repeat}>"

    def heading(self, now: dt.datetime) -> NewHeading:
        props = {"ID": self.node_id, "CRON": self.stamp(now), "TIER": "reflex",
                 "REFLEX": self.name, **self.properties}
        return NewHeading(title=self.title, properties=props,
                          body=textwrap.fill(self.body, 80, break_on_hyphens=False))


def jobs_file(memex: Path, scan_dirs: list[str] | tuple[str, ...]) -> Path:
    dirs = [d for d in scan_dirs if d] or ["system"]
    where = "system" if "system" in dirs else dirs[0]
    return (memex / where / FILE_NAME) if where != "." else memex / FILE_NAME


class JobHeadings:
    """Creates the cron headings once, and remembers which it created."""

    def __init__(self, state_dir: Path, path: Path) -> None:
        self.record_path = state_dir / RECORD
        self.path = path

    def _record(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.record_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:
            # Unreadable: assume every job was made, rather than duplicate one.
            log.error("background: %s is unreadable (%s); no job heading is made (delete "
                      "it to have the missing ones made again)", self.record_path, err)
            return {"*": {}}
        return data if isinstance(data, dict) else {"*": {}}

    def ensure(self, spec: JobSpec, now: dt.datetime,
               approve: Callable[[str], None] | None = None) -> str:
        """Make ``spec``'s heading unless it was made before; what happened, in words.
        ``approve`` is given the file's new text before it is written (the agent's own
        job is approved as it makes it)."""
        record = self._record()
        if spec.name in record or "*" in record:
            return "made before (kept as the person left it)"
        text = self._read()
        if text is not None and spec.node_id in _ID_LINE.findall(text):
            outcome = "already in the memex"
        else:
            base = text if text is not None else HEADER
            self.path.parent.mkdir(parents=True, exist_ok=True)
            after = add_heading(base, None, spec.heading(now), 1)
            if approve is not None:
                approve(after)
            atomic_write(self.path, after)
            outcome = f"made in {self.path}"
        record[spec.name] = {"made": now.isoformat(timespec="seconds"), "file": str(self.path)}
        self.record_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.record_path, json.dumps(record, indent=1, sort_keys=True))
        log.info("background job %s: %s", spec.name, outcome)
        return outcome

    def _read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
