"""How a shipped hook handler acts: it never writes itself, it proposes.

A handler's action (a note under a heading, a notification, a memory snapshot) is a
tool call queued under a one-use ticket and injected into the loop as a ``hook-act``
signal; the hooks skill's reflex hands the loop that call, so it passes every gate
(the policy, the dispatcher, the person's rules, an approval) like the model's calls,
and the audit log records it.  The tools redeem the ticket, so a call that did not
come from a handler (the model's, say) does nothing.

:class:`Echoes` remembers the content of the headings the agent itself wrote, so the
change that write causes is known as the agent's own: a summary written into a
heading does not fire the heading's hooks again, and is not "changed outside the
agent".
"""

from __future__ import annotations

import collections
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass

from passepartout.events.jobs import OrgNode
from passepartout.loop.actions import Action
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnContext

log = logging.getLogger(__name__)

SENSOR = "hook-act"
TICKET_ARG = "ticket"
Injector = Callable[[Signal], bool]


@dataclass(frozen=True)
class Proposal:
    """One action a handler wants, waiting for the loop."""

    ticket: str
    hook: str
    node_id: str
    heading: str
    action: Action


class HookActions:
    """Tickets of the actions handlers proposed: queued, cleared by the loop, redeemed."""

    def __init__(self, inject: Injector | None = None, limit: int = 1000) -> None:
        self.inject = inject
        self._queued: dict[str, Proposal] = {}
        self._cleared: dict[str, Proposal] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def propose(self, hook: str, node: OrgNode, tool: str, args: dict[str, object]) -> bool:
        """Queue ``tool(**args)`` for the loop; False when the agent takes no input."""
        ticket = secrets.token_hex(8)
        action = Action("tool", tool, {TICKET_ARG: ticket, **args},
                        call_id=f"hook-{ticket}")
        proposal = Proposal(ticket, hook, node.id, node.heading, action)
        with self._lock:
            if len(self._queued) >= self._limit:
                self._queued.pop(next(iter(self._queued)))  # the oldest never ran
            self._queued[ticket] = proposal
        signal = Signal(
            payload={"sensor": Keyword(SENSOR), TICKET_ARG: ticket},
            turn=TurnContext(face="hook", origin="hook", heading=node.id,
                             session_id=f"hook:{node.id}", turn_id=f"hook-act-{ticket}",
                             hook_act=ticket, hook=hook))
        if self.inject is not None and self.inject(signal):
            return True
        with self._lock:
            self._queued.pop(ticket, None)
        log.warning("hook %s: the agent takes no input; %s not proposed", hook, tool)
        return False

    def take(self, ticket: str) -> Proposal | None:
        """The proposal a ``hook-act`` signal names (once); it may now be redeemed."""
        with self._lock:
            proposal = self._queued.pop(ticket, None)
            if proposal is not None:
                self._cleared[ticket] = proposal
                while len(self._cleared) > self._limit:
                    self._cleared.pop(next(iter(self._cleared)))
            return proposal

    def redeem(self, ticket: object, tool: str, args: dict[str, object]) -> Proposal:
        """The proposal behind a tool call's ticket (once), when the call is exactly the
        one proposed; ValueError otherwise."""
        with self._lock:
            proposal = self._cleared.get(str(ticket))
            if proposal is None or proposal.action.name != tool:
                raise ValueError(f"{tool} runs only the actions of hook handlers "
                                 "(no such hook ticket)")
            proposed = {k: v for k, v in proposal.action.args.items() if k != TICKET_ARG}
            if {k: v for k, v in args.items() if v != ""} != {
                    k: v for k, v in proposed.items() if v != ""}:
                raise ValueError(f"{tool} was called with other arguments than proposed")
            del self._cleared[str(ticket)]
            return proposal


def fingerprint(node: OrgNode) -> tuple[object, ...]:
    """What a change of a node compares (the events registry's notion of content)."""
    return (node.id, node.heading, node.outline, node.body,
            tuple(sorted(node.properties.items())))


class Echoes:
    """The contents the agent wrote into hooked headings (the newest few hundred)."""

    def __init__(self, limit: int = 500) -> None:
        self._seen: collections.OrderedDict[tuple[object, ...], None] = collections.OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def add(self, node: OrgNode) -> None:
        with self._lock:
            self._seen[fingerprint(node)] = None
            while len(self._seen) > self._limit:
                self._seen.popitem(last=False)

    def ours(self, node: OrgNode | None) -> bool:
        """Whether ``node`` is exactly what the agent wrote."""
        if node is None:
            return False
        with self._lock:
            return fingerprint(node) in self._seen
