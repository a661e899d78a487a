"""A kept session as the TUI showed it: each message a line of the chat, in the words
and styles a live turn has (``You: ...``, the reply, ``→ call(...)``, ``← result``,
``refused ...``, errors)."""

from __future__ import annotations

import json
import re
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


def _call(value: Any) -> dict[str, Any]:
    """A kept call: a dict, or the plist the daemon sends it as."""
    from passepartout.errors import ProtocolError
    from passepartout.protocol import as_dict

    if isinstance(value, dict):
        return value
    try:
        return as_dict(value) if isinstance(value, list) else {}
    except ProtocolError:
        return {}


def approval_line(message: dict[str, Any]) -> str:
    """A kept answer to an approval (``session-history``'s ``approval`` entry) in the
    words the dialog's answer was said: ``Allowed once: ...``, ``Allowed always: ...``,
    ``Denied: ...``; why, when nobody answered; and which face, when another did."""
    allowed = message.get("answer") == "allowed"
    always = message.get("always") is True
    by, reason = str(message.get("by") or ""), str(message.get("reason") or "")
    if allowed:
        word = "Allowed always" if always else "Allowed once"
    else:
        word = "Denied always" if always else "Denied"
        if not by and reason:
            word += f" ({reason})"
    where = f" [answered in {by}]" if by and by != "tui" else ""
    return f"{word}: {message.get('content') or ''}{where}"


def history_lines(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """The (text, style) lines of a session's history (``session-history`` entries).

    A call's line comes where the live chat showed it, when it ran: after the answers
    to the step's approvals, just before its result; a refused call has none."""
    from passepartout.llm.translate import REFUSED_STEP, SIBLING_NOT_RUN, failed_result

    names: dict[str, str] = {}
    held: dict[str, tuple[str, str]] = {}  # call id -> its line, until its result
    out: list[tuple[str, str]] = []

    def flush() -> None:  # calls left without a result: shown where the step ended
        out.extend(held.values())
        held.clear()

    for message in messages:
        role = str(message.get("role", "")).lstrip(":")
        content = str(message.get("content") or "")
        if role not in ("tool", "approval"):
            flush()
        if role == "user" and content.startswith(REFUSED_STEP):
            out.append((one_line(content), "tool-failed"))
        elif role == "user" and content:
            out.append(("You: " + content, "you"))
        elif role == "assistant":
            if content.strip():
                out.append((content, "agent"))
            for n, each in enumerate(message.get("tool-calls") or []):
                call = _call(each)
                name = str(call.get("name") or "")
                call_id = str(call.get("call-id") or "") or f"#{n}"
                names[call_id] = f"{name}({_args(call.get('arguments'))})"
                held[call_id] = (one_line(f"→ {name}({_args(call.get('arguments'))})")
                                 [:OUTPUT_PREVIEW], "tool")
        elif role == "tool":
            call_id = str(message.get("call-id") or "")
            name = names.get(call_id, str(message.get("name") or ""))
            line = held.pop(call_id, None)
            text = one_line(content)[:OUTPUT_PREVIEW]
            if content == SIBLING_NOT_RUN:
                continue  # a call that never started: live, only its refused sibling showed
            if content.startswith(("refused by policy", "not run:")):
                # As the refusal was said live: the call, and the gates' reasons.
                why = re.sub(r"\Arefused by policy \(\w+\): ", "", content)
                out.append((f"refused {name}: {why}", "tool-failed"))
                continue
            if line is not None:
                out.append(line)
            if failed_result(content):
                out.append((f"← failed: {text}", "tool-failed"))
            else:
                out.append((f"← {text}", "tool"))
        elif role == "approval":
            out.append((approval_line(message), "notice"))
        elif role == "denied":
            out.append((f"refused {message.get('name') or ''}: {content}", "tool-failed"))
        elif role == "error":
            out.append((content, "error"))
    flush()
    return out
