"""Asking a person, and running what they approved.

:class:`ApprovalRecords` is what the security layer attaches to the agent's one
approval path: a background signal (cron, hook, heartbeat), or one whose channel is
gone, becomes a Flight Plan in the approvals file and is refused for now; a person's
answer is audited.

:class:`FlightPlanRunner` runs on the heartbeat: an APPROVED entry whose action still
has the ledger's hash runs exactly once (the ledger says "running" before it starts),
and is marked DONE with the result; a REJECTED entry's reason goes back to the model;
an edited entry is CANCELLED and never runs.  An APPROVED entry the agent did not write
(not in its ledger, or without its seal on the entry and the ledger record) is CANCELLED
too, reported in ``events.org``, and never runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.loop.events import Denied, Event
from passepartout.loop.gates import GateResult
from passepartout.security.approvals import (
    APPROVED,
    CANCELLED,
    DONE,
    REJECTED,
    ApprovalBook,
    FlightPlan,
)
from passepartout.security.audit import AuditLog
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnContext

log = logging.getLogger(__name__)

class Clearances:
    """One-shot passes bound to an action's hash: the gates (or a person, or a Flight
    Plan) cleared exactly this action, and a tool that asks again may consume it once."""

    def __init__(self, ttl: float = 600.0) -> None:
        self.ttl = ttl
        self._passes: dict[str, float] = {}
        self._lock = threading.Lock()

    def grant(self, digest: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._passes = {d: t for d, t in self._passes.items() if now - t < self.ttl}
            self._passes[digest] = now

    def consume(self, digest: str) -> bool:
        with self._lock:
            granted = self._passes.pop(digest, None)
        return granted is not None and time.monotonic() - granted < self.ttl


class ApprovalRecords:
    """What the security layer attaches to the one approval path
    (:class:`~passepartout.loop.approvals.Approvals`): background requests become
    Flight Plans, and every answer of a person is audited (a yes clears exactly that
    action once)."""

    def __init__(
        self,
        *,
        book: ApprovalBook,
        audit: AuditLog,
        clearances: Clearances,
        emit: Callable[[Signal, Event], None],
    ) -> None:
        self.book = book
        self.audit = audit
        self.clearances = clearances
        self.emit = emit

    def answered(self, request: ApprovalRequest, granted: bool) -> None:
        signal, action = request.signal, request.action
        who = f"the person ({signal.turn.face})"
        self.audit.note(
            "allow" if granted else "deny",
            "approval",
            f"{'approved' if granted else 'not approved'} by {who}",
            action,
            signal,
        )
        if granted:
            self.clearances.grant(action.digest())

    def flight_plan(self, request: ApprovalRequest) -> bool:
        plan = self.book.propose(request)
        reason = f"waiting for approval in {self.book.path} (Flight Plan {plan.id})"
        self.audit.note("ask", "flightplan", reason, request.action, request.signal)
        self.emit(request.signal, Denied(request.action.describe(), reason, plan.id))
        return False


@dataclass(frozen=True)
class Outcome:
    plan_id: str
    state: str
    message: str


class FlightPlanRunner:
    """What the heartbeat runs: approved plans once, rejections back to the model."""

    def __init__(
        self,
        *,
        book: ApprovalBook,
        evaluate: Callable[[Action, Signal], GateResult],
        actuate: Callable[[Action, Signal], Signal | None],
        clearances: Clearances,
        audit: AuditLog,
        inject: Callable[[Signal], Any] | None = None,
        mask: Callable[[str], str] = str,
        notify: Callable[[str], Any] | None = None,
    ) -> None:
        self.book = book
        self.notify = notify  # tells the person a plan they approved has run
        self.evaluate = evaluate
        self.actuate = actuate
        self.clearances = clearances
        self.audit = audit
        self.inject = inject
        self.mask = mask
        self._lock = threading.Lock()

    def run_due(self, _tick: Any = None) -> list[Outcome]:
        """Handle every APPROVED or REJECTED entry still pending in the ledger; refuse
        an APPROVED one the agent did not write."""
        with self._lock:
            outcomes: list[Outcome] = []
            ledger = self.book.ledger()
            for plan in self.book.plans():
                if plan.state not in (APPROVED, REJECTED):
                    continue
                known = ledger.get(plan.id)
                sealed = self.book.ledger_sealed(plan.id, known)
                if sealed and isinstance(known, dict) and known.get("state") != "pending":
                    continue  # handled before (setting it back to APPROVED runs nothing)
                if plan.state == REJECTED:
                    if sealed:  # saying no needs no proof; a forged record gets nothing
                        outcomes.append(self._reject(plan))
                    continue
                forged = self.book.forgery(plan, known)
                if forged is not None or not isinstance(known, dict):
                    why = forged or "its ledger record is unreadable"
                    outcomes.append(self._refuse(plan, why, known is not None))
                else:
                    outcomes.append(self._run(plan, str(known.get("hash", ""))))
            return outcomes

    def _refuse(self, plan: FlightPlan, why: str, in_ledger: bool) -> Outcome:
        """A plan the agent did not write: never run, marked, reported."""
        note = f"refused: {why}; not run"
        if in_ledger:
            self.book.set_ledger(plan.id, state="cancelled")
        self.book.mark(plan.id, CANCELLED, note)
        action = plan.action()
        what = action.describe() if action is not None else plan.title
        self.book.trust.alarms.report(
            f"Flight Plan {plan.id} refused: {why}",
            f"It asked to run {self.mask(what)}.  It was not run and is marked CANCELLED in "
            f"{self.book.path}.  Something other than the agent wrote this entry or its "
            "record; the agent proposes plans itself and they carry its seal.")
        if action is not None:
            self.audit.note("deny", "flightplan", f"{plan.id}: {note}", action,
                            self._signal(plan))
        return Outcome(plan.id, CANCELLED, note)

    def _signal(self, plan: FlightPlan) -> Signal:
        props = plan.properties
        context = TurnContext(face=props.get("SOURCE") or "flightplan",
                              session_id=props.get("SESSION") or None,
                              origin=props.get("ORIGIN") or None,
                              heading=props.get("HEADING") or None, flightplan=plan.id)
        return Signal(payload={"sensor": Keyword("approval"), "flightplan": plan.id},
                      turn=context)

    def _run(self, plan: FlightPlan, expected: str) -> Outcome:
        action = plan.action()
        signal = self._signal(plan)
        if action is None or not expected or action.digest() != expected:
            why = "its action was edited after it was proposed (hash mismatch); not run"
            self.book.set_ledger(plan.id, state="cancelled")
            self.book.mark(plan.id, CANCELLED, why)
            if action is not None:
                self.audit.note("deny", "flightplan", f"{plan.id}: {why}", action, signal)
            self.book.trust.alarms.report(f"Flight Plan {plan.id} refused: {why}",
                                          f"It is marked CANCELLED in {self.book.path}.")
            return Outcome(plan.id, CANCELLED, why)
        action.call_id = plan.properties.get("CALL_ID") or None
        # Claimed before it runs: a crash in the action cannot make it run twice.
        self.book.set_ledger(plan.id, state="running")
        result = self.evaluate(action, signal)
        if result.decision == "deny":
            why = "refused by the gates now: " + "; ".join(result.reasons)
            self.book.set_ledger(plan.id, state="cancelled")
            self.book.mark(plan.id, CANCELLED, why)
            return Outcome(plan.id, CANCELLED, why)
        self.audit.note("allow", "flightplan", f"{plan.id} approved in the file", action, signal)
        self.clearances.grant(action.digest())
        try:
            feedback = self.actuate(action, signal)
            message = _result_text(feedback) if feedback is not None else "done"
        except Exception as err:
            log.exception("flight plan %s failed", plan.id)
            feedback, message = None, f"failed: {type(err).__name__}: {err}"
        self.book.set_ledger(plan.id, state="done")
        self.book.mark(plan.id, DONE, message)
        if feedback is not None and self.inject is not None:
            self.inject(feedback)
        if self.notify is not None:
            first = self.mask(message).strip().splitlines()[:1]
            self.notify(f"Flight Plan {plan.id} ran: {self.mask(action.describe())}: "
                        f"{first[0][:200] if first else 'done'} (marked DONE in "
                        f"{self.book.path})")
        return Outcome(plan.id, DONE, self.mask(message))

    def _reject(self, plan: FlightPlan) -> Outcome:
        reason = plan.reason()
        self.book.set_ledger(plan.id, state="rejected")
        action = plan.action()
        signal = self._signal(plan)
        if action is not None:
            why = f"rejected by the person: {reason}"
            self.audit.note("deny", "flightplan", why, action, signal)
        if self.inject is not None and action is not None:
            text = f"The person rejected {action.describe()}: {reason}"
            self.inject(
                signal.child(
                    {
                        "sensor": Keyword("tool-output"),
                        "results": [
                            {
                                "call-id": plan.properties.get("CALL_ID", ""),
                                "tool": action.name,
                                "ok": False,
                                "output": text,
                            }
                        ],
                    }
                )
            )
        return Outcome(plan.id, REJECTED, reason)


def _result_text(feedback: Signal) -> str:
    results = feedback.payload.get("results")
    if isinstance(results, list) and results:
        parts = []
        for r in results:
            if isinstance(r, dict):
                ok = "ok" if r.get("ok") else "failed"
                parts.append(f"{r.get('tool', '')} ({ok}): {r.get('output', '')}")
        return "\n".join(parts)
    return str(feedback.payload.get("text", "done"))
