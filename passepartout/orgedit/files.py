"""The org edits applied to files on disk: read, check, edit, write atomically.

Every edit states the files it reads and writes (:class:`Plan`) before anything is
written, so that the gate can judge the same plan the tool carries out: whether it
touches a private subtree (then only the person's yes lets it through) and which
files it writes.  Files are replaced through
:func:`passepartout.fsutil.atomic_write`: a reader sees the old file or the new one,
never half of it; when an edit writes two files (refile to another file, archive) the
destination is written first, so that a crash between the two leaves a copy, never a
loss.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.fsutil import atomic_write
from passepartout.org import edits
from passepartout.org.edits import NewHeading
from passepartout.org.filetype import is_org_file
from passepartout.org.outline import OrgEditError, Outline
from passepartout.org.private_edits import end_parent, subtree_private, under_private

log = logging.getLogger(__name__)

MAX_BYTES = 16 * 1024 * 1024


@dataclass
class Plan:
    """One edit, worked out: the new text of each file, and what it touches."""

    writes: dict[Path, str] = field(default_factory=dict)
    before: dict[Path, str] = field(default_factory=dict)  # each file's text, read
    private: list[str] = field(default_factory=list)  # why it touches private text
    summary: str = ""


def abbreviate(path: Path) -> str:
    """``abbreviate-file-name``: the home directory as ``~``."""
    home = os.path.expanduser("~").rstrip("/")
    text = str(path)
    if home and home != "/" and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home):]
    return text


@dataclass
class OrgFiles:
    """Plans and applies the edits; ``resolve`` turns a tool's path into the real
    file (raising :class:`OrgEditError` when the path is refused)."""

    resolve: Callable[[str], Path]
    inbox: Path
    private_tag: str
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now().astimezone()
    legacy_catch_up: bool = False

    # -- reading ---------------------------------------------------------------------

    def _org(self, raw: str) -> Path:
        path = self.resolve(raw)
        if not is_org_file(path):
            raise OrgEditError(f"{raw} is not an org file")
        return path

    def _read(self, path: Path, *, missing_ok: bool = False) -> str | None:
        try:
            if path.stat().st_size > MAX_BYTES:
                raise OrgEditError(f"{path} is larger than {MAX_BYTES // 2**20} MB")
            return path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            if missing_ok:
                return None
            raise OrgEditError(f"{path} does not exist") from None
        except UnicodeDecodeError:
            raise OrgEditError(f"{path} is not UTF-8 text") from None
        except OSError as err:
            raise OrgEditError(f"{path} cannot be read: {err.strerror}") from None

    def _text(self, path: Path) -> str:
        text = self._read(path)
        assert text is not None
        return text

    def _private(self, plan: Plan, where: str, hit: bool) -> None:
        if hit:
            plan.private.append(where)

    # -- planning each edit ----------------------------------------------------------------

    def plan_add_heading(self, file: str, new: NewHeading, parent: str | None,
                         level: int | None) -> Plan:
        path = self._org(file)
        text = self._text(path)
        outline = Outline(text)
        plan = Plan(before={path: text})
        if parent:
            self._private(plan, f"{parent} is private", under_private(
                text, outline, outline.find(parent), self.private_tag))
        else:
            self._private(plan, f"the end of {path.name} is private", under_private(
                text, outline, end_parent(outline, level or 1), self.private_tag))
        plan.writes[path] = edits.add_heading(text, parent or None, new, level)
        plan.summary = f"added {new.title!r} to {path}"
        return plan

    def plan_capture(self, new: NewHeading) -> Plan:
        path = self.inbox
        if not is_org_file(path):
            raise OrgEditError(f"the inbox {path} is not an org file")
        existing = self._read(path, missing_ok=True)
        text = existing or ""
        outline = Outline(text)
        plan = Plan(before={path: existing} if existing is not None else {})
        self._private(plan, f"the inbox {path.name} is private",
                      under_private(text, outline, None, self.private_tag))
        plan.writes[path] = edits.add_heading(text, None, new, 1, capture=True)
        plan.summary = f"captured {new.title!r} into {path}"
        return plan

    def _at(self, file: str, heading: str) -> tuple[Path, str, Outline, Plan]:
        path = self._org(file)
        text = self._text(path)
        outline = Outline(text)
        found = outline.find(heading)
        plan = Plan(before={path: text})
        self._private(plan, f"{heading} is in or holds a private subtree", subtree_private(
            text, outline, found, self.private_tag))
        return path, text, outline, plan

    def plan_set_property(self, file: str, heading: str, name: str, value: str) -> Plan:
        path, text, _outline, plan = self._at(file, heading)
        plan.writes[path] = edits.set_property(text, heading, name, value)
        plan.summary = f"set {name} of {heading!r} in {path}"
        return plan

    def plan_set_todo(self, file: str, heading: str, state: str | None) -> Plan:
        path, text, _outline, plan = self._at(file, heading)
        plan.writes[path] = edits.set_todo(text, heading, state, self.now(),
                                           legacy_catch_up=self.legacy_catch_up)
        plan.summary = f"set the state of {heading!r} in {path} to {state or 'none'}"
        return plan

    def plan_add_note(self, file: str, heading: str, note: str) -> Plan:
        if not note.strip():
            raise OrgEditError("an empty note")
        path, text, _outline, plan = self._at(file, heading)
        plan.writes[path] = edits.add_note(text, heading, note, self.now())
        plan.summary = f"added a note to {heading!r} in {path}"
        return plan

    def plan_refile(self, file: str, heading: str, dest: str | None,
                    to_heading: str | None) -> Plan:
        path, text, _outline, plan = self._at(file, heading)
        target_path = self._org(dest) if dest else path
        if target_path == path:
            self._private(plan, f"{to_heading} is private", bool(to_heading) and under_private(
                text, Outline(text), Outline(text).find(to_heading or ""), self.private_tag))
            plan.writes[path] = edits.refile(text, heading, to_heading or None)[0]
        else:
            other = self._text(target_path)
            plan.before[target_path] = other
            goal = Outline(other).find(to_heading) if to_heading else None
            self._private(plan, f"the destination in {target_path.name} is private",
                          under_private(other, Outline(other), goal, self.private_tag))
            source, moved = edits.refile(text, heading, to_heading or None, other)
            assert moved is not None
            plan.writes[target_path] = moved  # the destination first: never a loss
            plan.writes[path] = source
        where = f"{to_heading or 'the top level'} of {target_path}"
        plan.summary = f"refiled {heading!r} to {where}"
        return plan

    def plan_archive(self, file: str, heading: str) -> Plan:
        path, text, _outline, plan = self._at(file, heading)
        archive = path.with_name(path.name + "_archive")
        existing = self._read(archive, missing_ok=True)
        if existing is not None:
            plan.before[archive] = existing
            self._private(plan, f"{archive.name} is private", under_private(
                existing, Outline(existing), None, self.private_tag))
        source, archived = edits.archive(text, heading, abbreviate(path), existing, self.now())
        plan.writes[archive] = archived
        plan.writes[path] = source
        plan.summary = f"archived {heading!r} to {archive}"
        return plan

    # -- writing ---------------------------------------------------------------------------

    def apply(self, plan: Plan) -> str:
        for path, text in plan.writes.items():
            atomic_write(path, text)
        log.info("org edit: %s", plan.summary)
        return plan.summary
