"""MCP tools the person approved, pinned by hash: a server's tool is offered to the model
only when the person saw its exact name, description and schema and said yes.

A tool's card is what the model would read of it: the server's name, the tool's name,
its description and its input schema; its pin is the sha256 of those four as canonical
JSON.  The decisions live in ``<state>/mcp-pins.json`` (the state directory every tool
refuses and the sandbox hides), one per server and tool, each with the agent's seal
(purpose ``"mcp-tool"``) over the server, the name, the hash and the decision: a record
anything else wrote or edited has no valid seal and is ignored (logged), so the tool
waits for the person again.  A tool whose card changed (another hash) waits too.

The tools waiting for an answer are listed in ``<state>/mcp-waiting.json`` with their
cards, for ``passepartout mcp tools`` and ``passepartout mcp allow``: that list is only
a queue of questions (nothing in it is trusted; what is allowed is the card shown).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passepartout.security.trust.records import record_list, write_records
from passepartout.security.trust.seal import Seal

log = logging.getLogger(__name__)

PURPOSE = "mcp-tool"
FILE_NAME = "mcp-pins.json"
WAITING_FILE = "mcp-waiting.json"
ALLOW, DENY = "allow", "deny"
# What a tool is, seen from its pins: offered, declined, never seen, or changed.
APPROVED, DECLINED, NEW, CHANGED = "approved", "declined", "new", "changed"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


@dataclass(frozen=True)
class Card:
    """What the person approves of one tool: exactly what the model would read."""

    server: str
    name: str
    description: str
    schema: Any

    @property
    def sha256(self) -> str:
        text = canonical_json([self.server, self.name, self.description, self.schema])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def as_dict(self) -> dict[str, Any]:
        return {"server": self.server, "name": self.name, "description": self.description,
                "schema": self.schema, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, data: Any) -> Card | None:
        if not isinstance(data, dict):
            return None
        server, name, description = data.get("server"), data.get("name"), data.get("description")
        if not all(isinstance(x, str) for x in (server, name, description)):
            return None
        return cls(str(server), str(name), str(description), data.get("schema"))

    def shown(self) -> str:
        """The card as the person reads it (the schema as indented JSON)."""
        schema = json.dumps(self.schema, indent=2, sort_keys=True, ensure_ascii=True)
        return (f"server: {self.server}\ntool: {self.name}\nsha256: {self.sha256}\n"
                f"description:\n{self.description}\nschema:\n{schema}")


@dataclass(frozen=True)
class Pin:
    server: str
    name: str
    sha256: str
    decision: str
    at: float


class PinStore:
    """The sealed decisions of one state directory, and its queue of questions."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = Path(state_dir)
        self.path = self.state_dir / FILE_NAME
        self.waiting_path = self.state_dir / WAITING_FILE
        self._seal: Seal | None = None
        self._lock = threading.Lock()

    @property
    def seal(self) -> Seal:
        if self._seal is None:  # the key is read (or made) only when a record is needed
            self._seal = Seal.in_state(self.state_dir)
        return self._seal

    # -- the decisions --------------------------------------------------------------------

    def raw(self) -> list[dict[str, Any]]:
        return record_list(self.path, "MCP tool pins", "pins")

    def _sign(self, server: str, name: str, sha256: str, decision: str) -> str:
        return self.seal.sign(PURPOSE, server, name, sha256, decision)

    def pins(self) -> list[Pin]:
        """The decisions that carry the agent's seal; the others are logged, left out."""
        valid: list[Pin] = []
        for entry in self.raw():
            parts = [str(entry.get(k, "")) for k in ("server", "name", "sha256", "decision")]
            if parts[3] not in (ALLOW, DENY) or not self.seal.verify(
                    str(entry.get("seal", "")), PURPOSE, *parts):
                log.warning("ignoring an MCP tool pin for %s/%s without the agent's seal",
                            parts[0][:40], parts[1][:64])
                continue
            stamp = entry.get("at")
            valid.append(Pin(parts[0], parts[1], parts[2], parts[3],
                             float(stamp) if isinstance(stamp, int | float) else 0.0))
        return valid

    def state(self, card: Card, pins: list[Pin] | None = None) -> str:
        """approved, declined (this exact card), changed (another was approved) or new."""
        digest = card.sha256
        found = [p for p in (self.pins() if pins is None else pins)
                 if p.server == card.server and p.name == card.name]
        if any(p.sha256 == digest and p.decision == DENY for p in found):
            return DECLINED
        if any(p.sha256 == digest and p.decision == ALLOW for p in found):
            return APPROVED
        return CHANGED if any(p.decision == ALLOW for p in found) else NEW

    def decide(self, card: Card, decision: str) -> None:
        """Record the person's ``decision`` on exactly this card (sealed); it replaces
        what was decided of the same tool before."""
        self.record(card.server, card.name, card.sha256, decision)
        self.drop_waiting(card)

    def record(self, server: str, name: str, sha256: str, decision: str) -> None:
        """Record ``decision`` on the card of ``sha256`` (sealed), in place of the
        tool's earlier one."""
        assert decision in (ALLOW, DENY)
        with self._lock:
            kept = [e for e in self.raw()
                    if not (e.get("server") == server and e.get("name") == name)]
            kept.append({"server": server, "name": name, "sha256": sha256,
                         "decision": decision, "at": time.time(),
                         "seal": self._sign(server, name, sha256, decision)})
            write_records(self.path, {"pins": kept})
        log.info("MCP tool %s/%s %s (sha256 %s)", server, name,
                 "approved" if decision == ALLOW else "declined", sha256)

    # -- the questions --------------------------------------------------------------------

    def waiting(self) -> list[Card]:
        """The cards waiting for the person's answer, as the agent last saw them."""
        cards = [Card.from_dict(e) for e in record_list(self.waiting_path,
                                                        "MCP tools waiting", "waiting")]
        return [c for c in cards if c is not None]

    def set_waiting(self, server: str, cards: list[Card]) -> None:
        """The cards of ``server`` that wait now (the other servers' stay); nothing is
        written where no agent has its state yet (``doctor`` before the first start)."""
        if not self.state_dir.is_dir():
            return
        with self._lock:
            before = self.waiting()
            now = [c for c in before if c.server != server] + list(cards)
            if now == before:
                return
            write_records(self.waiting_path, {"waiting": [c.as_dict() for c in now]})

    def drop_waiting(self, card: Card) -> None:
        with self._lock:
            before = self.waiting()
            now = [c for c in before if (c.server, c.name) != (card.server, card.name)]
            if len(now) != len(before):
                write_records(self.waiting_path, {"waiting": [c.as_dict() for c in now]})
