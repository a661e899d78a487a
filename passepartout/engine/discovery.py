"""Finding skill files, reading what they depend on, and ordering them.

A skill is ``name.py`` (dependencies in a module-level ``DEPENDS_ON = [...]``) or
``name.org`` (``#+DEPENDS_ON:`` lines and an ``:ID:`` property, as in seed 003).
A dependency names a skill by file name or by org ID (``id:`` prefix optional).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.errors import SkillError
from passepartout.pyast import parse_module

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_DEPENDS = re.compile(r"^#\+DEPENDS_ON:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_ID = re.compile(r"^[ \t]*:ID:[ \t]*(\S+)", re.IGNORECASE | re.MULTILINE)


@dataclass
class SkillFile:
    """A discovered skill file and what it declares about itself."""

    name: str
    path: Path
    kind: str  # "py" or "org"
    org_id: str | None = None
    depends_on: list[str] = field(default_factory=list)
    error: str | None = None


def skill_name(path: Path) -> str:
    """The skill's name: its file stem, with dashes read as underscores."""
    return path.stem.replace("-", "_").lower()


def discover(dirs: Iterable[Path]) -> list[SkillFile]:
    """Every skill file in ``dirs``; a later directory's skill overrides an earlier one."""
    found: dict[str, SkillFile] = {}
    for directory in dirs:
        if not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if path.suffix not in (".py", ".org") or path.name.startswith(("_", ".")):
                continue
            found[skill_name(path)] = read_metadata(path)
    return list(found.values())


def read_metadata(path: Path) -> SkillFile:
    name = skill_name(path)
    entry = SkillFile(name=name, path=path, kind=path.suffix[1:])
    if not _NAME.match(name):
        entry.error = f"{path.name}: a skill name must be lowercase letters, digits and _"
        return entry
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        entry.error = f"cannot read {path}: {err}"
        return entry
    if entry.kind == "org":
        match = _ID.search(text)
        entry.org_id = match.group(1) if match else None
        for line in _DEPENDS.findall(text):
            entry.depends_on += [d.strip("[] ,") for d in line.split() if d.strip("[] ,")]
    else:
        entry.depends_on = _python_depends(text)
    return entry


def _python_depends(source: str) -> list[str]:
    try:
        tree = parse_module(source)
    except SyntaxError:
        return []  # the loader reports the syntax error itself
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "DEPENDS_ON" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return []
            if isinstance(value, list | tuple):
                return [str(v) for v in value]
    return []


def resolve(dep: str, files: dict[str, SkillFile]) -> str | None:
    """The skill name a dependency refers to (by ID first, then by name)."""
    key = dep[3:] if dep.lower().startswith("id:") else dep
    for entry in files.values():
        if entry.org_id and entry.org_id.lower() == key.lower():
            return entry.name
    name = key.replace("-", "_").lower()
    return name if name in files else None


def topological_order(entries: list[SkillFile]) -> tuple[list[SkillFile], dict[str, str]]:
    """Dependencies first (ties alphabetical); skills that cannot be ordered, with why.

    A cycle is reported by name (``a -> b -> a``) on every skill in it, and a skill
    whose dependency is missing or blocked is blocked too.
    """
    files = {e.name: e for e in entries}
    blocked: dict[str, str] = {e.name: e.error for e in entries if e.error}
    order: list[SkillFile] = []
    state: dict[str, str] = {}  # "visiting" | "done"

    def visit(name: str, path: list[str]) -> bool:
        if state.get(name) == "done":
            return name not in blocked
        if state.get(name) == "visiting":
            cycle = [*path[path.index(name) :], name]
            text = "dependency cycle: " + " -> ".join(cycle)
            for member in cycle:
                blocked.setdefault(member, text)
            return False
        state[name] = "visiting"
        ok = name not in blocked
        for dep in files[name].depends_on:
            target = resolve(dep, files)
            if target is None:
                blocked.setdefault(name, f"missing dependency {dep!r}")
                ok = False
            elif not visit(target, [*path, name]):
                blocked.setdefault(name, f"dependency {target!r} is blocked: {blocked.get(target)}")
                ok = False
        state[name] = "done"
        if ok and name not in blocked:
            order.append(files[name])
            return True
        return False

    for name in sorted(files):
        visit(name, [])
    return order, blocked


def check_name(name: str) -> None:
    if not _NAME.match(name):
        raise SkillError(f"invalid skill name {name!r}", skill=name)
