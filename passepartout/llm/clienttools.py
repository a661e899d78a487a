"""What a chat-completions client brings to a turn: its conversation so far, its own
tools, and their results.

The OpenAI-compatible face (:mod:`passepartout.faces.openai`) sends them in the turn's
meta as JSON text: ``client-history`` (the messages before this turn, for a session that
is new to the daemon), ``client-tools`` (function schemas the model may ask for: the
client runs them, the agent never does) and ``client-results`` (the client's answers to
those calls).  Each is checked here; what does not fit is a :class:`ProtocolError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from passepartout.errors import ProtocolError

HISTORY = "client-history"
TOOLS = "client-tools"
RESULTS = "client-results"
_ROLES = frozenset({"user", "assistant", "tool"})


def _load(meta: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    raw = meta.get(key)
    if raw is None or raw == "":
        return []
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ProtocolError(f":{key} must be a JSON list of objects")
    return value


def history(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The client's earlier messages, in the chat-completions shape (user, assistant
    with its tool calls, tool results), checked."""
    out: list[dict[str, Any]] = []
    for message in _load(meta, HISTORY):
        role = message.get("role")
        if role not in _ROLES or not isinstance(message.get("content") or "", str):
            raise ProtocolError(f":{HISTORY}: a message of role {role!r} is not served")
        kept: dict[str, Any] = {"role": role, "content": message.get("content") or ""}
        if role == "assistant" and message.get("tool_calls"):
            kept["tool_calls"] = message["tool_calls"]
            kept["content"] = kept["content"] or None
        if role == "tool":
            kept["tool_call_id"] = str(message.get("tool_call_id") or "")
        out.append(kept)
    return out


def results(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The client's tool results, as tool messages."""
    return [{"role": "tool", "tool_call_id": str(m.get("tool_call_id") or ""),
             "content": str(m.get("content") or "")} for m in _load(meta, RESULTS)]


def schemas(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The client's function schemas."""
    tools = _load(meta, TOOLS)
    for tool in tools:
        function = tool.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise ProtocolError(f":{TOOLS}: each tool must be a function with a name")
    return tools


def names(meta: Mapping[str, Any]) -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in schemas(meta))
