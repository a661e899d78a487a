"""The daemon's contract with its faces, named once.

Every event the daemon sends a client is one frozen dataclass of :data:`Event`, carried
on the wire as an EPC ``call`` of its protocol name (``chunk``, ``tool``, ``done``,
``approval``, ``org-edit``, ``notify``, ``error``, ``status``) with positional arguments.
:func:`encode` gives the name and arguments of an event, :func:`decode` the event of a
name and arguments; both refuse a name outside :data:`EVENT_NAMES`, the allow-list that
Emacs keeps too (``passepartout--callbacks``, one alist of names to its callbacks).

A person's answer to an approval is one :data:`ApprovalAnswer`: :class:`Allow` or
:class:`Deny` (``always`` keeps it as a standing grant), or :class:`Evaluated`, the
result Emacs gives with its yes to an ``emacs-eval`` it ran after showing the code.

What a face asks the daemon is one :class:`Request` per method (:data:`REQUESTS`, by wire
name: ``chat-send``, ``approval-answer``, ``status`` ...): a face sends
``request.args()`` under ``request.NAME`` and reads the reply with
``request.result(value)``; the server reads a call with :func:`decode_request`, which
refuses an unknown name or arguments that do not fit with a typed :class:`MethodError`.

Nothing here knows the loop or a face; the server and every client import it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Generic, TypeAlias, TypeVar, cast

from passepartout.errors import ProtocolError
from passepartout.signals import Keyword, Symbol, plist_to_dict
from passepartout.text import one_line

log = logging.getLogger(__name__)

CHUNK = "chunk"
TOOL = "tool"
DONE = "done"
ERROR = "error"
APPROVAL = "approval"
NOTIFY = "notify"
STATUS = "status"
ORG_EDIT = "org-edit"  # an org tool's edit, shown in a buffer visiting the file

# The only callbacks the daemon ever sends (Emacs refuses any other name too).
EVENT_NAMES = frozenset({CHUNK, TOOL, DONE, ERROR, APPROVAL, NOTIFY, STATUS, ORG_EDIT})

# What a turn may attach (the daemon refuses more; a face says so before sending).
ITEMS_MAX = 20  # parts of one turn
REASON_MAX = 200  # characters of the reason a face gives for a no
RESOURCE_BYTES = 1_000_000  # bytes of one resource's text an ACP client may embed
PROMPT_BYTES = 3_000_000  # bytes of a whole ACP prompt, its resources included

# The faces a client may say it is (``hello``'s ``:client``): a turn it sends carries
# that name as its source.  Emacs is the face of a client that names no other.
FACES = frozenset({"emacs", "terminal", "tui", "acp", "telegram", "signal", "mcp", "cli",
                   "openai"})
DEFAULT_FACE = "emacs"


def face_name(client: Any) -> str:
    """The face a ``hello``'s ``:client`` names: one of :data:`FACES`, else Emacs."""
    return client if isinstance(client, str) and client in FACES else DEFAULT_FACE


# -- events ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A piece of the reply's text, in order."""

    session: str
    turn: str
    text: str


@dataclass(frozen=True)
class ToolCalled:
    """A tool about to run (it passed the gates)."""

    session: str
    turn: str
    name: str
    args: dict[str, Any] | None = None
    call_id: str | None = None


@dataclass(frozen=True)
class ToolRequested:
    """The model asked for a tool the client offered (the OpenAI-compatible face's
    client runs it; the agent never does); ``arguments`` is JSON text."""

    session: str
    turn: str
    name: str
    arguments: str
    call_id: str | None = None


@dataclass(frozen=True)
class ToolFinished:
    """A tool ran: whether it succeeded, and its output."""

    session: str
    turn: str
    name: str
    ok: bool
    output: str | None = None
    call_id: str | None = None


@dataclass(frozen=True)
class ToolDenied:
    """The gates refused an action (``name`` is the action described), and why."""

    session: str
    turn: str
    name: str
    reason: str | None = None


ToolEvent: TypeAlias = ToolCalled | ToolFinished | ToolDenied


@dataclass(frozen=True)
class ApprovalAsked:
    """The gates ask the person; answer with the ``approval-answer`` method and
    ``approval_id``.  ``turn`` is None for an approval no chat turn asked."""

    approval_id: str
    session: str | None
    turn: str | None
    description: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def tool(self) -> str | None:
        value = self.info.get("tool")
        return str(value) if value else None


