"""The daemon's events and kept history as ACP session updates (pure translation).

A tool call shows what the folded drawer in Emacs shows: the call as the model
proposed it (``tool_call``, pending), the person's answer when the gates asked, the
gates' refusal with their reason, and the result (``tool_call_update``).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    Cost,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    SessionInfo,
    TextContentBlock,
    TextResourceContents,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
    UsageUpdate,
    UserMessageChunk,
)

from passepartout.protocol import ApprovalAsked, ToolCalled, ToolEvent, ToolFinished
from passepartout.signals import Keyword
from passepartout.text import one_line

Update = AgentMessageChunk | UserMessageChunk | ToolCallStart | ToolCallProgress | UsageUpdate

_KINDS: dict[str, ToolKind] = {  # the built-in tools' names; org-* tools edit
    "shell": "execute", "eval": "execute", "emacs-eval": "execute", "skill-test": "execute",
    "read-file": "read", "write-file": "edit", "remember": "edit", "schedule": "edit",
    "propose-skill": "edit", "grep-search": "search", "memory-search": "search",
}
TITLE_CHARS = 120


def tool_kind(name: str) -> ToolKind:
    if name in _KINDS:
        return _KINDS[name]
    return "edit" if name.startswith("org-") else "other"


def title(name: str, args: dict[str, Any] | None) -> str:
    """``shell: ls -la``, ``read-file: notes.org``: the call in one short line."""
    args = args or {}
    main = next((str(args[k]) for k in ("cmd", "path", "file", "pattern", "query", "url",
                                        "title", "heading", "code") if k in args), None)
    if main is None and args:
        main = ", ".join(f"{k}={v!r}" for k, v in args.items())
    text = f"{name}: {' '.join(main.split())}" if main else name
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


class PromptError(ValueError):
    """A prompt the face refuses before the daemon sees it (too large, too many parts)."""


@dataclass(frozen=True)
class Prompt:
    """A prompt as the daemon gets it: the text, and its resources as attachments (the
    ``:attachments`` plists of ``chat-send``), read and filtered by the daemon."""

    text: str
    attachments: list[list[Any]] = field(default_factory=list)


def resource_path(uri: str, *, claimed: bool = False) -> str | None:
    """The file a resource's URI names (``file:///x``, a path without a scheme), else
    None; with ``claimed``, also the absolute path of any other scheme's URI
    (``zed://h/home/me/.ssh/x``): a place the text claims to come from, to be judged."""
    parsed = urlsplit(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path) or None
    if not parsed.scheme:
        return uri.strip() or None
    path = unquote(parsed.path)
    return path if claimed and path.startswith("/") else None


def prompt_parts(blocks: Sequence[Any]) -> Prompt:
    """The prompt's text blocks, each resource named in it by URI where it came; an
    embedded text resource (a file the person attached, its text inline) and a link to
    a file become attachments, which the daemon judges by the place they claim and
    filters as Emacs's (:mod:`passepartout.server.attachments`).  Too large or too
    many: a :class:`PromptError`."""
    from passepartout.protocol import ITEMS_MAX, PROMPT_BYTES, RESOURCE_BYTES

    parts: list[str] = []
    items: list[list[Any]] = []
    size = 0
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
            size += len(block.text.encode("utf-8", "replace"))
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(
                block.resource, TextResourceContents):
            uri, text = block.resource.uri, block.resource.text
            weight = len(text.encode("utf-8", "replace"))
            if weight > RESOURCE_BYTES:
                shown = one_line(uri, 200, shown=True)
                raise PromptError(f"the resource {shown} is {weight} bytes; at most "
                                  f"{RESOURCE_BYTES} are attached (attach a part of it)")
            size += weight
            parts.append(f"[{uri}]")
            item: list[Any] = [Keyword("name"), uri, Keyword("text"), text]
            path = resource_path(uri, claimed=True)
            if path is not None:  # judged by the place it claims, then filtered
                item += [Keyword("file"), path]
            items.append(item)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.uri}]")
            path = resource_path(block.uri)
            if path is not None:  # read by the daemon, as a file on Emacs's context list
                items.append([Keyword("name"), block.uri, Keyword("file"), path])
    if len(items) > ITEMS_MAX:
        raise PromptError(f"the prompt holds {len(items)} resources; at most {ITEMS_MAX}")
    if size > PROMPT_BYTES:
        raise PromptError(f"the prompt is {size} bytes with its resources; at most "
                          f"{PROMPT_BYTES}")
    return Prompt("\n\n".join(p for p in parts if p), items)


