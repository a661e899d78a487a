"""The approvals org file: Flight Plans waiting for a person, and scoped grants.

A Flight Plan is a top-level TODO entry holding the exact action (JSON in a src block)
and its hash.  A person sets it to APPROVED or REJECTED from Emacs or any org client
(a phone app editing the file); the runner (:mod:`passepartout.security.approvals.flightplan`)
does the rest.  The hash that counts is the one kept in the ledger under the state
directory, which no org client can change: an entry whose action was edited never
runs, whatever its ``:HASH:`` property says.

Both the entry and its ledger record carry the agent's seal (a MAC made with a key
only the agent process reads, :mod:`passepartout.security.trust.seal`) over the plan's id,
its action's hash, its creation and where it came from: an entry or a ledger record
written by anything else (a forged heading, a forged ledger record, a copied plan with
another action) is refused, reported in ``events.org`` and marked CANCELLED.

Scoped grants are the children of the ``* Grants`` heading (:mod:`.grants`): their
properties are policy rules, and an allowing one counts only with the agent's seal.
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

from passepartout.fsutil import atomic_write
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.org.drawer import STRICT_PROPERTY
from passepartout.org.escape import (
    drawer,
    org_json,
    property_value,
    src_block,
    timestamp,
    unescape_block,
)
from passepartout.org.escape import org_line as one_line
from passepartout.org.heading import heading_line
from passepartout.security.approvals import grants as grant_file
from passepartout.security.policy import Rule
from passepartout.security.policy.accepted import PolicyTrust
from passepartout.security.trust import Trust

log = logging.getLogger(__name__)

PENDING, APPROVED, REJECTED, DONE, CANCELLED = "TODO", "APPROVED", "REJECTED", "DONE", "CANCELLED"
KEYWORDS = (PENDING, APPROVED, REJECTED, DONE, CANCELLED)
HEADER = (
    "#+TITLE: Passepartout approvals\n"
    "#+TODO: TODO APPROVED | DONE REJECTED CANCELLED\n"
    "# Set a Flight Plan to APPROVED to run its action once on the next heartbeat, or to\n"
    "# REJECTED with a reason (its body, or a :REASON: property).  An edited action never\n"
    "# runs.  Each child of * Grants is a standing rule (:DECISION: :TOOL: :COMMAND: ...);\n"
    "# add one with `passepartout grant add` (or write it and run `passepartout grant accept`).\n"
    "\n* Grants\n"
)
_HEADING = re.compile(r"^\*\s+(?:(" + "|".join(KEYWORDS) + r")\s+)?(.*?)\s*$")
PLAN_PURPOSE, LEDGER_PURPOSE = "flight-plan", "flight-plan-ledger"
# The properties a plan's seal covers: what it is, and where its result goes.
SEALED = ("ID", "HASH", "CREATED", "SOURCE", "SESSION", "ORIGIN", "HEADING", "CALL_ID")


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
    grants: list[grant_file.Grant] = field(default_factory=list)


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
        if grant_file.is_grants_heading(lines[start]):
            continue
        props, action_text, body = _entry_body(lines[start + 1 : end])
        if keyword is None or "ID" not in props:
            continue
        parsed.plans.append(
            FlightPlan(props["ID"], keyword, title, props, action_text, body, start, end)
        )
    parsed.grants = grant_file.read(lines)
    return parsed


def _reasons_block(reasons: str) -> str:
    """The gates' reasons in full when they span lines (a proposed skill's diff), which
    :GATES: flattens and cuts; after the action's block, so never read as the action."""
    if "\n" not in reasons:
        return ""
    diff = any(line.startswith("@@ ") for line in reasons.splitlines())
    return src_block(reasons, "diff" if diff else "text", "  ")


def _entry_body(lines: list[str]) -> tuple[dict[str, str], str | None, list[str]]:
    # A reading of its own, not passepartout.org's: a Flight Plan's drawer, action block
    # and result are told apart in one pass, and only names its writer writes count.
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
            elif (m := STRICT_PROPERTY.match(line)) is not None:
                props[m.group(1).upper()] = m.group(2)
        elif stripped.lower().startswith("#+begin_src"):
            block = []
        elif stripped.lower().startswith("#+results") or stripped.startswith("- Result"):
            in_result = True
        else:
            body.append(line)
    return props, action_text, body


