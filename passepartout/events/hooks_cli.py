"""``passepartout hooks list``: which ``:HOOK:`` names have handlers, without starting
the agent.

The shipped names come from :mod:`passepartout.events.shipped_hooks`; a skill's are
read from its source (the ``register_hook("name", ...)`` calls whose name is a
literal), never run.  A skill the agent would not load (not trusted yet, or blocked
by the vetting) is listed with its state, since its handlers do not run.  Names used
in the memex's ``:HOOK:`` properties that no handler answers are listed last.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.config import Config
from passepartout.engine.asking import skill_source_text
from passepartout.engine.discovery import SkillFile, discover
from passepartout.engine.pinned import SHIPPED_SKILLS_DIR
from passepartout.engine.trust import TrustStore
from passepartout.engine.trust_cli import state_of
from passepartout.events.scan import scan_tree
from passepartout.events.shipped_hooks import SHIPPED
from passepartout.org.escape import org_line as one_line
from passepartout.pyast import parse_module


@dataclass
class HookName:
    name: str
    handlers: list[str] = field(default_factory=list)  # "skill (state)" or "shipped: ..."
    used: int = 0  # headings of the memex that name it


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", help="each hook name and the handlers that answer it")
    listing.add_argument("--no-memex", action="store_true",
                         help="do not read the memex for the names its headings use")


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    files = discover([SHIPPED_SKILLS_DIR, *([config.skills_dir] if config.skills_dir else [])])
    names = collect(files, TrustStore(config.home))
    if not getattr(args, "no_memex", False):
        dirs = [config.memex_dir / d if d not in (".", "") else config.memex_dir
                for d in config.memex_scan_dirs]
        count_uses(names, [d for d in dirs if d.is_dir()])
    print(render(names))
    return 0


def collect(files: list[SkillFile], store: TrustStore) -> dict[str, HookName]:
    names = {name: HookName(name, [f"shipped: {what}"]) for name, what in SHIPPED.items()}
    for entry in files:
        try:
            source = skill_source_text(entry.path)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        registered = registered_names(source)
        if not registered:
            continue
        state = state_of(entry, store)
        label = (f"skill {entry.name}" if state.startswith(("shipped", "trusted"))
                 else f"skill {entry.name} (not loaded: {state})")
        for name in registered:
            names.setdefault(name, HookName(name)).handlers.append(label)
    return names


def registered_names(source: str) -> list[str]:
    """The literal hook names a skill's source registers (``register_hook("x", ...)``,
    as a method of the host or the orchestrator, or the events skill's function)."""
    try:
        tree = parse_module(source)
    except SyntaxError:
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called not in ("register_hook", "events_register_hook"):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            name = first.value.strip().lower()
            if name and not any(c.isspace() for c in name):
                found.append(name)
    return list(dict.fromkeys(found))


def count_uses(names: dict[str, HookName], dirs: list[Path]) -> None:
    for scan in scan_tree(dirs):
        for node in scan.nodes:
            for hook in node.hooks:
                names.setdefault(hook, HookName(hook)).used += 1


def render(names: dict[str, HookName]) -> str:
    lines: list[str] = []
    answered = sorted((n for n in names.values() if n.handlers), key=lambda n: n.name)
    width = max((len(n.name) for n in answered), default=10)
    for hook in answered:
        used = f"  [{hook.used} heading(s)]" if hook.used else ""
        lines.append(f"{one_line(hook.name, 60):<{width}}  "
                     f"{one_line('; '.join(hook.handlers), 200)}{used}")
    missing = sorted((n for n in names.values() if not n.handlers), key=lambda n: n.name)
    if missing:
        lines.append("")
        lines.append("named in the memex, with no handler (editing those headings does nothing):")
        lines += [f"  {one_line(n.name, 60)}  [{n.used} heading(s)]" for n in missing]
    return "\n".join(lines)
