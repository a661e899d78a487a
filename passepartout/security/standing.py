"""An "always" answer to an approval: a standing grant scoped to what was asked.

A client that answers an approval with ``(:allow t :always t)`` (allow always) or
``(:allow nil :always t)`` (reject always) gets the same sealed grant in ``* Grants``
of the approvals file as ``passepartout grant add`` writes (through
:meth:`ApprovalBook.add_grant`), narrowed to the action asked about:

- a shell line: one plain command, its words as written and no more when it is allowed
  (``exact``: yes to ``git push`` is not yes to ``git push --force``; a refusal covers
  the words with anything after them), in the working directory;
- a file tool: that one file (its real path); a yes to ``write-file`` also that very
  content (its SHA-256: other content for the same file is asked again);
- an org edit: that file and heading, and for ``org-set-property`` that property (another
  property or heading is asked again);
- another tool: the tool, on the one host its URLs name when it names any.

An action no rule can pin without widening it (code to evaluate, a compound shell line,
words a glob would read differently, several paths or hosts), new text with no scope (a
capture, a note, a new heading, a memory, a scheduled job), and a yes to a write that
runs later (asked as code, :mod:`passepartout.security.shell.runs_later`) get no grant: the
answer then counts once, and the reason is returned for the person.  Only the answer to a
pending approval reaches this (the EPC ``approval-answer`` method, with an id only the
asked client saw); no tool calls it.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from passepartout.errors import ConfigError
from passepartout.security.approvals import grants as grant_file
from passepartout.security.guard import PATH_ARGS
from passepartout.security.policy import Rule, _hosts_in, content_digest, rule_from_mapping
from passepartout.security.shell.runs_later import code_reason
from passepartout.security.vault import secret_names

if TYPE_CHECKING:
    from passepartout.loop.actions import Action
    from passepartout.security.guard import Security
    from passepartout.services import Services

log = logging.getLogger(__name__)

# Tools whose arguments are code: a grant could only name the tool, i.e. allow any code.
UNSCOPED = frozenset({"eval", "emacs-eval"})
# Tools that add new text each time: no grant has a scope that is what the person saw.
NEW_TEXT = {
    "org-capture": "a capture", "org-add-note": "a note", "org-add-heading": "a new heading",
    "remember": "a memory", "schedule": "a scheduled job",
}
# The org edits a grant pins to one heading (and, for a property, to that property).
_ORG_PINS = {"org-set-property": ("heading", "key"), "org-set-todo": ("heading",),
             "org-archive": ("heading",)}
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
    if action.name in NEW_TEXT:
        raise NoScope(f"{NEW_TEXT[action.name]} gets no standing grant (each is new text)")
    subject, verdict = security.examine(action)
    if verdict.decision == "deny":
        raise NoScope("the gates refuse this call whatever the grants say")
    if decision == "allow" and (code := security.runs_later(action)) is not None:
        raise NoScope(f"it was asked as code ({code}), which is never allowed always")
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
    entry.update(_pins(action, decision))
    if "command" not in entry:
        hosts = {h for v in action.args.values() for h in _hosts_in(str(v), bare=False)}
        if len(hosts) > 1 or any(not h or _GLOB.search(h) for h in hosts):
            raise NoScope("only a call on one host can be granted")
        if hosts:
            entry["host"] = hosts.pop()
    return entry


def _pins(action: Action, decision: str) -> dict[str, str]:
    """The arguments a grant binds beyond the path: what the person was shown."""
    args = action.args
    if action.name == "write-file":
        content = args.get("content")
        if not isinstance(content, str):
            raise NoScope("a write with no text content cannot be granted")
        # A refusal covers the file whatever it would hold; a yes, this text only.
        return {"content": content_digest(content)} if decision == "allow" else {}
    names = _ORG_PINS.get(action.name)
    if names is None:
        if action.name.startswith("org-"):
            raise NoScope(f"{action.name} cannot be pinned to what was shown")
        return {}
    pins: dict[str, str] = {}
    for name in names:
        value = args.get(name)
        if not isinstance(value, str) or not value.strip() or "\n" in value:
            raise NoScope(f"{action.name} needs one plain {name} to be granted")
        pins["property" if name == "key" else name] = value
    return pins


def once_only(action: Action) -> str | None:
    """Why a yes to ``action`` can only count once (``None``: "always" may be kept), as
    the question can tell before it is answered: code to evaluate, new text, a write
    that runs later (judged by its path as spelled; the gates judge the real one too)."""
    if action.target != "tool" or action.name in UNSCOPED:
        return f"{action.name or action.target} runs code"
    if action.name in NEW_TEXT:
        return f"{NEW_TEXT[action.name]} gets no standing grant"
    spelled = [Path(os.path.expanduser(str(action.args[k]))) for k in PATH_ARGS
               if isinstance(action.args.get(k), str)]
    code = code_reason(action.name, action.args, spelled)
    return f"asked as code ({code})" if code is not None else None


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
