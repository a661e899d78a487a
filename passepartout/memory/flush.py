"""Flush before truncation: trimmed chat turns become memory, deterministically.

When the context must be cut to fit the token budget, the turns about to be
dropped are written to memory first, by code, not left to the model: one node
per turn under a "Conversation log" node (one child per session), holding the
turn's whole text, with the links and paths it mentions as properties. Node ids
derive from the session, the turn's index and its text, so flushing the same
turns twice writes nothing new. The call returns after the commit: once it
returns, the turns are safe to drop.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from passepartout.memory.nodes import MemoryNode
from passepartout.memory.store import MemoryStore

CONVERSATION_LOG_ID = "conversation-log"
CONVERSATION_LOG_TITLE = "Conversation log"
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
_PATH = re.compile(r"(?<![\w/])(?:~|\.{1,2})?/(?:[\w.+-]+/)*[\w.+-]+\.\w+")
TITLE_CHARS = 72


@dataclass(frozen=True)
class Turn:
    """One chat message; ``index`` is its place in the conversation when known."""

    role: str
    content: str
    index: int | None = None
    timestamp: float = 0.0

    @classmethod
    def from_message(cls, msg: Mapping[str, Any], index: int | None = None) -> Turn:
        """From an OpenAI-style message: text parts joined, tool calls as JSON."""
        content = msg.get("content")
        if isinstance(content, list):
            content = "\n".join(
                str(p.get("text", "")) for p in content if isinstance(p, Mapping)
            )
        text = str(content or "")
        if msg.get("tool_calls"):
            text += ("\n" if text else "") + "tool calls: " + json.dumps(
                msg["tool_calls"], sort_keys=True, default=str
            )
        return cls(str(msg.get("role", "unknown")), text, index, float(msg.get("timestamp", 0)))


def turn_node_id(session_id: str, turn: Turn) -> str:
    key = "\0".join([session_id, str(turn.index), turn.role, turn.content])
    return "turn:" + hashlib.sha256(key.encode()).hexdigest()[:24]


def facts(text: str) -> dict[str, str]:
    """Properties drawn from a turn's text: the links and file paths it names."""
    out: dict[str, str] = {}
    links = list(dict.fromkeys(u.rstrip(".,;:!?") for u in _URL.findall(text)))
    paths = list(dict.fromkeys(_PATH.findall(_URL.sub(" ", text))))
    if links:
        out["LINKS"] = " ".join(links)
    if paths:
        out["PATHS"] = " ".join(paths)
    return out


def flush_turns(
    store: MemoryStore,
    turns: Sequence[Turn | Mapping[str, Any]],
    session_id: str = "default",
) -> list[MemoryNode]:
    """Write ``turns`` into memory in one transaction; returns the turn nodes."""
    items = [t if isinstance(t, Turn) else Turn.from_message(t) for t in turns]
    session_node = f"{CONVERSATION_LOG_ID}/{session_id}"
    nodes: list[MemoryNode] = []
    if store.get(CONVERSATION_LOG_ID) is None:
        nodes.append(MemoryNode(CONVERSATION_LOG_ID, CONVERSATION_LOG_TITLE))
    if store.get(session_node) is None:
        nodes.append(
            MemoryNode(session_node, f"Session {session_id}", parent=CONVERSATION_LOG_ID)
        )
    turn_nodes: list[MemoryNode] = []
    for turn in items:
        if not turn.content.strip():
            continue
        first = turn.content.strip().split("\n", 1)[0]
        if len(first) > TITLE_CHARS:
            first = first[: TITLE_CHARS - 1] + "…"
        props = {"ROLE": turn.role, "SESSION": session_id}
        if turn.index is not None:
            props["TURN"] = str(turn.index)
        props.update(facts(turn.content))
        node_id = turn_node_id(session_id, turn)
        if store.get(node_id) is not None:
            continue  # flushed before: nothing to add
        turn_nodes.append(
            MemoryNode(
                node_id,
                f"{turn.role}: {first}",
                parent=session_node,
                properties=props,
                body=turn.content,
                created=turn.timestamp,
                updated=turn.timestamp,
            )
        )
    store.put_many(nodes + turn_nodes)
    return turn_nodes