@dataclass
class ToolTracker:
    """The tool calls of one turn.  The daemon reports a call when it runs (after the
    gates), its result, or the gates' refusal; an approval comes before the run.  So a
    call the gates ask about starts at the approval, and its run and result (or the
    refusal, which carries no id) update that same call."""

    prefix: str
    _open: dict[str, str] = field(default_factory=dict)  # id -> tool name, not finished
    _approved: dict[str, str] = field(default_factory=dict)  # id -> name, awaiting its run
    _alias: dict[str, str] = field(default_factory=dict)  # the daemon's call id -> ours
    _count: itertools.count[int] = field(default_factory=itertools.count)

    def on_tool(self, event: ToolEvent) -> Update | None:
        if isinstance(event, ToolCalled):
            approved = next((i for i, n in self._approved.items() if n == event.name), None)
            if approved is not None:
                del self._approved[approved]
                if event.call_id:
                    self._alias[event.call_id] = approved
                return update_tool_call(approved, status="in_progress",
                                        raw_input=event.args or {})
            call_id = self._new(event.name)
            if event.call_id:
                self._alias[event.call_id] = call_id
            return start_tool_call(call_id, title(event.name, event.args),
                                   kind=tool_kind(event.name), status="in_progress",
                                   raw_input=event.args or {})
        if isinstance(event, ToolFinished):
            ours = self._alias.pop(event.call_id or "", None)
            found = ours if ours in self._open else self._find(event.name)
            if found is None:
                return None
            self._open.pop(found, None)
            output = event.output or ""
            return update_tool_call(found, status="completed" if event.ok else "failed",
                                    content=[tool_content(text_block(output))] if output else None,
                                    raw_output={"ok": event.ok, "output": output})
        # a refusal names the action as described: "shell(cmd='rm -rf /')"
        name = event.name.split("(", 1)[0]
        reason = f"Refused by the gates: {event.reason or 'denied'}"
        content = [tool_content(text_block(reason))]
        refused = self._find(name)
        if refused is None:
            return start_tool_call(self._new(name, done=True), title(event.name, None),
                                   kind=tool_kind(name), status="failed", content=content)
        self._open.pop(refused, None)
        return update_tool_call(refused, status="failed", content=content,
                                raw_output={"denied": event.reason or ""})

    def for_approval(self, event: ApprovalAsked) -> str:
        """A new call for what the gates ask about (start it with :func:`approval_call`)."""
        return self._new(event.tool or "")

    def answered(self, call_id: str, yes: bool, always: bool) -> ToolCallProgress:
        if yes:
            self._approved[call_id] = self._open.get(call_id, "")
        said = answer_text({"answer": "allowed" if yes else "denied", "always": always,
                            "by": "acp"})
        return update_tool_call(call_id, status="in_progress" if yes else "failed",
                                content=[tool_content(text_block(said))])

    def _new(self, name: str, *, done: bool = False) -> str:
        """The agent's own id: the model's ids repeat (``call_1`` in every turn with some
        models), and ACP wants an id unique within the session."""
        new = f"{self.prefix}-{next(self._count)}"
        if not done:
            self._open[new] = name
        return new

    def _find(self, name: str) -> str | None:
        return next((i for i, n in self._open.items()
                     if n == name and i not in self._approved), None)


