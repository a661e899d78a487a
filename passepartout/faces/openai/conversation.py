"""A chat-completions request read as one turn of a Passepartout session.

A client of the chat-completions protocol sends the whole conversation each time.  The
daemon keeps each conversation as a session of its own, found again by the history's
prefix: after each turn this face remembers the digest of the messages so far (the
client's and the reply it gave), and a request whose messages begin with a remembered
history continues that session with what follows it (a new user message, or the
results of the client's own tools).  A request no remembered history begins is a new
session, whose earlier messages are handed to the daemon as its history.

Everything here is pure: reading and checking the request (a clear :class:`BadRequest`
for what does not fit) and the digests; :mod:`passepartout.faces.openai.app` serves it.
"""

from __future__ import annotations

import collections
import hashlib
import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

MODEL = "passepartout"
TIERS = ("cognition", "reasoning")
MODELS = (MODEL, *(f"{MODEL}/{tier}" for tier in TIERS))
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
MAX_MESSAGES = 2000
MAX_TEXT = 1_000_000  # characters of one message's text
MAX_TOOLS = 128
KEPT_CONVERSATIONS = 4096


class BadRequest(Exception):
    """A request that does not fit the protocol: a 400 with this message."""

    def __init__(self, message: str, param: str | None = None,
                 code: str = "invalid_request", status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        self.status = status


@dataclass(frozen=True)
class ClientTool:
    """A function the client offers: the model may ask for it, the client runs it."""

    name: str
    schema: dict[str, Any]


@dataclass
class Request:
    """One chat-completions request, checked."""

    model: str
    tier: str | None
    messages: list[dict[str, Any]]
    stream: bool = False
    include_usage: bool = False
    tools: list[ClientTool] = field(default_factory=list)
    tool_choice_none: bool = False
    user: str | None = None


def read_request(body: Any) -> Request:
    """The request of a decoded JSON body; :class:`BadRequest` when it does not fit."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required: one of " + ", ".join(MODELS), "model")
    if model not in MODELS:
        raise BadRequest(f"the model {model!r} does not exist; this server offers "
                         + ", ".join(MODELS), "model", "model_not_found", 404)
    tier = model.split("/", 1)[1] if "/" in model else None
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list", "messages")
    if len(messages) > MAX_MESSAGES:
        raise BadRequest(f"at most {MAX_MESSAGES} messages", "messages")
    checked = [_message(m, i) for i, m in enumerate(messages)]
    stream = body.get("stream", False)
    if not isinstance(stream, bool | None):
        raise BadRequest("'stream' must be true or false", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise BadRequest("'stream_options' must be an object", "stream_options")
    n = body.get("n", 1)
    if n not in (1, None):
        raise BadRequest("only one choice (n = 1) is served", "n")
    user = body.get("user")
    tool_choice = body.get("tool_choice")
    return Request(model=model, tier=tier, messages=checked, stream=bool(stream),
                   include_usage=options.get("include_usage") is True,
                   tools=_tools(body.get("tools")),
                   tool_choice_none=tool_choice == "none",
                   user=user if isinstance(user, str) and user else None)


def _message(message: Any, index: int) -> dict[str, Any]:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise BadRequest(f"{where} must be an object", where)
    role = message.get("role")
    if role not in ROLES:
        raise BadRequest(f"{where}.role must be one of " + ", ".join(sorted(ROLES)), where)
    out: dict[str, Any] = {"role": "system" if role == "developer" else role,
                           "content": _text(message.get("content"), where)}
    if role == "assistant" and message.get("tool_calls"):
        calls = message["tool_calls"]
        if not isinstance(calls, list):
            raise BadRequest(f"{where}.tool_calls must be a list", where)
        out["tool_calls"] = [_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)]
    if role == "tool":
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise BadRequest(f"{where}.tool_call_id is required for a tool message", where)
        out["tool_call_id"] = call_id
    elif role in ("user", "system") and not out["content"]:
        raise BadRequest(f"{where}.content must not be empty", where)
    return out


def _text(content: Any, where: str) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise BadRequest(f"{where}.content: only text parts are served, not {kind!r}",
                                 where)
            if not isinstance(part.get("text"), str):
                raise BadRequest(f"{where}.content: a text part needs its text", where)
            parts.append(part["text"])
        text = "\n".join(parts)
    else:
        raise BadRequest(f"{where}.content must be a string or a list of text parts", where)
    if len(text) > MAX_TEXT:
        raise BadRequest(f"{where}.content is longer than {MAX_TEXT} characters", where)
    return text


def _call(call: Any, where: str) -> dict[str, Any]:
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        raise BadRequest(f"{where} must be a function call", where)
    function = call["function"]
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, str | None):
        raise BadRequest(f"{where}.function needs a name and its arguments as a string", where)
    return {"id": str(call.get("id") or ""), "type": "function",
            "function": {"name": name, "arguments": arguments or "{}"}}


def _tools(tools: Any) -> list[ClientTool]:
    if tools is None:
        return []
    if not isinstance(tools, list) or len(tools) > MAX_TOOLS:
        raise BadRequest(f"'tools' must be a list of at most {MAX_TOOLS} functions", "tools")
    out: list[ClientTool] = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(
                function, dict):
            raise BadRequest(f"{where} must be {{'type': 'function', 'function': {{...}}}}",
                             where)
        name = function.get("name")
        if not isinstance(name, str) or not name or len(name) > 64 or not all(
                c.isalnum() or c in "_-" for c in name):
            raise BadRequest(f"{where}.function.name must be 1-64 letters, digits, _ or -",
                             where)
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        if not isinstance(parameters, dict):
            raise BadRequest(f"{where}.function.parameters must be a JSON schema object", where)
        schema = {"type": "function", "function": {
            "name": name, "description": str(function.get("description") or "")[:4000],
            "parameters": parameters}}
        out.append(ClientTool(name, schema))
    return out


# -- one turn -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnInput:
    """What the daemon gets for one request: the new prompt or tool results, and, for a
    new session, the history before them."""

    session: str
    new: bool
    text: str
    tool_results: list[dict[str, Any]]
    history: list[dict[str, Any]]
    system: str | None


def split(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The conversation so far and what the client adds now: the trailing user messages,
    or the trailing tool results (with any user message after them)."""
    end = len(messages)
    start = end
    while start > 0 and messages[start - 1]["role"] in ("user", "tool"):
        start -= 1
    if start == end:
        raise BadRequest("the last message must be the user's (or the results of tools)",
                         "messages")
    return messages[:start], messages[start:]


def digest(messages: list[dict[str, Any]]) -> str:
    """A conversation's digest: roles, texts (trimmed) and tool calls, nothing else."""
    canon = []
    for m in messages:
        item: list[Any] = [m["role"], (m.get("content") or "").strip()]
        if m.get("tool_calls"):
            item.append([[c["id"], c["function"]["name"]] for c in m["tool_calls"]])
        if m.get("tool_call_id"):
            item.append(m["tool_call_id"])
        canon.append(item)
    return hashlib.sha256(json.dumps(canon, ensure_ascii=False).encode()).hexdigest()


class Conversations:
    """The sessions this face started, by the digest of their history (bounded)."""

    def __init__(self, keep: int = KEPT_CONVERSATIONS) -> None:
        self._known: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.keep = keep

    def remember(self, messages: list[dict[str, Any]], session: str) -> None:
        with self._lock:
            self._known[digest(messages)] = session
            self._known.move_to_end(digest(messages))
            while len(self._known) > self.keep:
                self._known.popitem(last=False)

    def find(self, history: list[dict[str, Any]]) -> str | None:
        with self._lock:
            return self._known.get(digest(history))

    def turn(self, request: Request) -> TurnInput:
        """The turn a request asks for, in the session its history belongs to."""
        before, added = split(request.messages)
        system = "\n\n".join(m["content"] for m in request.messages
                             if m["role"] == "system" and m["content"]) or None
        session = self.find(before) if before else None
        results = [m for m in added if m["role"] == "tool"]
        text = "\n\n".join(m["content"] for m in added if m["role"] == "user")
        if results and added[0]["role"] != "tool":
            raise BadRequest("tool results must follow the assistant's tool calls", "messages")
        if session is not None:
            return TurnInput(session, False, text, results, [], system)
        history = [m for m in before if m["role"] != "system"]
        return TurnInput(f"openai-{uuid.uuid4().hex[:16]}", True, text, results, history,
                         system)
