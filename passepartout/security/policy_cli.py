"""``passepartout policy show|accept``: what policy is in force, and accepting a changed
``policy.toml`` (shown as a diff and a summary of its rules, then sealed after the
person's yes on the terminal)."""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path

from passepartout.security.policy import Policy, parse_policy
from passepartout.security.policy.accepted import digest
from passepartout.security.trust.cli import book, confirm, policy_file


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="policy_command", metavar="COMMAND", required=True)
    sub.add_parser("show", help="the accepted policy and whether policy.toml differs")
    sub.add_parser("accept", help="review a changed policy.toml and accept it")


def run(args: argparse.Namespace) -> int:
    path = policy_file()
    trust = book().policy_trust
    accepted = trust.accepted()
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if accepted.valid and accepted.text == current:
        print(f"{path}: accepted ({'no file' if current is None else digest(current)[:12]}); "
              "nothing to accept")
        return 0
    if current is None and not accepted.valid:
        print(f"{path}: no such file; the built-in defaults are in force; nothing to accept")
        return 0
    print(f"{path} differs from the policy you last accepted"
          f"{'' if accepted.valid else ' (no valid accepted record: the defaults are in force)'}:")
    print(_diff(accepted.text, current, path))
    new = parse_policy(current, path)  # a broken file is an error here, not accepted
    print(_summary(parse_policy(accepted.text, path) if accepted.valid else Policy(), new))
    if args.policy_command == "show":
        print("Run `passepartout policy accept` to accept it.")
        return 0
    if not confirm("Accept this policy.toml?"):
        print("not accepted; the last accepted policy stays in force")
        return 1
    trust.accept(current, how="accepted by the person on the terminal")
    print("accepted")
    return 0


def _diff(old: str | None, new: str | None, path: Path) -> str:
    lines = difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(),
                                 "accepted", str(path), lineterm="")
    return "\n".join(lines) or "(no textual difference)"


def _summary(old: Policy, new: Policy) -> str:
    before = {r.describe() for r in old.rules}
    after = {r.describe() for r in new.rules}
    out = [f"  + rule {d}" for d in sorted(after - before)]
    out += [f"  - rule {d}" for d in sorted(before - after)]
    for name in ("shell_allow", "protect", "secret", "always_ask"):
        was, now = set(getattr(old.settings, name)), set(getattr(new.settings, name))
        out += [f"  + {name} {v}" for v in sorted(now - was)]
        out += [f"  - {name} {v}" for v in sorted(was - now)]
    if not out:
        return "No change in rules or settings."
    return "Changes in what is allowed, asked and refused:\n" + "\n".join(out)