@dataclass(frozen=True)
class TurnError:
    session: str
    turn: str
    kind: str
    message: str


@dataclass(frozen=True)
class Done:
    """The turn is over (its last event); ``model`` answered it, ``local`` on this machine."""

    session: str
    turn: str
    cancelled: bool = False
    model: str | None = None
    local: bool | None = None


@dataclass(frozen=True)
class Notice:
    """A notification for every attached client (a cron result, a warning)."""

    level: str
    text: str


@dataclass(frozen=True)
class StatusChanged:
    info: dict[str, Any]


@dataclass(frozen=True)
class OrgEdited:
    """An org tool edited ``file`` from ``old`` to ``new`` (Emacs gives a buffer visiting
    it the same edit)."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Disconnected:
    """The connection is gone (the daemon stopped, or the face was closed).  A client
    makes it itself: it never crosses the wire."""

    reason: str


Event: TypeAlias = (Chunk | ToolCalled | ToolRequested | ToolFinished | ToolDenied
                    | ApprovalAsked | TurnError | Done | Notice | StatusChanged | OrgEdited
                    | Disconnected)
Listener = Callable[[Event], None]


def turn_of(event: Event) -> tuple[str, str] | None:
    """The (session, turn) an event belongs to; None for one that belongs to no turn."""
    if isinstance(event, Chunk | ToolCalled | ToolRequested | ToolFinished | ToolDenied
                  | TurnError | Done):
        return (event.session, event.turn)
    if isinstance(event, ApprovalAsked) and event.session and event.turn:
        return (event.session, event.turn)
    return None


def encode(event: Event) -> tuple[str, list[Any]]:
    """The protocol name and positional arguments of ``event`` on the wire."""
    match event:
        case Chunk(session, turn, text):
            return CHUNK, [session, turn, text]
        case ToolCalled(session, turn, name, args, call_id):
            return TOOL, [session, turn, {"event": Symbol("tool"), "name": name,
                                          "args": args or None, "call-id": call_id}]
        case ToolRequested(session, turn, name, arguments, call_id):
            return TOOL, [session, turn, {"event": Symbol("client-tool"), "name": name,
                                          "arguments": arguments, "call-id": call_id}]
        case ToolFinished(session, turn, name, ok, output, call_id):
            return TOOL, [session, turn, {"event": Symbol("tool-result"), "name": name,
                                          "ok": ok, "output": output, "call-id": call_id}]
        case ToolDenied(session, turn, name, reason):
            return TOOL, [session, turn, {"event": Symbol("denied"), "name": name,
                                          "reason": reason}]
        case ApprovalAsked(approval_id, session, turn, description, info):
            return APPROVAL, [approval_id, session, turn, description, info]
        case TurnError(session, turn, kind, message):
            return ERROR, [session, turn, kind, message]
        case Done(session, turn, cancelled, model, local):
            done: dict[str, Any] = {"cancelled": cancelled}
            if model is not None:
                done.update(model=model, local=bool(local))
            return DONE, [session, turn, done]
        case Notice(level, text):
            return NOTIFY, [Symbol(level), text]
        case StatusChanged(info):
            return STATUS, [info]
        case OrgEdited(file, old, new):
            return ORG_EDIT, [file, old, new]
        case Disconnected():
            raise ProtocolError("a disconnection is not sent on the wire")
    raise ProtocolError(f"not an event of the protocol: {type(event).__name__}")


def decode(name: str, args: list[Any] | None) -> Event | None:
    """The event of one callback; None (logged) for a name outside :data:`EVENT_NAMES`
    or arguments that do not fit it."""
    if name not in EVENT_NAMES:
        log.warning("callback %s is not in the protocol: dropped", name)
        return None
    try:
        return _decode(name, list(args or []) + [None] * 5)
    except (ProtocolError, TypeError, ValueError, IndexError) as err:
        log.warning("callback %s with unexpected arguments dropped: %s", name, err)
        return None


def _decode(name: str, a: list[Any]) -> Event:
    if name == CHUNK:
        return Chunk(str(a[0]), str(a[1]), str(a[2] or ""))
    if name == TOOL:
        return _decode_tool(str(a[0]), str(a[1]), as_dict(a[2]))
    if name == APPROVAL:
        info = _plist(a[4]) or {}
        if "args" in info:
            info["args"] = _plist(info["args"]) or {}
        return ApprovalAsked(str(a[0]), _opt(a[1]), _opt(a[2]), str(a[3] or ""), info)
    if name == ERROR:
        return TurnError(str(a[0]), str(a[1]), str(a[2] or "error"), str(a[3] or ""))
    if name == DONE:
        info = as_dict(a[2])
        model = _opt(info.get("model"))
        return Done(str(a[0]), str(a[1]), bool(info.get("cancelled")), model,
                    bool(info.get("local")) if model is not None else None)
    if name == NOTIFY:
        return Notice(str(a[0] or "info"), str(a[1] or ""))
    if name == STATUS:
        return StatusChanged(as_dict(a[0]))
    # ORG_EDIT
    return OrgEdited(str(a[0]), str(a[1] or ""), str(a[2] or ""))


def _decode_tool(session: str, turn: str,
                 info: dict[str, Any]) -> ToolEvent | ToolRequested:
    kind = str(info.get("event") or "tool")
    name = str(info.get("name") or "")
    call_id = _opt(info.get("call-id"))
    if kind == "tool":
        return ToolCalled(session, turn, name, _plist(info.get("args")), call_id)
    if kind == "client-tool":
        return ToolRequested(session, turn, name, str(info.get("arguments") or "{}"), call_id)
    if kind == "tool-result":
        return ToolFinished(session, turn, name, bool(info.get("ok")),
                            _opt(info.get("output")), call_id)
    if kind == "denied":
        return ToolDenied(session, turn, name, _opt(info.get("reason")))
    raise ProtocolError(f"unknown tool event {kind!r}")


# -- the answer to an approval -----------------------------------------------------------


@dataclass(frozen=True)
class Allow:
    """Yes; ``always``: keep it as a standing grant for this kind of action."""

    always: bool = False


@dataclass(frozen=True)
class Deny:
    """No; ``always``: keep the no as a standing grant too.  ``reason``: why, when the
    face says (the person quit the question, the face's approval function failed),
    shown when the turn is resumed; empty for a plain refusal."""

    always: bool = False
    reason: str = ""


@dataclass(frozen=True)
class Evaluated:
    """Yes to an ``emacs-eval``, with what Emacs's evaluation gave (``ok`` false: it
    signalled an error, whose message is ``value``)."""

    ok: bool
    value: Any


ApprovalAnswer: TypeAlias = Allow | Deny | Evaluated


def encode_answer(answer: ApprovalAnswer) -> Any:
    """An answer on the wire: ``t``, ``nil``, ``(:allow t|nil :always t|nil :reason R)``
    or ``(:ok t|nil :value V)``."""
    match answer:
        case Allow(always=False):
            return True
        case Deny(always=False, reason=""):
            return None
        case Allow(always=True):
            return {"allow": True, "always": True}
        case Deny(always, reason):
            return {"allow": None, "always": True if always else None,
                    **({"reason": reason} if reason else {})}
        case Evaluated(ok, value):
            return {"ok": True if ok else None, "value": value}
    raise ProtocolError(f"not an approval answer: {type(answer).__name__}")


def decode_answer(value: Any) -> ApprovalAnswer:
    """The answer a client sent; anything that is not a clear yes is :class:`Deny`."""
    if value is True:
        return Allow()
    if isinstance(value, dict):
        fields = value
    elif isinstance(value, list):
        try:
            fields = plist_to_dict(value)
        except ProtocolError:
            return Deny()
    else:
        return Deny()
    if "ok" in fields:
        return Evaluated(fields["ok"] is True, fields.get("value"))
    if "allow" in fields:
        always = fields.get("always") is True
        if fields["allow"] is True:
            return Allow(always)
        reason = fields.get("reason")
        return Deny(always, one_line(reason, REASON_MAX) if isinstance(reason, str) else "")
    return Deny()


# -- methods: what a face asks the daemon ------------------------------------------------
#
# Each method is one frozen dataclass of :class:`Request`: its wire name (``NAME``), its
# positional arguments (the fields, in order, each of a wire kind) and how its reply reads
# (:meth:`Request.result`).  A face sends ``request.args()`` under ``request.NAME``; the
# server reads a call back with :func:`decode_request`, which refuses an unknown name or
# arguments that do not fit with a :class:`MethodError`.  Emacs calls the same names.

STRING = "string"
OPTIONAL_STRING = "string-or-nil"
PLIST = "plist"
ANSWER = "answer"  # an :data:`ApprovalAnswer`
ANY = "any"

R = TypeVar("R", covariant=True)  # what a request's reply reads as


class MethodError(ProtocolError):
    """A call the daemon refuses as a call: ``unknown-method`` or ``bad-arguments``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _wire(name: str, kind: str, *, omit: bool = False) -> dict[str, Any]:
    """A request's field on the wire: its name and kind; ``omit``: a caller may leave it
    out (it is then None)."""
    return {"wire": name, "kind": kind, "omit": omit}


