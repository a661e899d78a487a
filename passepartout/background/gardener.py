"""The gardener: broken ``id:`` and ``file:`` links, orphaned notes, duplicate IDs.

It reads every org file of the memex (archives and ``system/`` too, for the IDs they
hold) with no model.  What is unambiguous it proposes to fix through the org tools: a broken
``[[id:X][Title]]`` whose target lost its ID, when exactly one heading in the memex is
titled ``Title`` and has no ``:ID:``, gets ``:ID: X`` back (``org-set-property``).
The rest it reports in ``events.org``: links to a missing file (with the one file of
that name, if there is one), IDs on several headings, and notes no other file links
to and that link nowhere.  A report is written only when the findings changed since
the last one, and a fix is proposed once (``background/gardener.json``), so a memex
with nothing new costs a read and nothing else.  Private (``@personal``) text is
neither fixed nor reported; its IDs still count as targets.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.background.jobs import JobSpec
from passepartout.background.memex import OrgText, read_memex
from passepartout.background.service import Background
from passepartout.events.jobs import Job
from passepartout.org.eventlog import Entry

log = logging.getLogger(__name__)

NAME = "gardener"
LINK = re.compile(r"\[\[(id|file):([^\]\n]+?)\](?:\[([^\]\n]*)\])?\]")
ANY_LINK = re.compile(r"\[\[[^\]\n]+\](?:\[[^\]\n]*\])?\]")
OWN_DIRS = ("system/",)  # the agent's own files (jobs, approvals): never orphans
SHOWN = 30  # findings of a kind listed in a report
KEPT = 2000

SPEC = JobSpec(
    name=NAME,
    title="Gardener: broken links, orphaned notes, duplicate IDs",
    at=dt.time(4, 0),
    repeat="+1d",
    body=("Checks id: and file: links, orphaned notes and duplicate IDs; proposes the "
          "fixes that are unambiguous, reports the rest in events.org.  No model is used."),
)


@dataclass(frozen=True)
class Fix:
    """``:ID:`` ``ident`` set on the heading at ``address`` of ``file``."""

    file: str
    address: str
    ident: str

    @property
    def key(self) -> str:
        return hashlib.sha256(f"{self.file}\0{self.address}\0{self.ident}".encode(
            "utf-8", "surrogatepass")).hexdigest()[:24]


@dataclass
class Findings:
    fixes: list[Fix] = field(default_factory=list)
    broken_ids: list[str] = field(default_factory=list)
    broken_files: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)

    def report(self) -> list[str]:
        parts = []
        for label, items in (("broken id: links", self.broken_ids),
                             ("broken file: links", self.broken_files),
                             ("IDs on several headings", self.duplicates),
                             ("orphaned notes (no link in or out)", self.orphans)):
            if items:
                shown = "\n".join(f"- {item}" for item in items[:SHOWN])
                more = f"\n- ... and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
                parts.append(f"{label} ({len(items)}):\n{shown}{more}")
        return parts

    def digest(self) -> str:
        data = [self.broken_ids, self.broken_files, self.duplicates, self.orphans]
        return hashlib.sha256(json.dumps(data).encode("utf-8", "surrogatepass")).hexdigest()


def _where(org: OrgText, memex: Path, line: int) -> str:
    try:
        name = str(org.path.relative_to(memex))
    except ValueError:
        name = str(org.path)
    return f"{name}:{line + 1}"


def _file_target(org: OrgText, target: str) -> Path:
    path = target.split("::", 1)[0].strip()
    expanded = Path(os.path.expanduser(path))
    return expanded if expanded.is_absolute() else org.path.parent / expanded


def examine(orgs: list[OrgText], memex: Path) -> Findings:
    """What is wrong in ``orgs`` (the memex's files, archives included)."""
    found = Findings()
    ids: dict[str, list[tuple[OrgText, int, bool]]] = defaultdict(list)
    by_title: dict[str, list[tuple[OrgText, int]]] = defaultdict(list)  # no :ID:, not private
    by_name: dict[str, list[Path]] = defaultdict(list)
    for org in orgs:
        by_name[org.path.name].append(org.path)
        for heading in org.outline.headings:
            ident = org.outline.property(heading, "ID")
            private = org.heading_private(heading)
            if ident:
                ids[ident].append((org, heading.line, private))
            elif not private and not org.archive:
                by_title[heading.title].append((org, heading.line))
    for ident, places in sorted(ids.items()):
        public = [(o, line) for o, line, private in places if not private]
        if len(places) > 1 and public:
            where = ", ".join(_where(o, memex, line) for o, line in public)
            found.duplicates.append(f"{ident}: {where}")
    linked: set[Path] = set()
    linking: set[Path] = set()
    wanted: dict[str, list[str]] = defaultdict(list)  # missing id -> descriptions
    for org in orgs:
        if org.archive:
            continue
        for number, line in enumerate(org.outline.lines):
            if "[[" not in line:
                continue
            if ANY_LINK.search(line):
                linking.add(org.path)
            private = number < len(org.private) and org.private[number]
            for match in LINK.finditer(line):
                kind, target, desc = match.group(1), match.group(2).strip(), match.group(3)
                if kind == "id":
                    ident = target.split("::", 1)[0]
                    if ident in ids:
                        linked.update(o.path for o, _, _ in ids[ident] if o.path != org.path)
                    elif not private:
                        found.broken_ids.append(f"{_where(org, memex, number)}: id:{ident}")
                        wanted[ident].append((desc or "").strip())
                    continue
                path = _file_target(org, target)
                if path.exists():
                    if path.resolve() != org.path.resolve():
                        linked.add(path.resolve())
                elif not private:
                    same = by_name.get(path.name, [])
                    hint = f" (a file of that name: {same[0]})" if len(same) == 1 else ""
                    found.broken_files.append(
                        f"{_where(org, memex, number)}: file:{target}{hint}")
    for ident, descriptions in sorted(wanted.items()):
        titles = {d for d in descriptions if d}
        if len(titles) != 1:
            continue
        titled = by_title.get(titles.pop(), [])
        if len(titled) != 1:
            continue
        org, at = titled[0]
        heading = org.outline.heading_at(at)
        address = org.address(heading)
        if address is not None and not org.subtree_private(heading):
            found.fixes.append(Fix(str(org.path), address, ident))
    resolved_linked = {p.resolve() for p in linked}
    for org in orgs:
        if org.archive or not org.outline.headings or any(org.private) \
                or _where(org, memex, 0).startswith(OWN_DIRS):
            continue
        if org.path not in linking and org.path.resolve() not in resolved_linked:
            found.orphans.append(_where(org, memex, 0).rsplit(":", 1)[0])
    return found


class Gardener:
    """The reflex of the gardener's cron job."""

    def __init__(self, background: Background) -> None:
        self.bg = background

    def __call__(self, job: Job) -> str:
        orgs = read_memex(self.bg.memex, self.bg.private_tag, archives=True, skipped=())
        found = examine(orgs, self.bg.memex)
        state = self.bg.load(NAME)
        proposed: list[str] = list(state.get("proposed") or [])
        fixes = [f for f in found.fixes if f.key not in proposed]
        for fix in fixes:
            if self.bg.propose(NAME, job, "org-set-property",
                               {"file": fix.file, "heading": fix.address, "key": "ID",
                                "value": fix.ident}):
                proposed.append(fix.key)
        digest = found.digest()
        changed = digest != state.get("reported", Findings().digest())
        if changed:
            parts = found.report()
            title = (f"{sum(len(p.splitlines()) - 1 for p in parts)} finding(s) in the memex"
                     if parts else "the memex is tidy again")
            self.bg.events.record(Entry(NAME, title, "\n\n".join(parts),
                                        "warning" if parts else "info", job.id))
        if fixes or changed:
            self.bg.save(NAME, {"proposed": proposed[-KEPT:], "reported": digest})
        counts = (f"{len(fixes)} fix(es) proposed, {len(found.broken_ids)} broken id link(s), "
                  f"{len(found.broken_files)} broken file link(s), "
                  f"{len(found.duplicates)} duplicate ID(s), {len(found.orphans)} orphan(s)")
        return counts + ("" if changed else " (as before; not reported again)")
