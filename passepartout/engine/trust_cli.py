"""``passepartout skills``: list the skills and whether they are trusted; trust one.

``passepartout skills trust NAME`` is run by the person in their terminal: it prints the
file's path, its sha256 and what it contains (``--show`` prints it whole), refuses a
skill the vetting blocks, and records the trust only after a typed ``yes`` on a
terminal.  A running agent loads the skill on its next heartbeat.
"""

from __future__ import annotations

import argparse
import sys

from passepartout.config import Config
from passepartout.engine.asking import skill_source_text, summarize
from passepartout.engine.discovery import SkillFile, discover
from passepartout.engine.pinned import SHIPPED_SKILLS_DIR, is_pinned, sha256_of
from passepartout.engine.trust import TrustStore
from passepartout.engine.vetting import vet
from passepartout.errors import SkillError
from passepartout.org.escape import org_line as one_line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.add_parser("list", help="each skill file and whether it is shipped, trusted or waiting")
    trust = sub.add_parser("trust", help="review a skill file and trust its exact content")
    trust.add_argument("name", help="the skill's name (its file name without .py or .org)")
    trust.add_argument("--show", action="store_true", help="print the whole file first")


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    files = discover([SHIPPED_SKILLS_DIR, *([config.skills_dir] if config.skills_dir else [])])
    store = TrustStore(config.home)
    if args.action == "trust":
        return trust(args.name, files, store, show=args.show)
    for entry in files:
        print(f"{entry.name}: {state_of(entry, store)}  {entry.path}")
    return 0


def state_of(entry: SkillFile, store: TrustStore) -> str:
    digest = sha256_of(entry.path.read_bytes())
    if is_pinned(entry.path.name, digest):
        return "shipped (pinned)"
    try:
        findings = vet(skill_source_text(entry.path), str(entry.path))
    except (UnicodeDecodeError, ValueError, SyntaxError) as err:
        return f"blocked ({one_line(str(err), 120)})"
    if findings:
        return f"blocked ({one_line(str(findings[0]), 120)})"
    if store.is_trusted(entry.name, digest):
        return f"trusted (sha256 {digest[:16]}...)"
    return f"waiting for your approval (sha256 {digest[:16]}...)"


def trust(name: str, files: list[SkillFile], store: TrustStore, *, show: bool = False) -> int:
    entry = next((f for f in files if f.name == name), None)
    if entry is None:
        raise SkillError(f"no skill named {name!r} (see `passepartout skills list`)", skill=name)
    path = entry.path
    raw = path.read_bytes()
    digest = sha256_of(raw)
    print(f"skill:  {name}\nfile:   {path}\nsha256: {digest}")
    if is_pinned(path.name, digest):
        print("This is a skill shipped with passepartout (pinned): nothing to trust.")
        return 0
    try:
        text = raw.decode("utf-8")
        source = skill_source_text(path)
        findings = vet(source, str(path))
    except (UnicodeDecodeError, ValueError, SyntaxError) as err:
        raise SkillError(f"{path} is not a skill that can load: {err}", skill=name) from None
    for line in summarize(source):
        print(f"        {one_line(line, 200)}")
    if findings:
        print("blocked: the vetting refuses it, so it cannot be trusted:")
        for finding in findings:
            print(f"  {finding}")
        return 1
    if show:
        print("-" * 72)
        for number, line in enumerate(text.splitlines(), 1):
            print(f"{number:4} {_visible(line)}")
        print("-" * 72)
    if store.is_trusted(name, digest):
        print("Already trusted with exactly this content.")
        return 0
    if not sys.stdin.isatty():
        print("Not trusted: answer in a terminal (the standard input is not one).")
        return 1
    try:
        answer = input(f"Trust {name} with exactly this content? Type yes: ")
    except EOFError:
        answer = ""
    if answer.strip().lower() != "yes":
        print("Not trusted.")
        return 1
    store.trust(name, digest, path)
    print(f"Trusted. A running agent loads {name} on its next heartbeat; "
          "a changed file asks again.")
    return 0


def _visible(line: str) -> str:
    """The line with control characters shown escaped (nothing reaches the terminal raw)."""
    return "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in line)