def approval_call(call_id: str, event: ApprovalAsked) -> dict[str, Any]:
    """The call the gates ask about, and their reasons: the fields of its ``tool_call``
    start and of the permission request's."""
    args = event.info.get("args") if isinstance(event.info.get("args"), dict) else {}
    reasons = event.info.get("reasons") or []
    why = "\n".join(f"- {r}" for r in reasons) if isinstance(reasons, list) else str(reasons)
    text = f"{event.description}\n\nThe gates ask because:\n{why}" if why else event.description
    return {"tool_call_id": call_id, "title": title(event.tool or "", args),
            "kind": tool_kind(event.tool or ""), "status": "pending", "raw_input": args,
            "content": [tool_content(text_block(text))]}


def history_updates(messages: Sequence[dict[str, Any]]) -> list[Update]:
    """A kept session replayed: its prompts, replies and tool calls with their results
    and their final status.  Each call gets an id of its own (``history-N-K``, the
    message and the call): the model's ids repeat in a session (``call_1`` in every
    turn with some models), and ACP wants them unique within it.  A call the gates or
    the person refused, that failed or did not run ends ``failed``; one without a
    result (the turn was interrupted) too."""
    from passepartout.llm.translate import REFUSED_STEP, failed_result

    out: list[Update] = []
    waiting: dict[str, list[str]] = {}  # the model's id -> ours, calls without a result
    unanswered: list[str] = []
    ahead: dict[str, str] = {}  # tool name -> ours: asked about before its call was kept

    def interrupted() -> None:
        for call_id in unanswered:
            out.append(update_tool_call(call_id, status="failed", content=[tool_content(
                text_block("Not run: the turn was interrupted."))]))
        unanswered.clear()
        waiting.clear()

    for n, message in enumerate(messages):
        role = str(message.get("role", "")).lstrip(":")
        content = str(message.get("content") or "")
        if role == "tool":
            ours = waiting.get(str(message.get("call-id") or ""))
            if ours:
                call_id = ours.pop(0)
                unanswered.remove(call_id)
                out.append(update_tool_call(
                    call_id, status="failed" if failed_result(content) else "completed",
                    content=[tool_content(text_block(content))] if content else None))
            continue
        if role == "approval":  # the person's answer, where it came in the turn
            out += _replayed_answer(n, message, waiting, ahead)
            continue
        interrupted()  # a call still unanswered when the conversation moved on
        if role == "user":
            ahead.clear()
        if role == "user" and content.startswith(REFUSED_STEP):
            out.append(update_agent_message_text(f"\n{content}\n"))  # said by the gates
        elif role == "user" and content:
            out.append(update_user_message_text(content))
        elif role == "error":  # kept as the person saw it (passepartout.llm.shown)
            out.append(update_agent_message_text(f"\nError: {content}\n"))
        elif role == "denied":
            described = str(message.get("name") or "")
            name = described.split("(", 1)[0]
            refusal = [tool_content(text_block(f"Refused by the gates: {content or 'denied'}"))]
            if name in ahead:  # the call the person said no to
                out.append(update_tool_call(ahead.pop(name), status="failed", content=refusal))
                continue
            out.append(start_tool_call(
                f"history-{n}-0", title(described, None), kind=tool_kind(name),
                status="failed", content=refusal))
        elif role == "assistant":
            if content:
                out.append(update_agent_message_text(content))
            for k, call in enumerate(_calls(message.get("tool-calls"))):
                call_id = f"history-{n}-{k}"
                waiting.setdefault(str(call.get("call-id") or ""), []).append(call_id)
                unanswered.append(call_id)
                name = str(call.get("name") or "")
                args = _json_args(call.get("arguments"))
                if name in ahead:  # the call the person was asked about, now run
                    call_id = ahead.pop(name)
                    waiting[str(call.get("call-id") or "")][-1] = call_id
                    unanswered[-1] = call_id
                    out.append(update_tool_call(call_id, title=title(name, args),
                                                status="in_progress", raw_input=args))
                    continue
                out.append(start_tool_call(call_id, title(name, args), kind=tool_kind(name),
                                           status="in_progress", raw_input=args))
    interrupted()
    return out


