"""Automation is approved where it becomes active: a ``:CRON:`` or ``:HOOK:`` heading
runs only when the person approved its exact content.

What runs is hashed (:func:`job_hash`): the file (relative to the memex), the outline
and title, the body that becomes the prompt, and every property of the drawer (the
timestamp, tier, reflex, hook names, outputs, id ...), except what the agent itself
writes back into a job's heading (the summarize hook's ``:SUMMARY:``, the prompt hook's
reply notes).  The person's answer is kept in ``<state>/job-approvals.json``, keyed by
that hash and sealed with the agent's key, like grants and Flight Plans: the file is
out of every tool's reach and the sandbox's, an entry without a valid seal counts for
nothing, and any change of the heading gives another hash, so it is held again.

Whatever wrote the heading (the agent through any tool, a refile, a capture, a sync,
the person) does not matter: a heading whose hash is not approved is *held*: not
scheduled, none of its hooks fire, and the person is asked (:func:`describe_job` says
what they are asked about).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passepartout.events.headingedit import without_replies
from passepartout.events.jobs import OrgNode
from passepartout.security.trust.records import read_records, write_records
from passepartout.security.trust.seal import Seal

if TYPE_CHECKING:
    from passepartout.events.presets import Preset

log = logging.getLogger(__name__)

RECORD = "job-approvals.json"
APPROVED, DENIED = "job-approved", "job-denied"
# What the agent writes back into a job's own heading (not what runs).
OUTPUT_PROPERTIES = frozenset({"SUMMARY"})
PROMPT_SHOWN = 400  # characters of a prompt shown in a question


def relative_file(file: str | Path, memex: Path | None) -> str:
    """``file`` relative to the memex when it lies inside it (what the hash names)."""
    path = Path(file)
    if memex is not None:
        try:
            return str(path.resolve().relative_to(Path(memex).expanduser().resolve()))
        except (ValueError, OSError):
            pass
    return str(path)


def job_hash(node: OrgNode, memex: Path | None,
             presets: Mapping[str, Preset] | None = None) -> str:
    """The hash of what a CRON/HOOK heading makes run; for a heading under a preset
    (``PASSEPARTOUT_PRESET``), what the daemon's preset of that name holds (``presets``,
    see :mod:`passepartout.events.presets`), or that it holds nothing."""
    properties = sorted((k, v) for k, v in node.properties.items()
                        if k not in OUTPUT_PROPERTIES)
    content: dict[str, Any] = {
        "file": relative_file(node.file, memex),
        "outline": list(node.outline),
        "heading": node.heading,
        "body": without_replies(node.body).strip(),
        "properties": properties,
    }
    inherited = sorted((k, v) for k, v in node.choice.items() if k not in node.properties)
    if inherited:  # the model or tier a subtree chose for it is part of what runs
        content["inherited"] = inherited
    name = node.choice.get("PASSEPARTOUT_PRESET")
    if name:  # and what its preset makes of it
        preset = (presets or {}).get(name)
        content["preset"] = preset.canonical() if preset is not None else None
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def describe_job(node: OrgNode, memex: Path | None, why: str = "new",
                 tier: str | None = None,
                 presets: Mapping[str, Preset] | None = None) -> str:
    """What the person is asked about: ``new job in projects/x.org: runs every Monday
    at 09:00, cognition tier, prompt: ...``."""
    from passepartout.org.escape import org_line

    parts: list[str] = []
    if node.cron is not None:
        parts.append(_when(node.cron))
        kind = "job"
    else:
        kind = "hook"
    if node.hooks:
        parts.append("on each edit runs the hook " + ", ".join(node.hooks))
    tier_text = tier or node.tier_text or ("classified by its prompt"
                                                          if node.cron is not None else "")
    if tier_text:
        parts.append(f"{tier_text.strip().lstrip(':')} tier")
    if node.model:
        parts.append(f"model {node.model}")
    name = node.choice.get("PASSEPARTOUT_PRESET")
    if name:
        preset = (presets or {}).get(name)
        parts.append(preset.describe() if preset is not None
                     else f"preset {name} (unknown to the daemon: it will not run)")
    if node.properties.get("REFLEX"):
        parts.append(f"reflex {node.properties['REFLEX']}")
    prompt = org_line(f"{node.heading}\n\n{without_replies(node.body)}".strip(), PROMPT_SHOWN)
    parts.append(f"prompt: {prompt}")
    where = relative_file(node.file, memex)
    return f"{why} {kind} in {where}: " + ", ".join(parts)


_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_UNITS = {"h": "hour", "d": "day", "w": "week", "m": "month", "y": "year"}


def _when(cron: str) -> str:
    from passepartout.org.timestamps import TimestampError, parse_timestamp

    try:
        stamp = parse_timestamp(cron)
    except TimestampError:
        return f"runs at {cron.strip()!r} (not a timestamp the scheduler reads)"
    clock = f" at {stamp.time:%H:%M}" if stamp.time is not None else ""
    if stamp.repeater is None:
        return f"runs once on {stamp.date:%Y-%m-%d} ({_DAYS[stamp.date.weekday()]}){clock}"
    interval = stamp.repeater.interval
    unit = _UNITS.get(str(interval.unit), str(interval.unit))
    if interval.value == 1 and unit == "week":
        every = f"every {_DAYS[stamp.date.weekday()]}"
    elif interval.value == 1:
        every = f"every {unit}"
    else:
        every = f"every {interval.value} {unit}s"
    return f"runs {every}{clock} from {stamp.date:%Y-%m-%d}"


@dataclass(frozen=True)
class Answer:
    """One sealed answer of the person about one content hash."""

    hash: str
    allowed: bool
    id: str
    file: str
    heading: str
    when: str


class JobApprovals:
    """The person's sealed answers about CRON/HOOK headings, by content hash."""

    def __init__(self, seal: Seal, state_dir: Path) -> None:
        self.seal = seal
        self.path = Path(state_dir) / RECORD
        self._lock = threading.Lock()

    @classmethod
    def in_state(cls, state_dir: Path) -> JobApprovals:
        return cls(Seal.in_state(Path(state_dir)), Path(state_dir))

    def _read(self) -> dict[str, dict[str, Any]]:
        data = read_records(self.path, "the approved jobs")
        if not isinstance(data, dict):
            return {}
        return {str(k): v for k, v in data.items() if isinstance(v, dict)}

    def _valid(self, digest: str, entry: dict[str, Any]) -> Answer | None:
        meta = [str(entry.get(k, "")) for k in ("id", "file", "heading", "when")]
        if self.seal.verify(entry.get("seal"), APPROVED, digest, *meta):
            return Answer(digest, True, *meta)
        if self.seal.verify(entry.get("seal"), DENIED, digest, *meta):
            return Answer(digest, False, *meta)
        return None

    def answer(self, digest: str) -> Answer | None:
        """The person's sealed answer about ``digest`` (None: never answered, or an
        entry the agent did not seal)."""
        entry = self._read().get(digest)
        return self._valid(digest, entry) if entry is not None else None

    def approved(self, digest: str) -> bool:
        found = self.answer(digest)
        return found is not None and found.allowed

    def denied(self, digest: str) -> bool:
        found = self.answer(digest)
        return found is not None and not found.allowed

    def answers(self) -> list[Answer]:
        """Every sealed answer (an unsealed entry is left out)."""
        out = []
        for digest, entry in self._read().items():
            found = self._valid(digest, entry)
            if found is not None:
                out.append(found)
        return out

    def known_id(self, node_id: str) -> bool:
        """Some version of the heading ``node_id`` was approved once."""
        return any(a.allowed and a.id == node_id for a in self.answers())

    def record(self, digest: str, node: OrgNode, memex: Path | None, *,
               allowed: bool) -> None:
        """Seal the person's answer about ``node`` as it is now (``digest``)."""
        when = dt.datetime.now().astimezone().isoformat(timespec="seconds")
        meta = [node.id, relative_file(node.file, memex), node.heading, when]
        entry: dict[str, Any] = dict(zip(("id", "file", "heading", "when"), meta, strict=True))
        entry["seal"] = self.seal.sign(APPROVED if allowed else DENIED, digest, *meta)
        with self._lock:
            data = self._read()
            # One answer per heading and file: an older version's approval goes.
            for old, known in list(data.items()):
                if old != digest and known.get("id") == node.id and known.get("file") == meta[1]:
                    del data[old]
            data[digest] = entry
            write_records(self.path, data)
