"""Pure translation between the loop and the chat-completions format.

Responses and stream deltas (litellm objects or plain dicts) become a :class:`Reply`;
tool calls become ``Action("tool", ...)``; tool results and gate refusals become
``tool`` messages.  Nothing here touches a socket, so all of it is tested directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from passepartout.loop.actions import Action
from passepartout.signals import Keyword, plist_to_dict

Message = dict[str, Any]


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """An attribute of a litellm object or a key of a dict, alike."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


@dataclass
class Usage:
    """Token counts of one call; ``reported`` is False when they were estimated here."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reported: bool = False


@dataclass
class ToolCallData:
    """One tool call as the model wrote it (arguments still JSON text)."""

    id: str
    name: str
    arguments: str = ""

    def parsed(self) -> dict[str, Any] | None:
        """The arguments as a dict, or None when they are not a JSON object."""
        text = self.arguments.strip() or "{}"
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None


@dataclass
class Reply:
    """What the model answered: text, tool calls, and the usage it reported."""

    text: str = ""
    tool_calls: list[ToolCallData] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


def usage_from(raw: Any) -> Usage | None:
    if raw is None:
        return None
    prompt = int(_get(raw, "prompt_tokens", 0) or 0)
    completion = int(_get(raw, "completion_tokens", 0) or 0)
    details = _get(raw, "prompt_tokens_details")
    cached = int(_get(details, "cached_tokens", 0) or 0)
    # Anthropic reports cache reads apart from its prompt tokens.
    cached = cached or int(_get(raw, "cache_read_input_tokens", 0) or 0)
    if not (prompt or completion):
        return None
    return Usage(prompt, completion, cached, reported=True)


def reply_from_response(response: Any) -> Reply:
    """A whole (unstreamed) completion."""
    choices = _get(response, "choices") or []
    message = _get(choices[0], "message") if choices else None
    calls = [
        ToolCallData(
            str(_get(c, "id") or f"call_{i}"),
            str(_get(_get(c, "function"), "name") or ""),
            str(_get(_get(c, "function"), "arguments") or ""),
        )
        for i, c in enumerate(_get(message, "tool_calls") or [])
    ]
    return Reply(
        text=str(_get(message, "content") or ""),
        tool_calls=calls,
        usage=usage_from(_get(response, "usage")) or Usage(),
        finish_reason=_get(choices[0], "finish_reason") if choices else None,
    )


class StreamAccumulator:
    """Rebuilds a reply from stream chunks; :meth:`add` returns the new text."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, ToolCallData] = {}
        self._usage: Usage | None = None
        self._finish: str | None = None

    def add(self, chunk: Any) -> str:
        usage = usage_from(_get(chunk, "usage"))
        if usage is not None:
            self._usage = usage
        choices = _get(chunk, "choices") or []
        if not choices:
            return ""
        choice = choices[0]
        self._finish = _get(choice, "finish_reason") or self._finish
        delta = _get(choice, "delta")
        for i, part in enumerate(_get(delta, "tool_calls") or []):
            index = _get(part, "index")
            index = i if index is None else int(index)
            call = self._calls.setdefault(index, ToolCallData(id="", name=""))
            call.id = str(_get(part, "id") or call.id)
            fn = _get(part, "function")
            call.name += str(_get(fn, "name") or "") if not call.name else ""
            call.arguments += str(_get(fn, "arguments") or "")
        text = _get(delta, "content") or ""
        if text:
            self._text.append(str(text))
        return str(text)

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def finished(self) -> bool:
        """Whether the reply's finish came: its text and tool calls are whole."""
        return self._finish is not None

    def reply(self) -> Reply:
        calls = [self._calls[i] for i in sorted(self._calls)]
        for n, call in enumerate(calls):
            call.id = call.id or f"call_{n}"
        return Reply(self.text, calls, self._usage or Usage(), self._finish)


# -- messages ----------------------------------------------------------------------------


def assistant_message(reply: Reply) -> Message:
    message: Message = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    return message


def tool_message(call_id: str, content: str, name: str = "") -> Message:
    message: Message = {"role": "tool", "tool_call_id": call_id, "content": content}
    if name:
        message["name"] = name
    return message


def tool_actions(reply: Reply) -> tuple[list[Action], list[ToolCallData]]:
    """The calls with JSON-object arguments as actions, and the calls without."""
    good: list[Action] = []
    bad: list[ToolCallData] = []
    for call in reply.tool_calls:
        args = call.parsed()
        if args is None or not call.name:
            bad.append(call)
        else:
            good.append(Action("tool", call.name, args, call_id=call.id))
    return good, bad


