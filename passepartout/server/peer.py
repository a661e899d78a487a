"""The Emacs channel: loop events become calls of a fixed list of Elisp callbacks.

Each chat session is bound to the Emacs connection (a :class:`Peer`) that sent its last
prompt, so that several clients attached to one daemon each get their own replies and
approvals; notices go to every client, and those sent while no client that shows them
(a *face*) was attached wait in a :class:`~passepartout.server.backlog.Backlog` for
the next one.  Nothing here waits for Emacs except :meth:`EmacsChannel.approve`, which runs on
the session's lane and waits for the person's answer, at most the request's timeout
(the agent's one approval limit); a timeout, a closed connection or a stopping server
is a denial.
"""

from __future__ import annotations

import collections
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, assert_never

from passepartout.errors import PipelineError, ProtocolError
from passepartout.loop import Action, ApprovalRequest
from passepartout.loop.approvals import DEFAULT_TIMEOUT
from passepartout.loop.events import (
    ApprovalAsked,
    Chunk,
    Denied,
    Done,
    Error,
    Event,
    Notice,
    Reply,
    ToolCall,
    ToolResult,
)
from passepartout.server.backlog import Backlog
from passepartout.server.backlog import Notice as Missed
from passepartout.signals import Signal, Symbol, plist_to_dict

log = logging.getLogger(__name__)

ON_CHUNK = "passepartout--on-chunk"
ON_DONE = "passepartout--on-done"
ON_ERROR = "passepartout--on-error"
ON_TOOL = "passepartout--on-tool"
ON_APPROVAL = "passepartout--on-approval"
ON_NOTIFY = "passepartout--on-notify"
ON_STATUS = "passepartout--on-status"
ON_ORG_EDIT = "passepartout--on-org-edit"  # an org tool's edit, shown in a visiting buffer

# The only Elisp functions the server ever calls (Emacs keeps the same allow-list).
CALLBACKS = frozenset({ON_CHUNK, ON_DONE, ON_ERROR, ON_TOOL, ON_APPROVAL, ON_NOTIFY, ON_STATUS,
                       ON_ORG_EDIT})

_KEPT_RESULTS = 32
_KEPT_TURNS = 256  # turns in flight remembered with their sender


class Peer(Protocol):
    """One Emacs connection, as the channel sees it."""

    @property
    def closed(self) -> bool: ...

    @property
    def approval_timeout(self) -> float | None: ...

    def call(self, method: str, args: list[Any]) -> bool:
        """Queue a callback without waiting for Emacs; False when the peer is gone."""
        ...


@dataclass
class _Pending:
    peer: Peer
    action: Action
    done: threading.Event = field(default_factory=threading.Event)
    granted: bool = False