class ApprovalBook:
    """The approvals file and its ledger (``<state>/flightplans.json``), and the seal
    that makes both the agent's (its key is in the ledger's directory, the state)."""

    def __init__(self, path: Path, ledger: Path, *, mask: Callable[[str], str],
                 trust: Trust | None = None) -> None:
        self.path = Path(path)
        self.ledger_path = Path(ledger)
        self.mask = mask
        self.trust = trust or Trust.in_state(self.ledger_path.parent)
        self.policy_trust = PolicyTrust(self.trust)
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
        """Change a plan's ledger record, sealed again."""
        with self._lock:
            data = self.ledger()
            entry = data.setdefault(plan_id, {})
            entry.update(fields)
            entry["seal"] = self._ledger_seal(plan_id, entry)
            atomic_write(self.ledger_path, json.dumps(data, indent=1, sort_keys=True))

    def _ledger_seal(self, plan_id: str, entry: dict[str, Any]) -> str:
        parts = (str(entry.get(k, "")) for k in ("hash", "created", "state"))
        return self.trust.seal.sign(LEDGER_PURPOSE, plan_id, *parts)

    def ledger_sealed(self, plan_id: str, entry: Any) -> bool:
        return isinstance(entry, dict) and self.trust.seal.verify(
            entry.get("seal"), LEDGER_PURPOSE, plan_id,
            *(str(entry.get(k, "")) for k in ("hash", "created", "state")))

    def _plan_seal(self, props: dict[str, str]) -> str:
        values = [property_value(props.get(k, "")) for k in SEALED]
        return self.trust.seal.sign(PLAN_PURPOSE, json.dumps(values, ensure_ascii=False))

    def forgery(self, plan: FlightPlan, known: Any) -> str | None:
        """Why ``plan`` is not one the agent proposed (None: it is, as sealed)."""
        if known is None:
            return "the agent never proposed it (it is not in the agent's ledger)"
        if not self.ledger_sealed(plan.id, known):
            return "its ledger record does not carry the agent's seal (forged)"
        props = plan.properties
        if not self.trust.seal.verify(props.get("SEAL"), PLAN_PURPOSE,
                                      json.dumps([props.get(k, "") for k in SEALED],
                                                 ensure_ascii=False)):
            return "its entry does not carry the agent's seal (forged or edited)"
        if props.get("HASH") != known.get("hash"):
            return "its entry is not the one the ledger holds (forged)"
        return None

    # -- the file -----------------------------------------------------------------------

    def read(self) -> _Parsed:
        try:
            return parse(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return _Parsed([])

    def plans(self) -> list[FlightPlan]:
        return self.read().plans

    def grants(self) -> list[grant_file.Grant]:
        return self.read().grants

    def grant_rules(self) -> list[Rule]:
        """The standing grants that count, as policy rules: an allowing grant without
        the agent's seal (not given by the person) is left out and reported in
        ``events.org``; at the first start the grants found are sealed once."""
        if self.trust.first_start:
            unsealed = [g for g in self.grants() if not grant_file.sealed(g, self.trust.seal)]
            if unsealed:
                self.seal_grants(unsealed)
                self.trust.alarms.report(
                    f"{len(unsealed)} grants in {self.path.name} accepted at the first start",
                    "\n".join(f"- {g.title}" for g in unsealed)
                    + "\nFrom now on a grant counts only when you give it (`passepartout "
                    "grant add`) or accept it (`passepartout grant accept`).")

        def refused(grant: grant_file.Grant, why: str) -> None:
            log.warning("ignoring the grant %r in %s: %s", grant.title, self.path, why)
            self.trust.alarms.report(
                f"grant {one_line(grant.title, 80)!r} ignored: {why}",
                f"In {self.path}.  If you wrote it, run `passepartout grant accept` in a "
                "terminal to review and accept it.",
                key=f"grant:{grant_file.canonical(grant.entry())}:{why}")

        return grant_file.rules(self.grants(), self.trust.seal, refused)

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
                if (known.get("hash") == digest and known.get("state") == "pending"
                        and self.forgery(plan, known) is None):
                    return plan
            plan_id = f"fp-{digest[:8]}-{secrets.token_hex(3)}"
            meta = request.signal.meta
            created = timestamp()
            props = {
                "ID": plan_id,
                "HASH": digest,
                "CREATED": created,
                "SOURCE": str(meta.get("source", "")),
                "SESSION": str(meta.get("session-id", "")),
                "ORIGIN": str(meta.get("origin", "")),
                "HEADING": str(meta.get("heading", "")),
                "CALL_ID": action.call_id or "",
            }
            props = {k: v for k, v in props.items() if v}
            props["GATES"] = self.mask("; ".join(request.reasons))
            props["SEAL"] = self._plan_seal(props)
            entry = (
                heading_line(1, one_line(self.mask(action.describe())), PENDING) + "\n"
                + drawer(props, "  ")
                + src_block(self.mask(org_json(json.loads(action.canonical()))), "json", "  ")
                + _reasons_block(self.mask("; ".join(request.reasons)))
            )
            self.set_ledger(plan_id, hash=digest, state="pending", created=created)
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
                heading_line(1, title, state),
                *lines[plan.start + 1 : plan.end],
                *block,
                *lines[plan.end :],
            ]

        self._edit(change)

    def add_grant(self, rule: Rule, title: str) -> None:
        """Store a standing grant the person gave, sealed, as a child of ``* Grants``."""
        entry = grant_file.entry_lines(rule, title, self.trust.seal)
        self._edit(lambda lines: grant_file.add(lines, entry))

    def seal_grants(self, accepted: list[grant_file.Grant]) -> int:
        """Seal the grants the person accepted as written (matched again by position
        and content, so a grant changed since it was shown is not sealed)."""
        wanted = {(g.start, grant_file.canonical(g.entry())) for g in accepted}
        count = 0

        def change(lines: list[str]) -> list[str]:
            nonlocal count
            now = [g for g in grant_file.read(lines)
                   if (g.start, grant_file.canonical(g.entry())) in wanted]
            count = len(now)
            return grant_file.seal_all(lines, now, self.trust.seal)

        self._edit(change)
        return count
