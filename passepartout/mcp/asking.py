"""Asking the person about an MCP server's tool: its exact card (server, name,
description, schema) shown in the attached face, else written as a Flight Plan.

A tool that waits (new, or changed since the person approved it) is asked about on
the next heartbeat: in the face a person looks at when one is attached (Emacs, the
terminal chat: the question carries the description and the schema whole), otherwise
as a Flight Plan in the approvals file.  The plan is the approvals book's own entry,
but its ledger state is this module's (so the runner of tool plans leaves it alone)
and carries a seal over its id and hash: a plan written by anything else is not one of
these.  On each heartbeat an APPROVED plan pins the card, a REJECTED one declines it,
and the pins written meanwhile from the terminal (``passepartout mcp allow``) are taken.
A "no" in the face leaves the tool waiting (it is not offered); ``passepartout mcp
deny`` declines it for good.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.mcp.pins import ALLOW, DENY, Card, PinStore
from passepartout.security.approvals import APPROVED, CANCELLED, DONE, REJECTED
from passepartout.signals import Keyword, Signal
from passepartout.text import one_line
from passepartout.turn import DAEMON, TurnContext

log = logging.getLogger(__name__)

LEDGER_STATE = "mcp-tool"
PLAN_PURPOSE = "mcp-tool-plan"
ACTION_NAME = "mcp-tool"


def card_action(card: Card) -> Action:
    """The action a person approves: pin exactly this card."""
    schema = json.dumps(card.schema, indent=2, sort_keys=True, ensure_ascii=True)
    return Action("mcp", ACTION_NAME, {"server": card.server, "tool": card.name,
                                       "sha256": card.sha256, "description": card.description,
                                       "schema": schema})


def action_card(action: Action) -> Card | None:
    """The card an approved action names, when it is whole and its hash is its own."""
    args = action.args
    try:
        card = Card(str(args["server"]), str(args["tool"]), str(args["description"]),
                    json.loads(str(args["schema"])))
    except (KeyError, ValueError):
        return None
    return card if card.sha256 == str(args.get("sha256", "")) else None


def reasons(card: Card) -> tuple[str, ...]:
    return (f"offer the tool {card.name!r} of the MCP server {card.server!r} to the model, "
            f"with exactly this description and schema (sha256 {card.sha256})",
            f"description: {one_line(card.description, 400)}")


class McpAsker:
    """Asks about the tools that wait and acts on the answers."""

    def __init__(self, agent: Any, store: PinStore, reoffer: Any) -> None:
        self.agent = agent
        self.store = store
        self.reoffer = reoffer  # takes the pins again (the hub's reoffer)
        self.asked: set[tuple[str, str, str]] = set()
        self.pending: dict[tuple[str, str, str], Card] = {}
        self._lock = threading.Lock()

    def attach(self) -> None:
        bus = self.agent.services.heartbeat
        if bus is not None:
            bus.register(self.tick, name="mcp-tool-approval")

    def on_waiting(self, cards: list[Card]) -> None:
        """The hub's list of cards that wait (on every listing): new ones are asked
        about on the next heartbeat."""
        with self._lock:
            for card in cards:
                key = (card.server, card.name, card.sha256)
                if key not in self.asked:
                    self.pending[key] = card

    def tick(self, _tick: Any = None) -> None:
        self.check_plans()
        self.reoffer()
        with self._lock:
            due = list(self.pending.items())
            self.pending.clear()
            self.asked.update(key for key, _ in due)
        for _key, card in due:
            threading.Thread(target=self.ask, args=(card,), daemon=True,
                             name=f"mcp-tool-{card.server}").start()

    # -- asking --------------------------------------------------------------------------

    def ask(self, card: Card) -> bool | None:
        """Ask the person; True/False is their answer, None a Flight Plan written."""
        channel = self.agent.faces
        peers = getattr(channel, "peers", None)
        if channel is not None and callable(peers) and peers():
            signal = Signal(payload={"sensor": Keyword("mcp-tool")},
                            turn=TurnContext(face=DAEMON, origin=ACTION_NAME))
            request = ApprovalRequest(card_action(card), reasons(card), signal)
            if self.agent.approvals.ask_on(channel, request):
                self.store.decide(card, ALLOW)
                self.reoffer()
                return True
            log.info("MCP tool %s/%s not approved: the person said no (it stays withheld)",
                     card.server, card.name)
            return False
        self.flight_plan(card)
        return None

    def flight_plan(self, card: Card) -> None:
        book = self._book()
        if book is None:
            log.warning("MCP tool %s/%s waits for approval; no approvals file to ask in",
                        card.server, card.name)
            return
        action = card_action(card)
        ledger = book.ledger()
        for plan in book.plans():
            known = ledger.get(plan.id, {})
            if known.get("state") == LEDGER_STATE and known.get("hash") == action.digest():
                return  # already asked
        signal = Signal(payload={"sensor": Keyword("mcp-tool")},
                        turn=TurnContext(face="background", origin=ACTION_NAME))
        plan = book.propose(ApprovalRequest(action, reasons(card), signal))
        seal = self.store.seal.sign(PLAN_PURPOSE, plan.id, action.digest())
        book.set_ledger(plan.id, state=LEDGER_STATE, pin_seal=seal)
        log.info("MCP tool %s/%s waits for approval: Flight Plan %s in %s",
                 card.server, card.name, plan.id, book.path)

    # -- answers -------------------------------------------------------------------------

    def check_plans(self) -> None:
        """Act on the person's answers to the MCP tool Flight Plans."""
        book = self._book()
        if book is None:
            return
        ledger = book.ledger()
        for plan in book.plans():
            known = ledger.get(plan.id, {})
            if known.get("state") != LEDGER_STATE or plan.state not in (APPROVED, REJECTED):
                continue
            action = plan.action()
            digest = str(known.get("hash", ""))
            genuine = (self.store.seal.verify(str(known.get("pin_seal", "")), PLAN_PURPOSE,
                                              plan.id, digest)
                       and book.forgery(plan, known) is None)
            card = action_card(action) if action is not None else None
            if action is None or action.digest() != digest or not genuine or card is None:
                why = "this MCP tool approval was edited or not written by the agent; not pinned"
                book.set_ledger(plan.id, state="cancelled")
                book.mark(plan.id, CANCELLED, why)
                log.warning("Flight Plan %s: %s", plan.id, why)
                continue
            decision = ALLOW if plan.state == APPROVED else DENY
            book.set_ledger(plan.id, state="done" if decision == ALLOW else "rejected")
            self.store.decide(card, decision)
            book.mark(plan.id, DONE if decision == ALLOW else REJECTED,
                      f"{'approved' if decision == ALLOW else 'declined'} the MCP tool "
                      f"{card.server}/{card.name} (sha256 {card.sha256})")

    def _book(self) -> Any:
        security = self.agent.services.security
        return getattr(security, "book", None)