@dataclass(frozen=True)
class Request(Generic[R]):
    """One call of a face to the daemon, typed; ``R`` is what its reply reads as."""

    NAME: ClassVar[str] = ""

    @classmethod
    def params(cls) -> tuple[tuple[str, str], ...]:
        """The wire names and kinds of the arguments, in order."""
        return tuple((f.metadata["wire"], f.metadata["kind"]) for f in fields(cls))

    def args(self) -> list[Any]:
        """The positional arguments on the wire."""
        return [_encode_arg(f.metadata["kind"], getattr(self, f.name)) for f in fields(self)]

    def result(self, value: Any) -> R:
        """The reply read as this method's result (a plist becomes a dict ...)."""
        return cast(R, value)


REQUESTS: dict[str, type[Request[Any]]] = {}


def _method(cls: type[Request[R]]) -> type[Request[R]]:
    REQUESTS[cls.NAME] = cls
    return cls


def decode_request(name: str, args: Any) -> Request[Any]:
    """The request of a call; :class:`MethodError` for a name outside :data:`REQUESTS`
    or arguments that do not fit it (their number, or a kind)."""
    cls = REQUESTS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise MethodError("unknown-method", f"no method named {name}")
    if args is None:
        args = []
    if not isinstance(args, list):
        raise MethodError("bad-arguments", f"{name}: the arguments must be a list")
    params = fields(cls)
    least = sum(1 for f in params if not f.metadata.get("omit"))
    if not least <= len(args) <= len(params):
        names = " ".join(f.metadata["wire"] for f in params) or "no arguments"
        wanted = str(len(params)) if least == len(params) else f"{least} to {len(params)}"
        raise MethodError("bad-arguments", f"{name} takes {wanted} argument(s) ({names}), "
                                           f"not {len(args)}")
    values = {f.name: _decode_arg(name, f.metadata["wire"], f.metadata["kind"], value)
              for f, value in zip(params, args, strict=False)}
    return cls(**values)


