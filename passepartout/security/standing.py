"""An "always" answer to an approval: a standing grant scoped to what was asked.

A client that answers an approval with ``(:allow t :always t)`` (allow always) or
``(:allow nil :always t)`` (reject always) gets the same sealed grant in ``* Grants``
of the approvals file as ``passepartout grant add`` writes (through
:meth:`ApprovalBook.add_grant`), narrowed to the action asked about:

- a shell line: one plain command, its words as written and no more when it is allowed
  (``exact``: yes to ``git push`` is not yes to ``git push --force``; a refusal covers
  the words with anything after them), in the working directory;
- a file tool: that one file (its real path);
- another tool: the tool, on the one host its URLs name when it names any.

An action no rule can pin without widening it (code to evaluate, a compound shell line,
words a glob would read differently, several paths or hosts) gets no grant: the answer
then counts once, and the reason is returned for the person.  Only the answer to a
pending approval reaches this (the EPC ``approval-answer`` method, with an id only the
asked client saw); no tool calls it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from passepartout.errors import ConfigError
from passepartout.security import grants as grant_file
from passepartout.security.policy import Rule, _hosts_in, rule_from_mapping
from passepartout.security.vault import secret_names

if TYPE_CHECKING:
    from passepartout.loop.actions import Action
    from passepartout.security.guard import Security
    from passepartout.services import Services

log = logging.getLogger(__name__)

# Tools whose arguments are code: a grant could only name the tool, i.e. allow any code.
UNSCOPED = frozenset({"eval", "emacs-eval"})
# A word a grant keeps as written: no glob, quote or space (grants store words joined).
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./-]+\Z")
_GLOB = re.compile(r"[*?\[\]]")


class NoScope(ConfigError):
    """The action cannot be pinned by a grant (the message says why)."""


@dataclass(frozen=True)
class Standing:
    """What an "always" answer did: the grant written, or why none was."""

    rule: Rule | None
    note: str


def scoped_entry(action: Action, security: Security, decision: str) -> dict[str, str]:
    """The grant's properties for ``action`` (a :class:`NoScope` when none fits)."""
    if action.target != "tool" or not action.name:
        raise NoScope("only a tool call can be granted")
    if action.name in UNSCOPED:
        raise NoScope(f"{action.name} runs code that no grant can pin")
    if secret_names(action.args):
        raise NoScope("a call that uses a secret is granted with `passepartout grant add "
                      "--secret` in a terminal")
    subject, verdict = security.examine(action)
    if verdict.decision == "deny":
        raise NoScope("the gates refuse this call whatever the grants say")
    entry = {"decision": decision, "tool": action.name}
    if action.name == "shell" and not subject.commands:
        raise NoScope("only a single plain command can be granted")
    if subject.commands:
        if not subject.simple or len(subject.commands) != 1:
            raise NoScope("only a single plain command can be granted")
        words = subject.commands[0]
        if not all(_PLAIN_WORD.match(w) for w in words):
            raise NoScope("the command has words a grant cannot keep as written")
        entry["command"] = " ".join(words)
        if decision == "allow":
            entry["exact"] = "true"
        if subject.cwd is not None:
            entry["scope"] = str(subject.cwd)
    elif subject.paths:
        if len(subject.paths) != 1 or _GLOB.search(str(subject.paths[0])):
            raise NoScope("only a call on one plainly named file can be granted")
        entry["path"] = str(subject.paths[0])
    if "command" not in entry:
        hosts = {h for v in action.args.values() for h in _hosts_in(str(v), bare=False)}
        if len(hosts) > 1 or any(not h or _GLOB.search(h) for h in hosts):
            raise NoScope("only a call on one host can be granted")
        if hosts:
            entry["host"] = hosts.pop()
    return entry


def remember(security: Security, action: Action, allow: bool, *, source: str = "") -> Standing:
    """Write the standing grant an "always" answer asks for; never raises."""
    decision = "allow" if allow else "deny"
    try:
        rule = rule_from_mapping(scoped_entry(action, security, decision), "an approval")
    except ConfigError as err:
        note = f"not remembered: {err.message}; answered once"
        log.info("always-answer to %s %s", action.describe(), note)
        return Standing(None, note)
    title = f"{'Allowed' if allow else 'Refused'} always{f' in {source}' if source else ''}: " \
            f"{rule.describe()}"
    security.book.add_grant(rule, title)
    if not any(replace(g.rule(), origin="") == replace(rule, origin="")
               for g in security.book.grants()
               if grant_file.sealed(g, security.book.trust.seal)):
        log.error("the grant %r did not read back as written", title)
        return Standing(None, "not remembered: the grant did not read back; answered once")
    log.info("standing grant written: %s", title)
    return Standing(rule, f"remembered: {rule.describe()}")


def standing_grants(services: Services) -> Callable[[Action, bool], Standing] | None:
    """The channel's hook for "always" answers, from the agent's security service."""
    security = services.security
    if security is None:
        return None
    return lambda action, allow: remember(security, action, allow)
