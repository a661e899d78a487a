"""``passepartout grant list|add|accept``: the standing grants of the approvals file.

``add`` writes a grant the person types, sealed; ``accept`` seals the grants written
into the file by hand (in Emacs, on a phone) after showing them.  Both ask for a yes
on the terminal first.  A grant without the seal is ignored by the agent and reported
in ``events.org``.
"""

from __future__ import annotations

import argparse

from passepartout.security.approvals import grants as grant_file
from passepartout.security.policy import rule_from_mapping
from passepartout.security.trust.cli import book, confirm


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="grant_command", metavar="COMMAND", required=True)
    sub.add_parser("list", help="the grants, and whether each carries the agent's seal")
    add = sub.add_parser("add", help="give a standing grant (a policy rule)")
    add.add_argument("title", help="what the grant is for, in your words")
    add.add_argument("--tool", required=True, help="the tool's name (a glob), e.g. shell")
    add.add_argument("--decision", default="allow", choices=("allow", "ask", "deny"))
    add.add_argument("--command", help="shell: the words the command starts with")
    add.add_argument("--exact", action="store_true",
                     help="shell: the command is these words, nothing after them")
    add.add_argument("--path", help="a glob on the file's path or name")
    add.add_argument("--scope", help="a directory the file or working directory is inside")
    add.add_argument("--secret", help="the {{secret:NAME}} this command may use unasked")
    add.add_argument("--host", help="a glob every URL of the call must be on")
    add.add_argument("--heading", help="org edits: the heading, exactly as the tool names it")
    add.add_argument("--property", help="org-set-property: the property it sets")
    add.add_argument("--content", help="write-file: sha256:HEX of the only text it may write")
    sub.add_parser("accept", help="review the grants written by hand and seal them")


def run(args: argparse.Namespace) -> int:
    approvals = book()
    if args.grant_command == "add":
        entry = {k: getattr(args, k) for k in grant_file.KEYS if getattr(args, k)}
        rule = rule_from_mapping(entry, "the command line")
        print(f"Grant: {rule.describe()}  ({args.title})")
        if not confirm(f"Add it to {approvals.path}?"):
            print("not added")
            return 1
        approvals.add_grant(rule, args.title)
        print("added")
        return 0
    found = approvals.grants()
    unsealed = [g for g in found if not grant_file.sealed(g, approvals.trust.seal)]
    if args.grant_command == "list":
        for g in found:
            mark = "unsealed: ignored" if g in unsealed and g.decision() == "allow" else (
                "unsealed" if g in unsealed else "sealed")
            print(f"{g.title}: {_describe(g)} [{mark}]")
        if not found:
            print(f"no grants in {approvals.path}")
        return 0
    if not unsealed:
        print("every grant carries the agent's seal; nothing to accept")
        return 0
    print(f"Grants in {approvals.path} without the agent's seal:")
    for g in unsealed:
        print(f"  {g.title}: {_describe(g)}")
    if not confirm(f"Accept these {len(unsealed)} grants as yours?"):
        print("not accepted; they stay ignored")
        return 1
    print(f"sealed {approvals.seal_grants(unsealed)} grants")
    return 0


def _describe(grant: grant_file.Grant) -> str:
    try:
        return grant.rule().describe()
    except Exception as err:  # a mistyped grant is shown, not fatal
        return f"(unreadable: {err})"