def _encode_arg(kind: str, value: Any) -> Any:
    if kind == PLIST:
        return dict(value) or None if value is not None else None
    if kind == ANSWER:
        return encode_answer(value)
    return value


def _decode_arg(method: str, param: str, kind: str, value: Any) -> Any:
    if kind == STRING:
        if not isinstance(value, str) or isinstance(value, Keyword | Symbol):
            raise MethodError("bad-arguments", f"{method}: {param} must be a string")
        return str(value)
    if kind == OPTIONAL_STRING:
        return None if value is None else _decode_arg(method, param, STRING, value)
    if kind == PLIST:
        try:
            return plist_to_dict(value)
        except ProtocolError as err:
            raise MethodError("bad-arguments", f"{method}: {param}: {err.message}") from None
    if kind == ANSWER:
        return decode_answer(value)
    return value


@dataclass(frozen=True)
class PlistRequest(Request[dict[str, Any]]):
    """A request whose reply is one plist, read as a dict."""

    def result(self, value: Any) -> dict[str, Any]:
        return as_dict(value)


@dataclass(frozen=True)
class PlistsRequest(Request[list[dict[str, Any]]]):
    """A request whose reply is a list of plists, read as dicts."""

    def result(self, value: Any) -> list[dict[str, Any]]:
        return [as_dict(item) for item in value or []]


