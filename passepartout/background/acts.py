"""How a background skill acts: it never edits, it proposes.

A skill's action (an org tool call: archive this subtree, set that ID) is queued
under a ticket and injected as a ``background-act`` signal from the ``background``
source; the skill's reflex hands the loop that call, so it passes every gate like the
model's: the policy, the dispatcher, the org tools' own gate (a private subtree is
asked every time), and an approval, which for a background job is a Flight Plan in
``approvals.org`` unless a rule of ``policy.toml`` or a grant allows the tool.

:class:`Outcomes` is the ``background`` channel: it records in ``events.org`` what
became of each proposal (done, refused, waiting for approval), and hands a skill the
model's reply to a prompt it started (the scribe's).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.loop.events import Channel, Denied, Error, Event, ToolResult
from passepartout.loop.replytext import ReplyText
from passepartout.org.eventlog import Entry, EventLog
from passepartout.signals import Keyword, Signal

log = logging.getLogger(__name__)

SENSOR = "background-act"
SOURCE = "background"
TICKET = "ticket"
Injector = Callable[[Signal], bool]
OnReply = Callable[[str], None]


@dataclass(frozen=True)
class Proposal:
    """One tool call a background skill wants, waiting for the loop."""

    ticket: str
    skill: str
    node_id: str
    action: Action


class Proposals:
    """The calls proposed and not yet handed to the loop."""

    def __init__(self, inject: Injector, limit: int = 1000) -> None:
        self.inject = inject
        self._queued: dict[str, Proposal] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def propose(self, skill: str, node_id: str, tool: str, args: dict[str, Any]) -> bool:
        """Queue ``tool(**args)`` for the loop; False when the agent takes no input."""
        ticket = secrets.token_hex(8)
        proposal = Proposal(ticket, skill, node_id,
                            Action("tool", tool, dict(args), call_id=f"{skill}-{ticket}"))
        with self._lock:
            if len(self._queued) >= self._limit:
                self._queued.pop(next(iter(self._queued)))
            self._queued[ticket] = proposal
        signal = Signal(payload={"sensor": Keyword(SENSOR), TICKET: ticket},
                        meta={"source": Keyword(SOURCE), "origin": Keyword("cron"),
                              "heading": node_id, "turn-id": f"{skill}-act-{ticket}",
                              SENSOR: skill})
        if self.inject(signal):
            return True
        with self._lock:
            self._queued.pop(ticket, None)
        log.warning("%s: the agent takes no input; %s not proposed", skill, tool)
        return False

    def take(self, ticket: str) -> Proposal | None:
        """The proposal a ``background-act`` signal names (once)."""
        with self._lock:
            return self._queued.pop(ticket, None)


class Outcomes:
    """The ``background`` channel: outcomes of proposals, and replies awaited."""

    def __init__(self, inner: Channel, events: EventLog) -> None:
        self.inner = inner
        self.events = events
        self._waiting: dict[str, tuple[OnReply, ReplyText]] = {}  # turn id -> wait
        self._lock = threading.Lock()

    def expect(self, turn: str, on_reply: OnReply) -> None:
        with self._lock:
            self._waiting[turn] = (on_reply, ReplyText())

    def forget(self, turn: str) -> None:
        with self._lock:
            self._waiting.pop(turn, None)

    def approve(self, request: ApprovalRequest) -> bool:
        return self.inner.approve(request)

    def send(self, signal: Signal, event: Event) -> None:
        try:
            if signal.meta.get(SENSOR):
                self._acted(signal, event)
            else:
                self._reply(signal, event)
        except Exception:  # a skill's failure must not stop the run's own record
            log.exception("background outcome handling failed")

    def _reply(self, signal: Signal, event: Event) -> None:
        turn = str(signal.meta.get("turn-id") or "")
        with self._lock:
            wait = self._waiting.get(turn)
            done = wait[1].take(event) if wait is not None else None
            if wait is None or done is None:
                return
            del self._waiting[turn]
        on_reply, replies = wait
        answer = replies.answer(done)
        if answer is None:
            node = str(signal.meta.get("heading") or "") or None
            self.events.record(Entry("background", "the model's answer did not come",
                                     replies.text or "(no answer)", "warning", node))
            return
        on_reply(answer)

    def _acted(self, signal: Signal, event: Event) -> None:
        skill = str(signal.meta.get(SENSOR))
        node = str(signal.meta.get("heading") or "") or None
        match event:
            case Denied(action=action, reason=reason, flightplan=plan):
                title = (f"{skill}: {action} waits for approval (Flight Plan {plan})"
                         if plan else f"{skill}: {action} refused")
                self.events.record(Entry(skill, title, reason,
                                         "info" if plan else "warning", node))
            case ToolResult(name=name, ok=ok, output=output):
                self.events.record(Entry(skill, f"{name} {'done' if ok else 'failed'}", output,
                                         "info" if ok else "warning", node))
            case Error(message=message) if not message.startswith("stopped "):
                self.events.record(Entry(skill, "its action failed", message, "warning", node))
            case _:
                pass