class EmacsChannel:
    """Where the sessions of Emacs connections send their events and ask approvals."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._peers: list[Peer] = []
        self._faces: list[Peer] = []  # the peers that show notices to a person
        self.backlog = Backlog()
        self._sessions: dict[str, Peer] = {}
        # Who sent each turn still running: two clients may share a session (two
        # terminal chats, Emacs and the TUI), and each turn's events go to its sender.
        self._turns: collections.OrderedDict[tuple[str, str], Peer] = (
            collections.OrderedDict())
        self._pending: dict[str, _Pending] = {}
        self._streamed: dict[tuple[str, str], str] = {}
        self._results: collections.OrderedDict[str, dict[str, Any]] = collections.OrderedDict()
        self._stopping = False
        # "always" answers become scoped grants through this (set once the agent boots)
        self.standing: Callable[[Action, bool], Any] | None = None

    # -- connections and sessions ----------------------------------------------------

    def peer_opened(self, peer: Peer) -> None:
        with self._lock:
            if peer not in self._peers:
                self._peers.append(peer)

    def peer_closed(self, peer: Peer) -> None:
        """Forget the connection; its sessions' pending approvals are denied."""
        with self._lock:
            if peer in self._peers:
                self._peers.remove(peer)
            if peer in self._faces:
                self._faces.remove(peer)
            for session in [s for s, p in self._sessions.items() if p is peer]:
                del self._sessions[session]
            for key in [k for k, p in self._turns.items() if p is peer]:
                del self._turns[key]
            waiting = [p for p in self._pending.values() if p.peer is peer]
        for pending in waiting:
            pending.done.set()

    def bind(self, session_id: str, peer: Peer, turn: str | None = None) -> None:
        """``peer`` shows ``session_id`` (the last one bound, for what no turn names) and
        receives the events of ``turn``, which it sent."""
        with self._lock:
            self._sessions[session_id] = peer
            if turn is not None:
                self._turns[(session_id, turn)] = peer
                while len(self._turns) > _KEPT_TURNS:  # turns whose Done never came
                    self._turns.popitem(last=False)

    def peer_for(self, session_id: str | None, turn: str | None = None) -> Peer | None:
        """The client of ``turn`` when one sent it, else the one showing the session."""
        with self._lock:
            peer = self._turns.get((session_id, turn)) if session_id and turn else None
            if peer is None and session_id is not None:
                peer = self._sessions.get(session_id)
        return peer if peer is not None and not peer.closed else None

    def peers(self) -> list[Peer]:
        with self._lock:
            return [p for p in self._peers if not p.closed]

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def broadcast(self, method: str, args: list[Any]) -> None:
        for peer in self.peers():
            peer.call(method, args)

    def face_attached(self, peer: Peer) -> tuple[list[Missed], int]:
        """``peer`` shows notices to a person: what no face saw meanwhile is handed
        over (the notices kept, and how many fell off the bounded backlog)."""
        with self._lock:
            if peer not in self._faces:
                self._faces.append(peer)
            return self.backlog.take()

    def faces(self) -> list[Peer]:
        """The attached clients a person looks at (those that asked for the backlog)."""
        with self._lock:
            return [p for p in self._faces if not p.closed]

    def notify(self, level: str, text: str) -> None:
        """A notice for every attached client; kept for later when no face sees it."""
        with self._lock:
            if not any(not face.closed for face in self._faces):
                self.backlog.record(level, text)
        self.broadcast(ON_NOTIFY, [Symbol(level), text])

    def stop(self) -> None:
        """The server is stopping: deny every pending approval and every new one."""
        with self._lock:
            self._stopping = True
            waiting = list(self._pending.values())
        for pending in waiting:
            pending.done.set()

    # -- events -----------------------------------------------------------------------

    def send(self, signal: Signal, event: Event) -> None:
        """Map one loop event to its callback (see the wire contract in DESIGN.md)."""
        session = signal.session_id
        turn = signal.meta.get("turn-id")
        if session is None or turn is None:
            self._send_unbound(event)
            return
        peer = self.peer_for(session, str(turn))
        if isinstance(event, Done):
            with self._lock:
                self._turns.pop((session, str(turn)), None)
        if peer is None:
            log.debug("no Emacs connection for session %s: %s dropped", session, event.kind)
            return
        call = self._callback(session, str(turn), event, signal.meta)
        if call is not None:
            peer.call(*call)

    def _callback(self, session: str, turn: str, event: Event,
                  meta: dict[str, Any] | None = None) -> tuple[str, list[Any]] | None:
        key = (session, turn)
        meta = meta or {}
        match event:
            case Chunk(text=text):
                with self._lock:
                    self._streamed[key] = self._streamed.get(key, "") + text
                return (ON_CHUNK, [session, turn, text]) if text else None
            case Reply(text=text):
                text = self._unstreamed(key, text)
                return (ON_CHUNK, [session, turn, text]) if text else None
            case ToolCall() | ToolResult() | Denied():
                with self._lock:
                    self._streamed.pop(key, None)  # the next model step streams a new text
                return ON_TOOL, [session, turn, _tool_info(event)]
            case Error(code=code, message=message):
                return ON_ERROR, [session, turn, code, message]
            case Done(cancelled=cancelled):
                with self._lock:
                    self._streamed.pop(key, None)
                return ON_DONE, [session, turn, {"cancelled": cancelled, **answered_by(meta)}]
            case ApprovalAsked():
                return None  # approve() itself asks, with the id the answer must carry
            case Notice(text=text, level=level):
                return ON_NOTIFY, [Symbol(level), text]
        assert_never(event)

    def _unstreamed(self, key: tuple[str, str], reply: str) -> str:
        """The part of a whole reply that its chunks have not shown yet."""
        with self._lock:
            streamed = self._streamed.pop(key, "")
        if not streamed:
            return reply
        return reply[len(streamed):] if reply.startswith(streamed) else ""

    def _send_unbound(self, event: Event) -> None:
        # Events of signals that belong to no chat (org-edit hooks, jobs) become notices.
        match event:
            case Reply(text=text) if text:
                self.notify("info", text)
            case Error(code=code, message=message):
                self.notify("error", f"{code}: {message}")
            case Denied(action=action, reason=reason):
                self.notify("warning", f"denied {action}: {reason}")
            case Notice(text=text, level=level):
                self.notify(level, text)
            case _:
                log.debug("unbound event %s", event)

    # -- approvals ----------------------------------------------------------------------

    def approve(self, request: ApprovalRequest) -> bool:
        """Ask Emacs and wait for the answer (on the session's lane, never the socket's)."""
        session = request.signal.session_id
        turn = request.signal.meta.get("turn-id")
        peer = self.peer_for(session, str(turn) if turn else None)
        if peer is None and session is None:
            # No session: the client that last attached and shows things to a person.
            open_peers = self.faces() or self.peers()
            peer = open_peers[-1] if open_peers else None
        if peer is None:
            log.info("approval of %s denied: no Emacs connection", request.action.describe())
            return False
        approval_id = uuid.uuid4().hex
        pending = _Pending(peer, request.action)
        with self._lock:
            if self._stopping:
                return False
            self._pending[approval_id] = pending
        # The request's limit; a shorter one the person set in Emacs wins (Emacs denies
        # by itself then).
        timeout = min(t for t in (request.timeout or DEFAULT_TIMEOUT, peer.approval_timeout)
                      if t)
        sent = False
        try:
            sent = peer.call(ON_APPROVAL, [approval_id, session, str(turn) if turn else None,
                                           request.describe(), _approval_info(request)])
            if sent:
                pending.done.wait(timeout)
        finally:
            with self._lock:
                self._pending.pop(approval_id, None)
                granted = pending.granted
        if sent and not pending.done.is_set() and not peer.closed:
            what = request.action.describe()
            peer.call(ON_NOTIFY, [Symbol("warning"), f"No answer in {timeout:g} s: denied {what}"])
        return granted

    def answer(self, approval_id: str, answer: Any) -> bool:
        """Record the person's answer; False when no approval with that id is waiting.

        ``t`` is yes; a plist holding ``:ok`` is yes and is kept as the result of an
        evaluation Emacs did on approval (``emacs-eval``); ``(:allow t)`` is yes, and with
        ``:always t`` the yes (or the no of ``(:allow nil :always t)``) also becomes a
        standing grant for this kind of action; anything else is no.
        """
        result = _evaluation_result(answer)
        choice = _allow_always(answer)
        with self._lock:
            pending = self._pending.pop(approval_id, None)
            if pending is None:
                return False
            pending.granted = answer is True or result is not None or bool(choice and choice[0])
            if result is not None:
                self._results[pending.action.digest()] = result
                while len(self._results) > _KEPT_RESULTS:
                    self._results.popitem(last=False)
        if choice is not None and choice[1]:
            self._remember(pending, allow=choice[0])
        pending.done.set()
        return True

    def _remember(self, pending: _Pending, *, allow: bool) -> None:
        """An "always" answer: the scoped standing grant (security/approvals/standing.py), and a
        notice to the answering client of what was remembered."""
        if self.standing is None:
            note = "not remembered: the agent's grants are not available; answered once"
        else:
            try:
                note = str(self.standing(pending.action, allow).note)
            except Exception as err:  # the answer itself still counts
                log.exception("writing a standing grant failed")
                note = f"not remembered ({type(err).__name__}); answered once"
        pending.peer.call(ON_NOTIFY, [Symbol("info"), f"{pending.action.describe()}: {note}"])

    def take_result(self, digest: str) -> dict[str, Any] | None:
        """The evaluation result Emacs gave with its yes to the action of ``digest``."""
        with self._lock:
            return self._results.pop(digest, None)

    def evaluation(self, code: str) -> str:
        """The ``emacs-eval`` tool's result: what Emacs returned when the person approved
        ``code`` (Emacs evaluates only then, after showing it).  Published as the agent's
        ``emacs-eval`` service."""
        action = Action("tool", name="emacs-eval", args={"code": code})
        result = self.take_result(action.digest())
        if result is None:
            raise PipelineError("Emacs did not evaluate this code: Emacs evaluates code only "
                                "when the person approves it there")
        value = result.get("value")
        text = value if isinstance(value, str) else str(value)
        if not result.get("ok"):
            raise PipelineError(f"Emacs signalled an error: {text}")
        return text

    def pending_approvals(self) -> int:
        with self._lock:
            return len(self._pending)


