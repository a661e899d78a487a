"""A kept session as the TUI showed it: each message a line of the chat, in the words
and styles a live turn has (``You: ...``, the reply, ``→ call(...)``, ``← result``,
``refused ...``, errors)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

OUTPUT_PREVIEW = 200


def one_line(text: str) -> str:
    return " ".join(text.split())


def _args(raw: Any) -> str:
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return one_line(str(raw))
    if isinstance(args, dict):
        return ", ".join(f"{k}={v!r}" for k, v in args.items())
    return "" if args is None else one_line(str(args))


def history_lines(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (text, style) lines of a session's history (``session-history`` entries)."""
    from passepartout.llm.translate import REFUSED_STEP, failed_result

    names: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for message in messages:
        role = str(message.get("role", "")).lstrip(":")
        content = str(message.get("content") or "")
        if role == "user" and content.startswith(REFUSED_STEP):
            out.append((one_line(content), "tool-failed"))
        elif role == "user" and content:
            out.append(("You: " + content, "you"))
        elif role == "assistant":
            if content.strip():
                out.append((content, "agent"))
            for call in message.get("tool-calls") or []:
                call = dict(call) if isinstance(call, dict) else {}
                name = str(call.get("name") or "")
                names[str(call.get("call-id") or "")] = name
                out.append((one_line(f"→ {name}({_args(call.get('arguments'))})")
                            [:OUTPUT_PREVIEW], "tool"))
        elif role == "tool":
            name = names.get(str(message.get("call-id") or ""), str(message.get("name") or ""))
            text = one_line(content)[:OUTPUT_PREVIEW]
            if content.startswith(("refused by policy", "not run:")):
                out.append((f"refused {name}: {content}", "tool-failed"))
            elif failed_result(content):
                out.append((f"← failed: {text}", "tool-failed"))
            else:
                out.append((f"← {text}", "tool"))
        elif role == "denied":
            out.append((f"refused {message.get('name') or ''}: {content}", "tool-failed"))
        elif role == "error":
            out.append((content, "error"))
    return out