@_method
@dataclass(frozen=True)
class Hello(PlistRequest):
    """The first call of a connection: the token, and the client's plist (``:client``
    its face, ``:attachments``, ``:backlog``, ``:approval-timeout``)."""

    NAME: ClassVar[str] = "hello"
    token: str = field(metadata=_wire("token", STRING))
    client: Any = field(default=None, metadata=_wire("client", ANY, omit=True))

    def client_fields(self) -> dict[str, Any]:
        """The client's plist as a dict; nothing when it is not one."""
        try:
            return plist_to_dict(self.client)
        except ProtocolError:
            return {}


@_method
@dataclass(frozen=True)
class Ping(Request[str]):
    NAME: ClassVar[str] = "ping"

    def result(self, value: Any) -> str:
        return str(value)


@_method
@dataclass(frozen=True)
class Echo(Request[Any]):
    """The value, back (a test of the wire)."""

    NAME: ClassVar[str] = "echo"
    value: Any = field(metadata=_wire("value", ANY))


@_method
@dataclass(frozen=True)
class ChatSend(Request[str]):
    """A prompt in ``session``; its events come back under ``turn`` (the reply)."""

    NAME: ClassVar[str] = "chat-send"
    session: str = field(metadata=_wire("session-id", STRING))
    turn: str = field(metadata=_wire("turn-id", STRING))
    text: str = field(metadata=_wire("text", STRING))
    context: dict[str, Any] = field(metadata=_wire("context", PLIST))

    def result(self, value: Any) -> str:
        return str(value)


@_method
@dataclass(frozen=True)
class ChatCancel(Request[bool]):
    """Cancel ``turn`` of ``session`` (None: whatever runs there)."""

    NAME: ClassVar[str] = "chat-cancel"
    session: str = field(metadata=_wire("session-id", STRING))
    turn: str | None = field(metadata=_wire("turn-id", OPTIONAL_STRING))

    def result(self, value: Any) -> bool:
        return value is True


@_method
@dataclass(frozen=True)
class AnswerApproval(Request[bool]):
    """The person's answer to an :class:`ApprovalAsked` (an ``expired`` refusal when it
    no longer waits)."""

    NAME: ClassVar[str] = "approval-answer"
    approval_id: str = field(metadata=_wire("approval-id", STRING))
    answer: ApprovalAnswer = field(metadata=_wire("answer", ANSWER))

    def result(self, value: Any) -> bool:
        return value is True


@_method
@dataclass(frozen=True)
class OrgEdit(Request[bool]):
    """Emacs saved an org file (the plist says which and how)."""

    NAME: ClassVar[str] = "org-edit"
    plist: dict[str, Any] = field(metadata=_wire("plist", PLIST))


@_method
@dataclass(frozen=True)
class SetFocus(Request[bool]):
    """Where the person is in org (``:file``, ``:id``, ``:heading``, ``:outline``,
    ``:body``)."""

    NAME: ClassVar[str] = "focus"
    plist: dict[str, Any] = field(metadata=_wire("plist", PLIST))


@_method
@dataclass(frozen=True)
class Status(PlistRequest):
    NAME: ClassVar[str] = "status"


@_method
@dataclass(frozen=True)
class Models(PlistRequest):
    NAME: ClassVar[str] = "models"


@_method
@dataclass(frozen=True)
class Jobs(PlistsRequest):
    NAME: ClassVar[str] = "jobs"


@_method
@dataclass(frozen=True)
class JobProblems(PlistsRequest):
    NAME: ClassVar[str] = "job-problems"


@_method
@dataclass(frozen=True)
class HeldJobs(PlistsRequest):
    NAME: ClassVar[str] = "held-jobs"


@_method
@dataclass(frozen=True)
class JobAllow(PlistRequest):
    """Approve a held job, only if its content hash is still ``digest``."""

    NAME: ClassVar[str] = "job-allow"
    node_id: str = field(metadata=_wire("id", STRING))
    digest: str | None = field(metadata=_wire("hash", OPTIONAL_STRING))


@_method
@dataclass(frozen=True)
class JobDeny(PlistRequest):
    NAME: ClassVar[str] = "job-deny"
    node_id: str = field(metadata=_wire("id", STRING))


@_method
@dataclass(frozen=True)
class ReloadSkill(PlistRequest):
    NAME: ClassVar[str] = "skills-reload"
    name: str = field(metadata=_wire("name", STRING))


