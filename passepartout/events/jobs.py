"""The records of the event orchestrator: an org node that carries a ``:CRON:`` or a
``:HOOK:`` property, the cron job made of it, and what a file scan found.

A node's identity is its ``:ID:`` property when it has one, else an id derived from
its file and outline path, so the same heading keeps its id across edits of its body
(and across restarts, which is what lets the cron state survive them).
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.org.timestamps import OrgTimestamp


class Tier(enum.StrEnum):
    """How much thinking a job needs (seed 000): none, a light model, the full one."""

    REFLEX = "reflex"
    COGNITION = "cognition"
    REASONING = "reasoning"

    @classmethod
    def parse(cls, text: str) -> Tier:
        """``reflex``, ``:cognition``, ``Reasoning`` ... as a tier; ValueError otherwise."""
        cleaned = text.strip().lstrip(":").lower()
        try:
            return cls(cleaned)
        except ValueError:
            names = ", ".join(t.value for t in cls)
            raise ValueError(f"tier {text!r} is not one of {names}") from None


def derive_id(file: str | Path, outline: list[str]) -> str:
    """A stable id for a heading without ``:ID:``: its file and outline path."""
    key = str(file) + "\0" + "\0".join(title.strip() for title in outline)
    return "h-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class OrgNode:
    """One heading that carries ``:CRON:`` or ``:HOOK:`` in its property drawer."""

    id: str
    file: str
    heading: str
    outline: tuple[str, ...]  # the ancestors' titles, outermost first
    level: int
    body: str
    properties: dict[str, str]  # keys upper-cased, as org reads them case-insensitively
    text: str  # the node's own text: heading line through the end of its body

    @property
    def cron(self) -> str | None:
        return self.properties.get("CRON")

    @property
    def hooks(self) -> tuple[str, ...]:
        """The hook names of ``:HOOK: a b``, lower-cased, in order."""
        return tuple(dict.fromkeys(h.lower() for h in self.properties.get("HOOK", "").split()))

    @property
    def prompt(self) -> str:
        """A job's prompt: its heading and body."""
        return f"{self.heading}\n\n{self.body}".strip()


@dataclass
class Job:
    """A cron job: an org node with a ``:CRON:`` timestamp, and when it runs."""

    id: str
    heading: str
    file: str
    prompt: str
    tier: Tier
    timestamp: OrgTimestamp  # as written in the file
    reflex: str | None = None  # the ``:REFLEX:`` function's name
    current: OrgTimestamp | None = None  # the timestamp moved on by the runs so far
    next_run: dt.datetime | None = None
    last_run: dt.datetime | None = None
    last_result: str | None = None
    running: bool = False
    run_started: dt.datetime | None = None  # when the run in progress began

    @property
    def source(self) -> str:
        """The ``:CRON:`` value as the file has it (what the saved state is keyed on)."""
        return self.timestamp.format()

    def describe(self) -> dict[str, Any]:
        """The job as plain data (the EPC ``jobs`` method sends this as a plist)."""
        return {
            "id": self.id,
            "heading": self.heading,
            "file": self.file,
            "tier": self.tier.value,
            "timestamp": self.source,
            "reflex": self.reflex,
            "next-run": _iso(self.next_run),
            "last-run": _iso(self.last_run),
            "last-result": self.last_result,
            "running": self.running,
        }


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment is not None else None


@dataclass(frozen=True)
class ScanProblem:
    """Something in a file that could not be read or understood; the rest still loads."""

    file: str
    message: str
    heading: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}: {self.heading}" if self.heading else self.file
        return f"{where}: {self.message}"


@dataclass
class FileScan:
    """What one file holds: its CRON/HOOK nodes, and what was wrong in it."""

    file: str
    nodes: list[OrgNode] = field(default_factory=list)
    problems: list[ScanProblem] = field(default_factory=list)