def result_messages(results: Any) -> list[Message]:
    """The ``:tool-output`` payload's results as ``tool`` messages."""
    out: list[Message] = []
    for item in results or []:
        fields = plist_to_dict(item) if isinstance(item, list) else dict(item)
        ok = fields.get("ok")
        output = str(fields.get("output") or "")
        if ok in (None, False, []):
            output = f"error: {output}" if output else "error"
        out.append(tool_message(str(fields.get("call-id") or ""), output,
                                str(fields.get("tool") or "")))
    return out


REFUSED_STEP = "Refused by the gates: "  # a refused step without calls, kept as user text
SIBLING_NOT_RUN = "not run: another call of the same step was refused"  # for the model only
_FAILED = ("error: ", "refused by policy", "not run:")  # the results below begin so


def failed_result(content: str) -> bool:
    """A kept tool result says its call failed, was refused or did not run (the texts of
    :func:`result_messages`, :func:`refusal_messages` and the loop's "not run")."""
    return content == "error" or content.startswith(_FAILED)


def refusal_messages(pending: Sequence[Action], gate_trace: Sequence[str]) -> list[Message]:
    """Tool results for calls the gates stopped, so the model can tell the person.

    The loop refuses a step as a whole: calls that were not themselves refused did not
    run either, and say so.
    """
    out: list[Message] = []
    for action in pending:
        key = f"{action.describe()} was refused"
        reason = next((t[len(key):].strip() for t in reversed(gate_trace)
                       if t.startswith(key)), None)
        text = (f"refused by policy {reason}" if reason
                else SIBLING_NOT_RUN)
        out.append(tool_message(action.call_id or "", text, action.name))
    return out


def repair_tool_pairs(messages: Sequence[Message]) -> list[Message]:
    """Every tool call answered, no orphan tool result (a crash or restart mid-turn
    can leave either, and providers reject both)."""
    out: list[Message] = []
    open_calls: list[tuple[str, str]] = []

    def close_open() -> None:
        for call_id, name in open_calls:
            out.append(tool_message(call_id, "not run: the turn was interrupted", name))
        open_calls.clear()

    for message in messages:
        role = message.get("role")
        if role == "tool":
            ids = [c for c, _ in open_calls]
            call_id = str(message.get("tool_call_id"))
            if call_id in ids:
                open_calls.pop(ids.index(call_id))
                out.append(message)
            continue
        close_open()
        out.append(message)
        for call in message.get("tool_calls") or []:
            open_calls.append((str(call.get("id")), str(call.get("function", {}).get("name", ""))))
    close_open()
    return out


def system_message(prefix: str, *, cache: bool) -> Message:
    """The stable prefix; marked for Anthropic's prompt cache when ``cache``."""
    if cache:
        return {"role": "system", "content": [
            {"type": "text", "text": prefix, "cache_control": {"type": "ephemeral"}}]}
    return {"role": "system", "content": prefix}


_REFUSED = re.compile(r"refused by policy \(\w+\): ")


def _described(call: Mapping[str, Any]) -> str:
    """A kept call as :meth:`passepartout.loop.actions.Action.describe` says it."""
    name = str(call.get("function", {}).get("name", ""))
    try:
        args = json.loads(call.get("function", {}).get("arguments") or "{}")
    except ValueError:
        return name
    if not isinstance(args, dict):
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"


def history_plists(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """A session's history as plists for Emacs: ``(:role :user :content "...")``.

    A call the gates refused carries ``described``, the call as the refusal named it live
    (``write-file(path='x')``), and ``why``, the gates' reasons without the words that
    told the model it was refused."""
    out: list[dict[str, Any]] = []
    calls: dict[str, str] = {}  # call id -> the call described
    for m in messages:
        item: dict[str, Any] = {"role": Keyword(str(m.get("role", ""))),
                                "content": str(m.get("content") or "")}
        if m.get("tool_calls"):
            item["tool-calls"] = [
                {"call-id": str(c.get("id", "")), "name": str(c["function"]["name"]),
                 "arguments": str(c["function"].get("arguments", ""))}
                for c in m["tool_calls"]
            ]
            for c in m["tool_calls"]:
                calls[str(c.get("id", ""))] = _described(c)
        if m.get("tool_call_id"):
            item["call-id"] = str(m["tool_call_id"])
            refused = _REFUSED.match(item["content"]) if m.get("role") == "tool" else None
            if refused and item["call-id"] in calls:
                item["described"] = calls[item["call-id"]]
                item["why"] = item["content"][refused.end():]
        if m.get("name"):
            item["name"] = str(m["name"])
        if m.get("role") == "approval":  # how the person answered (passepartout.llm.shown)
            item.update({"answer": str(m.get("answer") or "denied"),
                         "always": m.get("always") is True, "by": str(m.get("by") or ""),
                         "reason": str(m.get("reason") or "")})
        out.append(item)
    return out
