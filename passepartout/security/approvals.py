"""The approvals org file: Flight Plans waiting for a person, and scoped grants.

A Flight Plan is a top-level TODO entry holding the exact action (JSON in a src block)
and its hash.  A person sets it to APPROVED or REJECTED from Emacs or any org client
(a phone app editing the file); the runner (:mod:`passepartout.security.flightplan`)
does the rest.  The hash that counts is the one kept in the ledger under the state
directory, which no org client can change: an entry whose action was edited never
runs, whatever its ``:HASH:`` property says.

Scoped grants are the children of the ``* Grants`` heading: their properties
(``:DECISION:``, ``:TOOL:``, ``:COMMAND:``, ``:PATH:``, ``:SCOPE:``) are policy rules.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.errors import ConfigError
from passepartout.fsutil import atomic_write
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.security.orgtext import drawer, one_line, src_block, timestamp, unescape_block
from passepartout.security.policy import Rule, rule_from_mapping

log = logging.getLogger(__name__)

PENDING, APPROVED, REJECTED, DONE, CANCELLED = "TODO", "APPROVED", "REJECTED", "DONE", "CANCELLED"
KEYWORDS = (PENDING, APPROVED, REJECTED, DONE, CANCELLED)
HEADER = (
    "#+TITLE: Passepartout approvals\n"
    "#+TODO: TODO APPROVED | DONE REJECTED CANCELLED\n"
    "# Set a Flight Plan to APPROVED to run its action once on the next heartbeat, or to\n"
    "# REJECTED with a reason (its body, or a :REASON: property).  An edited action never\n"
    "# runs.  Each child of * Grants is a standing rule (:DECISION: :TOOL: :COMMAND: ...).\n"
    "\n* Grants\n"
)
_HEADING = re.compile(r"^\*\s+(?:(" + "|".join(KEYWORDS) + r")\s+)?(.*?)\s*$")
_PROPERTY = re.compile(r"^\s*:([A-Za-z0-9_-]+):\s*(.*?)\s*$")


@dataclass
class FlightPlan:
    """One entry of the approvals file, as read."""

    id: str
    state: str
    title: str
    properties: dict[str, str]
    action_text: str | None
    body: list[str]
    start: int
    end: int

    def action(self) -> Action | None:
        """The action as the file now spells it (``None`` when it does not parse)."""
        if self.action_text is None:
            return None
        try:
            data = json.loads(self.action_text)
            return Action(
                target=str(data["target"]),
                name=str(data.get("name", "")),
                args=dict(data.get("args") or {}),
                text=str(data.get("text", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def reason(self) -> str:
        """Why the person rejected it: a ``:REASON:`` property, else the body text."""
        if self.properties.get("REASON"):
            return self.properties["REASON"]
        return " ".join(line.strip() for line in self.body if line.strip()) or "no reason given"


@dataclass
class _Parsed:
    lines: list[str]
    plans: list[FlightPlan] = field(default_factory=list)
    grants: list[tuple[str, dict[str, str]]] = field(default_factory=list)


def parse(text: str) -> _Parsed:
    """The Flight Plans and grants of an approvals file."""
    lines = text.splitlines()
    parsed = _Parsed(lines)
    starts = [i for i, line in enumerate(lines) if line.startswith("* ")] + [len(lines)]
    for start, end in itertools.pairwise(starts):
        match = _HEADING.match(lines[start])
        if match is None:
            continue
        keyword, title = match.group(1), match.group(2)
        if _is_grants_heading(lines[start]):
            parsed.grants = _grants(lines[start + 1 : end])
            continue
        props, action_text, body = _entry_body(lines[start + 1 : end])
        if keyword is None or "ID" not in props:
            continue
        parsed.plans.append(
            FlightPlan(props["ID"], keyword, title, props, action_text, body, start, end)
        )
    return parsed


def _is_grants_heading(line: str) -> bool:
    """``* Grants``, tags allowed (``* Grants :noexport:``), no TODO keyword."""
    match = _HEADING.match(line)
    return (match is not None and match.group(1) is None
            and match.group(2).split(" :")[0].strip().lower() == "grants")


def _entry_body(lines: list[str]) -> tuple[dict[str, str], str | None, list[str]]:
    props: dict[str, str] = {}
    body: list[str] = []
    block: list[str] | None = None
    action_text: str | None = None
    in_drawer = in_result = False
    for line in lines:
        stripped = line.strip()
        if block is not None:
            if stripped.lower() == "#+end_src":
                if action_text is None and not in_result:
                    action_text = unescape_block("\n".join(block))
                block, in_result = None, False
            else:
                block.append(line)
        elif stripped == ":PROPERTIES:" and not props:
            in_drawer = True
        elif in_drawer:
            if stripped == ":END:":
                in_drawer = False
            elif (m := _PROPERTY.match(line)) is not None:
                props[m.group(1).upper()] = m.group(2)
        elif stripped.lower().startswith("#+begin_src"):
            block = []
        elif stripped.lower().startswith("#+results") or stripped.startswith("- Result"):
            in_result = True
        else:
            body.append(line)
    return props, action_text, body


def _grants(lines: list[str]) -> list[tuple[str, dict[str, str]]]:
    grants: list[tuple[str, dict[str, str]]] = []
    current: dict[str, str] | None = None
    for line in lines:
        if line.startswith("** "):
            current = {}
            grants.append((line[3:].strip(), current))
        elif current is not None and (m := _PROPERTY.match(line)) is not None:
            key = m.group(1).upper()
            if key not in ("PROPERTIES", "END"):
                current[key] = m.group(2)
    return grants


class ApprovalBook:
    """The approvals file and its ledger (``<state>/flightplans.json``)."""

    def __init__(self, path: Path, ledger: Path, *, mask: Callable[[str], str]) -> None:
        self.path = Path(path)
        self.ledger_path = Path(ledger)
        self.mask = mask
        self._lock = threading.RLock()

    # -- the ledger: the hashes that count ---------------------------------------------

    def ledger(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.ledger_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (ValueError, UnicodeDecodeError) as err:
            # A damaged ledger approves nothing: every entry then counts as unknown.
            log.error("flight plan ledger %s is unreadable: %s", self.ledger_path, err)
            return {}
        return data if isinstance(data, dict) else {}

    def set_ledger(self, plan_id: str, **fields: Any) -> None:
        with self._lock:
            data = self.ledger()
            data.setdefault(plan_id, {}).update(fields)
            atomic_write(self.ledger_path, json.dumps(data, indent=1, sort_keys=True))

    # -- the file -----------------------------------------------------------------------

    def read(self) -> _Parsed:
        try:
            return parse(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return _Parsed([])

    def plans(self) -> list[FlightPlan]:
        return self.read().plans

    def grant_rules(self) -> list[Rule]:
        """The standing grants as policy rules (a bad one is logged and left out)."""
        rules: list[Rule] = []
        for title, props in self.read().grants:
            entry = {k.lower(): v for k, v in props.items() if k.lower() in _GRANT_KEYS}
            entry.setdefault("decision", "allow")
            try:
                rules.append(rule_from_mapping(entry, f"grant {one_line(title, 60)!r}"))
            except ConfigError as err:
                log.warning("ignoring a grant in %s: %s", self.path, err.message)
        return rules

    def _edit(self, change: Callable[[list[str]], list[str]]) -> None:
        """Read, change and atomically rewrite the file under the lock."""
        with self._lock:
            try:
                text = self.path.read_text(encoding="utf-8")
            except FileNotFoundError:
                text = HEADER
            lines = change(text.splitlines())
            atomic_write(self.path, "\n".join(lines) + "\n")

    def propose(self, request: ApprovalRequest) -> FlightPlan:
        """A Flight Plan for ``request`` (the pending one, if this action already has one)."""
        action = request.action
        digest = action.digest()
        with self._lock:
            ledger = self.ledger()
            for plan in self.plans():
                known = ledger.get(plan.id, {})
                if known.get("hash") == digest and known.get("state") == "pending":
                    return plan
            plan_id = f"fp-{digest[:8]}-{secrets.token_hex(3)}"
            meta = request.signal.meta
            props = {
                "ID": plan_id,
                "HASH": digest,
                "CREATED": timestamp(),
                "SOURCE": str(meta.get("source", "")),
                "SESSION": str(meta.get("session-id", "")),
                "ORIGIN": str(meta.get("origin", "")),
                "HEADING": str(meta.get("heading", "")),
                "CALL_ID": action.call_id or "",
                "GATES": self.mask("; ".join(request.reasons)),
            }
            canonical = json.dumps(json.loads(action.canonical()), indent=2, ensure_ascii=False)
            entry = (
                f"* {PENDING} {self.mask(one_line(action.describe()))}\n"
                + drawer({k: v for k, v in props.items() if v}, "  ")
                + src_block(self.mask(canonical), "json", "  ")
            )
            self.set_ledger(plan_id, hash=digest, state="pending", created=timestamp())
            self._edit(lambda lines: [*lines, *entry.rstrip("\n").splitlines()])
        log.info("flight plan %s written to %s", plan_id, self.path)
        return next(p for p in self.plans() if p.id == plan_id)

    def mark(self, plan_id: str, state: str, result: str) -> None:
        """Set an entry's keyword and record the result under it."""
        note = self.mask(result)

        def change(lines: list[str]) -> list[str]:
            plan = next((p for p in parse("\n".join(lines)).plans if p.id == plan_id), None)
            if plan is None:
                return lines
            head = _HEADING.match(lines[plan.start])
            title = head.group(2) if head else plan.title
            block = [
                f"  - Result {timestamp()}:",
                *src_block(note, "text", "  ").rstrip("\n").splitlines(),
            ]
            return [
                *lines[: plan.start],
                f"* {state} {title}",
                *lines[plan.start + 1 : plan.end],
                *block,
                *lines[plan.end :],
            ]

        self._edit(change)

    def add_grant(self, rule: Rule, title: str) -> None:
        """Store a standing grant as a child of ``* Grants``."""
        props = {"DECISION": rule.decision, "TOOL": rule.tool}
        if rule.command:
            props["COMMAND"] = " ".join(rule.command)
        if rule.path:
            props["PATH"] = rule.path
        if rule.scope:
            props["SCOPE"] = str(rule.scope)
        entry = [f"** {one_line(title)}", *drawer(props, "   ").rstrip("\n").splitlines()]

        def change(lines: list[str]) -> list[str]:
            heads = [i for i, line in enumerate(lines) if line.startswith("* ")]
            at = next((i for i in heads if _is_grants_heading(lines[i])), None)
            if at is None:
                return [*lines, "* Grants", *entry]
            end = next((i for i in heads if i > at), len(lines))
            return [*lines[:end], *entry, *lines[end:]]

        self._edit(change)


_GRANT_KEYS = frozenset({"decision", "tool", "command", "path", "scope"})