def answer_text(message: dict[str, Any]) -> str:
    """A kept answer to an approval in the words the permission's answer was said live
    (``You allowed once.``); why, when nobody answered; and which face, when another
    than this one did."""
    yes = message.get("answer") == "allowed"
    by, reason = str(message.get("by") or ""), str(message.get("reason") or "")
    if not yes and not by:
        return f"Not allowed: {reason or 'no answer'}."
    how = ("allowed" if yes else "rejected") + (" always" if message.get("always") is True
                                                else " once")
    return f"You {how}" + (f" (answered in {by})." if by != "acp" else ".")


def _replayed_answer(n: int, message: dict[str, Any], waiting: dict[str, list[str]],
                     ahead: dict[str, str]) -> list[Update]:
    """The answer to an approval, on the call it was about: the one the model's kept
    call names, else a call of its own that the call kept after it (a turn answered
    without the model keeps its call once it ran) takes on."""
    yes = message.get("answer") == "allowed"
    out: list[Update] = []
    ours = waiting.get(str(message.get("call-id") or ""))
    if ours:
        call_id = ours[-1]
    else:
        described = str(message.get("name") or "")
        name = described.split("(", 1)[0]
        call_id = f"history-{n}-0"
        ahead[name] = call_id
        out.append(start_tool_call(call_id, title(described, None), kind=tool_kind(name),
                                   status="pending"))
    out.append(update_tool_call(call_id, status="in_progress" if yes else "failed",
                                content=[tool_content(text_block(answer_text(message)))]))
    return out


def session_info(found: dict[str, Any], cwd: str) -> SessionInfo:
    return SessionInfo(session_id=str(found.get("id")), cwd=cwd,
                       title=str(found.get("title") or "") or None,
                       updated_at=str(found.get("last-activity") or "") or None)


def usage_update(usage: dict[str, Any], context_max: int | None) -> UsageUpdate | None:
    """The session's context and cost from the ledger: ``used`` is what its latest
    model call sent, ``size`` the window of that call's model as this agent fills it (the
    model's own, at most ``CONTEXT_MAX_TOKENS``).  An unknown window is no update: a
    made-up size would be a meter that lies (``size`` is required)."""
    session, last = usage.get("session"), usage.get("last")
    if not isinstance(session, dict) or not isinstance(last, dict):
        return None
    window = context_window(str(last.get("model") or ""))
    if window is None:
        return None
    size = min(window, context_max) if context_max else window
    return UsageUpdate(session_update="usage_update", used=int(last.get("tokens-in") or 0),
                       size=size,
                       cost=Cost(amount=float(session.get("cost") or 0.0), currency="USD"))


@functools.cache
def context_window(model: str) -> int | None:
    """The model's input window: the local model's from its weights, another's from
    litellm's bundled price list (read as data: no network, and without importing
    litellm); None when unknown."""
    from passepartout.llm.local import CONTEXT_TOKENS, LOCAL_MODEL

    if model == LOCAL_MODEL or model == LOCAL_MODEL.split("/", 1)[1]:
        return CONTEXT_TOKENS
    spec = importlib.util.find_spec("litellm")
    roots = list(spec.submodule_search_locations or []) if spec else []
    if not roots or not model:
        return None
    path = Path(roots[0]) / "model_prices_and_context_window_backup.json"
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for name in (model, model.split("/", 1)[-1]):
        entry = table.get(name)
        if isinstance(entry, dict) and isinstance(entry.get("max_input_tokens"), int):
            return int(entry["max_input_tokens"])
    return None


def _calls(value: Any) -> list[dict[str, Any]]:
    from passepartout.wire.client import as_dict

    if not isinstance(value, list):
        return []
    return [v if isinstance(v, dict) else as_dict(v) for v in value if isinstance(v, list | dict)]


def _json_args(raw: Any) -> dict[str, Any]:
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {"arguments": str(raw)}
    return value if isinstance(value, dict) else {}
