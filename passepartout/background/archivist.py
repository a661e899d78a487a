"""The archivist: DONE subtrees closed longer ago than a set age go to the file's
``_archive`` (org's ``org-archive-subtree``, through the ``org-archive`` tool).

A candidate is a heading in a done state (the file's ``#+TODO`` done keywords, else
DONE) with a ``CLOSED:`` date older than the age (``:ARCHIVE_AFTER:`` on the job's
heading, in days, default 30), outside ``system/``, not tagged ``ARCHIVE``, and whose
subtree holds no private text (``@personal`` subtrees are never touched).  Only the
outermost of nested candidates is proposed.  A heading without ``CLOSED:`` has no age
and stays.  Each candidate is proposed once (``background/archivist.json``); what the
person refuses is not asked again.  Nothing found, nothing proposed: no token, no write.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from dataclasses import dataclass

from passepartout.background.jobs import JobSpec
from passepartout.background.memex import OrgText, read_memex
from passepartout.background.service import Background
from passepartout.events.jobs import Job

log = logging.getLogger(__name__)

NAME = "archivist"
DEFAULT_DAYS = 30
PER_RUN = 50  # proposals a run makes at most (the rest wait for the next run)
KEPT = 2000  # proposals remembered
CLOSED = re.compile(r"^[ \t]*(?:(?:SCHEDULED|DEADLINE):[ \t]*\S.*?[ \t]+)?CLOSED:[ \t]*"
                    r"\[(\d{4}-\d{2}-\d{2})(?:[^\]]*?(\d{1,2}:\d{2}))?[^\]]*\]")

SPEC = JobSpec(
    name=NAME,
    title="Archivist: archive old DONE subtrees",
    at=dt.time(5, 0),
    repeat="+1w",
    body=("Proposes to archive (org's FILE_archive) each DONE subtree closed more than "
          ":ARCHIVE_AFTER: days ago.  No model is used."),
    properties={"ARCHIVE_AFTER": str(DEFAULT_DAYS)},
)


@dataclass(frozen=True)
class Candidate:
    file: str
    address: str
    title: str
    closed: dt.datetime

    @property
    def key(self) -> str:
        raw = f"{self.file}\0{self.address}\0{self.closed.isoformat()}"
        return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def closed_at(org: OrgText, line: int, tz: dt.tzinfo | None) -> dt.datetime | None:
    """The ``CLOSED:`` moment of the heading at ``line`` (its planning line)."""
    if line + 1 >= len(org.outline.lines):
        return None
    match = CLOSED.match(org.outline.lines[line + 1])
    if not match:
        return None
    try:
        day = dt.date.fromisoformat(match.group(1))
        hour, minute = map(int, (match.group(2) or "0:00").split(":"))
        return dt.datetime.combine(day, dt.time(hour, minute), tz)
    except ValueError:
        return None


def candidates(orgs: list[OrgText], now: dt.datetime, age: dt.timedelta) -> list[Candidate]:
    found: list[Candidate] = []
    for org in orgs:
        outline = org.outline
        taken_until = -1  # the end of the last candidate's subtree
        for heading in outline.headings:
            if heading.line < taken_until or heading.keyword not in outline.done:
                continue
            if "ARCHIVE" in heading.tags or "ARCHIVE" in outline.inherited_tags(heading):
                continue
            closed = closed_at(org, heading.line, now.tzinfo)
            if closed is None or now - closed < age or org.subtree_private(heading):
                continue
            address = org.address(heading)
            if address is None:
                log.info("archivist: %r in %s has no unique name; left", heading.title,
                         org.path)
                continue
            found.append(Candidate(str(org.path), address, heading.title, closed))
            taken_until = outline.subtree_end(heading)
    return found


class Archivist:
    """The reflex of the archivist's cron job."""

    def __init__(self, background: Background) -> None:
        self.bg = background

    def age(self, job: Job) -> dt.timedelta:
        text = self.bg.setting(job, "ARCHIVE_AFTER", str(DEFAULT_DAYS)).rstrip("dD ")
        try:
            days = float(text)
        except ValueError:
            raise ValueError(f":ARCHIVE_AFTER: is a number of days, not {text!r}") from None
        if days < 0:
            raise ValueError(":ARCHIVE_AFTER: cannot be negative")
        return dt.timedelta(days=days)

    def __call__(self, job: Job) -> str:
        age = self.age(job)
        now = self.bg.now()
        state = self.bg.load(NAME)
        proposed: list[str] = list(state.get("proposed") or [])
        fresh = [c for c in candidates(read_memex(self.bg.memex, self.bg.private_tag), now, age)
                 if c.key not in proposed]
        if not fresh:
            return "nothing to archive"
        made = 0
        for cand in fresh[:PER_RUN]:
            if self.bg.propose(NAME, job, "org-archive",
                               {"file": cand.file, "heading": cand.address}):
                proposed.append(cand.key)
                made += 1
        self.bg.save(NAME, {"proposed": proposed[-KEPT:]})
        rest = len(fresh) - made
        return (f"proposed archiving {made} DONE subtree(s)"
                + (f"; {rest} left for the next run" if rest else ""))