@_method
@dataclass(frozen=True)
class SessionHistory(Request[list[dict[str, Any]]]):
    """A session's messages (role, content ...), oldest first."""

    NAME: ClassVar[str] = "session-history"
    session: str = field(metadata=_wire("session-id", STRING))

    def result(self, value: Any) -> list[dict[str, Any]]:
        return [as_dict(m) if isinstance(m, list) else m for m in value or []]


@_method
@dataclass(frozen=True)
class Sessions(PlistsRequest):
    """The kept sessions (id, title, messages, last-activity), most recent first."""

    NAME: ClassVar[str] = "sessions"


@_method
@dataclass(frozen=True)
class Context(Request[str]):
    """What the next chat turn's context holds about the person's place in org."""

    NAME: ClassVar[str] = "context"

    def result(self, value: Any) -> str:
        return str(value or "")


@_method
@dataclass(frozen=True)
class Usage(Request[dict[str, Any]]):
    """Tokens and cost of ``session`` and of today (nested plists as dicts)."""

    NAME: ClassVar[str] = "usage"
    session: str | None = field(metadata=_wire("session-id", OPTIONAL_STRING))

    def result(self, value: Any) -> dict[str, Any]:
        return {k: as_dict(v) if isinstance(v, list) else v
                for k, v in as_dict(value).items()}


@_method
@dataclass(frozen=True)
class RewriteCheck(PlistRequest):
    """The gates' verdict on a rewrite the person accepted."""

    NAME: ClassVar[str] = "rewrite-check"
    plist: dict[str, Any] = field(metadata=_wire("plist", PLIST))


@_method
@dataclass(frozen=True)
class PreviewAttachments(Request[str]):
    """What the given parts would add to a turn, read and filtered as a turn reads them."""

    NAME: ClassVar[str] = "attachments-preview"
    attachments: Any = field(metadata=_wire("attachments", ANY))

    def result(self, value: Any) -> str:
        return str(value or "")


@_method
@dataclass(frozen=True)
class Memex(Request[str]):
    """One request of an MCP client of ``passepartout mcp``."""

    NAME: ClassVar[str] = "memex"
    client: str = field(metadata=_wire("client", STRING))
    operation: str = field(metadata=_wire("operation", STRING))
    arguments: dict[str, Any] = field(metadata=_wire("args", PLIST))

    def result(self, value: Any) -> str:
        return str(value)


@_method
@dataclass(frozen=True)
class McpServers(Request[list[str]]):
    """A status line for each MCP server of mcp.json."""

    NAME: ClassVar[str] = "mcp-servers"

    def result(self, value: Any) -> list[str]:
        return [str(line) for line in value or []]


# -- values ------------------------------------------------------------------------------


def as_dict(value: Any) -> dict[str, Any]:
    """A plist (or nil) as a dict with plain string keys."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return plist_to_dict(value)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _plist(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    return as_dict(value) if isinstance(value, list) else None


__all__ = ["APPROVAL", "CHUNK", "DEFAULT_FACE", "DONE", "ERROR", "EVENT_NAMES", "FACES",
           "ITEMS_MAX", "NOTIFY", "ORG_EDIT", "PROMPT_BYTES", "REQUESTS", "RESOURCE_BYTES",
           "STATUS", "TOOL", "Allow", "AnswerApproval", "ApprovalAnswer", "ApprovalAsked",
           "ChatCancel", "ChatSend", "Chunk", "Context", "Deny", "Disconnected", "Done",
           "Echo", "Evaluated", "Event", "HeldJobs", "Hello", "JobAllow", "JobDeny",
           "JobProblems", "Jobs", "Listener", "McpServers", "Memex", "MethodError",
           "Models", "Notice", "OrgEdit", "OrgEdited", "Ping", "PreviewAttachments",
           "ReloadSkill", "Request", "RewriteCheck", "SessionHistory", "Sessions",
           "SetFocus", "Status", "StatusChanged", "ToolCalled", "ToolDenied", "ToolEvent",
           "ToolFinished", "ToolRequested", "TurnError", "Usage", "as_dict", "decode",
           "decode_answer", "decode_request", "encode", "encode_answer", "face_name",
           "turn_of"]