def _allow_always(answer: Any) -> tuple[bool, bool] | None:
    """``(:allow t :always t)`` and the like: (yes, always); None for another answer."""
    if not isinstance(answer, list):
        return None
    try:
        fields = plist_to_dict(answer)
    except ProtocolError:
        return None
    if "allow" not in fields:
        return None
    return fields["allow"] is True, fields.get("always") is True


def _evaluation_result(answer: Any) -> dict[str, Any] | None:
    if not isinstance(answer, list):
        return None
    try:
        fields = plist_to_dict(answer)
    except ProtocolError:
        return None
    return fields if "ok" in fields else None


def answered_by(meta: dict[str, Any]) -> dict[str, Any]:
    """Which model answered a turn (its last call), and whether it is the local one."""
    from passepartout.llm.provider import is_local

    used = meta.get("models-used")
    if not isinstance(used, list) or not used:
        return {}
    model = str(used[-1])
    return {"model": model, "local": is_local(model)}


def _tool_info(event: ToolCall | ToolResult | Denied) -> dict[str, Any]:
    match event:
        case ToolCall(name=name, args=args, call_id=call_id):
            return {"event": Symbol("tool"), "name": name, "args": args or None,
                    "call-id": call_id}
        case ToolResult(name=name, ok=ok, output=output, call_id=call_id):
            return {"event": Symbol("tool-result"), "name": name, "ok": ok, "output": output,
                    "call-id": call_id}
        case Denied(action=action, reason=reason):
            return {"event": Symbol("denied"), "name": action, "reason": reason}
    assert_never(event)


def _approval_info(request: ApprovalRequest) -> dict[str, Any]:
    action = request.action
    info: dict[str, Any] = {
        "kind": Symbol(action.name or action.target),
        "tool": action.name or None,
        "args": dict(action.args) or None,
        "reasons": list(request.reasons) or None,
        "digest": action.digest(),
    }
    if action.name == "emacs-eval":
        info["code"] = str(action.args.get("code", ""))
    from passepartout.security.approvals.standing import once_only

    once = once_only(action)
    if once is not None:  # the question offers no "always": it would be answered once
        info["once"] = once
    return info

