"""The peer channel: loop events become the events of :mod:`passepartout.protocol`,
sent to the client that asked for them.

Each chat session is bound to the client connection (a :class:`Peer`) that sent its last
prompt, so that several clients attached to one daemon each get their own replies and
approvals; notices go to every client, and those sent while no client that shows them
(a *face*) was attached wait in a :class:`~passepartout.server.backlog.Backlog` for
the next one.  Nothing here waits for a client except :meth:`PeerChannel.approve`, which
runs on the session's lane and waits for the person's answer, at most the request's timeout
(the agent's one approval limit); a timeout, a closed connection or a stopping server
is a denial.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from passepartout import protocol
from passepartout.errors import PipelineError
from passepartout.loop import Action, ApprovalRequest
from passepartout.loop.actions import Answer
from passepartout.loop.approvals import DEFAULT_TIMEOUT
from passepartout.loop.events import Denied, Done, Error, Event, Notice, Reply
from passepartout.loop.protocol_events import to_protocol
from passepartout.protocol import Allow, Deny, Evaluated
from passepartout.server.backlog import Backlog
from passepartout.server.backlog import Notice as Missed
from passepartout.signals import Signal, Symbol
from passepartout.turn import Kept, TurnState

log = logging.getLogger(__name__)


# Faces whose text leaves the machine toward a client program: every text they get
# passes the outbound exit (the vault's mask, the private text withheld).
LEAVING_FACES = frozenset({"openai"})

_KEPT_RESULTS = 32


class Peer(Protocol):
    """One client's connection, as the channel sees it."""

    @property
    def closed(self) -> bool: ...

    @property
    def approval_timeout(self) -> float | None: ...

    @property
    def face(self) -> str:
        """Which face the client said it is (one of :data:`passepartout.protocol.FACES`)."""
        ...

    def call(self, method: str, args: list[Any]) -> bool:
        """Queue a callback without waiting for the client; False when the peer is gone."""
        ...


def emit(peer: Peer, event: protocol.Event) -> bool:
    """Send ``event`` to ``peer`` by its protocol name; False when the peer is gone."""
    return peer.call(*protocol.encode(event))


@dataclass
class _Sent:
    """What the channel keeps for one turn, in the turn's record (dropped with it)."""

    sender: Peer | None = None  # the client that sent the turn
    streamed: str = ""  # the text this model step streamed so far
    held: str = ""  # text for a leaving face, held to a line end


_SENT: Kept[_Sent] = Kept("the peer channel", _Sent)


@dataclass
class _Pending:
    peer: Peer
    action: Action
    done: threading.Event = field(default_factory=threading.Event)
    granted: bool = False
    always: bool = False
    answered: bool = False  # the face answered (not a timeout, a closed face, a stop)
    reason: str = ""  # why the face said no, when it said


class PeerChannel:
    """Where the sessions of the daemon's clients (every face, Emacs included) send their
    events and ask approvals."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._peers: list[Peer] = []
        self._faces: list[Peer] = []  # the peers that show notices to a person
        self.backlog = Backlog()
        self._sessions: dict[str, Peer] = {}
        self._pending: dict[str, _Pending] = {}
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
            waiting = [p for p in self._pending.values() if p.peer is peer]
        for pending in waiting:
            pending.done.set()

    def bind(self, session_id: str, peer: Peer) -> None:
        """``peer`` shows ``session_id`` (the last one bound, for what no turn names)."""
        with self._lock:
            self._sessions[session_id] = peer

    def sent_by(self, session_id: str, peer: Peer) -> TurnState:
        """``peer`` sends a turn of ``session_id`` (and shows the session): the turn's
        record, to give with the prompt, so that the turn's events go to its sender (two
        clients may share a session: two terminal chats, Emacs and the TUI)."""
        self.bind(session_id, peer)
        state = TurnState()
        state.kept(_SENT).sender = peer
        return state

    def peer_for(self, session_id: str | None) -> Peer | None:
        """The client showing ``session_id``, while it is connected."""
        with self._lock:
            peer = self._sessions.get(session_id) if session_id is not None else None
        return peer if peer is not None and not peer.closed else None

    def _peer_of(self, signal: Signal) -> Peer | None:
        """The client that sent the turn of ``signal``, else the one showing its session."""
        state = signal.turn.state
        sender = state.kept(_SENT).sender if state is not None else None
        if sender is not None and not sender.closed:
            return sender
        return self.peer_for(signal.session_id)

    def peers(self) -> list[Peer]:
        with self._lock:
            return [p for p in self._peers if not p.closed]

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def broadcast(self, event: protocol.Event) -> None:
        for peer in self.peers():
            emit(peer, event)

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
        self.broadcast(protocol.Notice(level, text))

    def stop(self) -> None:
        """The server is stopping: deny every pending approval and every new one."""
        with self._lock:
            self._stopping = True
            waiting = list(self._pending.values())
        for pending in waiting:
            pending.done.set()

    # -- events -----------------------------------------------------------------------

    def send(self, signal: Signal, event: Event) -> None:
        """Send one loop event to its client as the event of the protocol it maps to."""
        session = signal.session_id
        turn = signal.turn.turn_id
        if session is None or turn is None:
            self._send_unbound(event)
            return
        peer = self._peer_of(signal)
        if peer is None:
            log.debug("no client connection for session %s: %s dropped", session, event.kind)
            return
        state = signal.turn.state
        kept = state.kept(_SENT) if state is not None else _Sent()
        sent = self._protocol_event(session, str(turn), event, kept,
                                    state.models if state else None)
        if leaves(peer):
            for leaving in self._leaving(session, str(turn), kept, sent):
                emit(peer, leaving)
        elif sent is not None:
            emit(peer, sent)

    def _leaving(self, session: str, turn: str, kept: _Sent,
                 event: protocol.Event | None) -> list[protocol.Event]:
        """An event for a face whose text leaves the machine (an HTTP client of the
        OpenAI-compatible endpoint): its text through the outbound exit, as a request
        to a remote model.  Streamed text is held back to the end of a line, so a
        secret or a private line split over two chunks is masked whole."""
        out: list[protocol.Event] = []
        if isinstance(event, protocol.Chunk):
            with self._lock:
                held = kept.held + event.text
                cut = held.rfind("\n") + 1
                kept.held = held[cut:]
                if cut == 0:
                    return []
            text = _leave(held[:cut])
            return [protocol.Chunk(session, turn, text)] if text else []
        with self._lock:
            rest, kept.held = kept.held, ""
        if rest:
            out.append(protocol.Chunk(session, turn, _leave(rest)))
        if isinstance(event, protocol.ToolRequested):
            event = dataclasses.replace(event, arguments=_leave(event.arguments))
        elif isinstance(event, protocol.TurnError):
            event = dataclasses.replace(event, message=_leave(event.message))
        elif isinstance(event, protocol.ToolFinished) and event.output:
            event = dataclasses.replace(event, output=_leave(event.output))
        if event is not None:
            out.append(event)
        return out

    def _protocol_event(self, session: str, turn: str, event: Event, kept: _Sent,
                        used: list[str] | None = None) -> protocol.Event | None:
        from passepartout.llm.provider import answered_by

        answered = answered_by(used) if isinstance(event, Done) else (None, None)
        with self._lock:
            sent, kept.streamed = to_protocol(session, turn, event, kept.streamed, answered)
        return sent

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
        """Ask the person on their face and wait for the answer (on the session's lane,
        never the socket's)."""
        session = request.signal.session_id
        turn = request.signal.turn.turn_id
        peer = self._peer_of(request.signal)
        if peer is not None and leaves(peer):
            # A client program cannot answer for the person: their attached face does.
            people = self.faces()
            peer = people[-1] if people else None
        if peer is None and session is None:
            # No session: the client that last attached and shows things to a person.
            open_peers = self.faces() or self.peers()
            peer = open_peers[-1] if open_peers else None
        if peer is None:
            log.info("approval of %s denied: no face connected", request.action.describe())
            return False
        approval_id = uuid.uuid4().hex
        pending = _Pending(peer, request.action)
        with self._lock:
            if self._stopping:
                return False
            self._pending[approval_id] = pending
        # The request's limit; a shorter one the person set in their face wins (it denies
        # by itself then).
        timeout = min(t for t in (request.timeout or DEFAULT_TIMEOUT, peer.approval_timeout)
                      if t)
        sent = False
        try:
            sent = emit(peer, protocol.ApprovalAsked(
                approval_id, session, str(turn) if turn else None, request.describe(),
                _approval_info(request)))
            if sent:
                pending.done.wait(timeout)
        finally:
            with self._lock:
                self._pending.pop(approval_id, None)
                granted = pending.granted
        if sent and not pending.done.is_set() and not peer.closed:
            what = request.action.describe()
            emit(peer, protocol.Notice("warning", f"No answer in {timeout:g} s: denied {what}"))
        if sent and request.heard is not None:
            request.heard(_answer(pending, peer, granted, stopping=self._stopping))
        return granted

    def can_ask(self, signal: Signal) -> bool:
        """Whether a person can be asked about the turn of ``signal``: False for a turn
        of a client program (the OpenAI-compatible endpoint) while no face a person
        looks at is attached; its approvals become Flight Plans."""
        peer = self._peer_of(signal)
        return peer is None or not leaves(peer) or bool(self.faces())

    def answer(self, approval_id: str, answer: protocol.ApprovalAnswer) -> bool:
        """Record the person's answer; False when no approval with that id is waiting.

        :class:`~passepartout.protocol.Allow` is yes; an
        :class:`~passepartout.protocol.Evaluated` is yes and is kept as the result of an
        evaluation Emacs did on approval (``emacs-eval``); with ``always`` the yes (or the
        no of a :class:`~passepartout.protocol.Deny`) also becomes a standing grant for
        this kind of action.
        """
        with self._lock:
            pending = self._pending.pop(approval_id, None)
            if pending is None:
                return False
            pending.granted = isinstance(answer, Allow | Evaluated)
            pending.always = isinstance(answer, Allow | Deny) and answer.always
            pending.answered = True
            pending.reason = answer.reason if isinstance(answer, Deny) else ""
            if isinstance(answer, Evaluated):
                self._results[pending.action.digest()] = {"ok": answer.ok,
                                                          "value": answer.value}
                while len(self._results) > _KEPT_RESULTS:
                    self._results.popitem(last=False)
        if isinstance(answer, Allow | Deny) and answer.always:
            self._remember(pending, allow=isinstance(answer, Allow))
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
        emit(pending.peer, protocol.Notice("info", f"{pending.action.describe()}: {note}"))

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


def _answer(pending: _Pending, peer: Peer, granted: bool, *, stopping: bool) -> Answer:
    """How the approval was answered, for the turn's record."""
    if not pending.answered:
        why = ("the agent stopped" if stopping else
               "the face went away" if peer.closed else "no answer in time")
        return Answer(False, by="", reason=why)
    face = getattr(peer, "face", protocol.DEFAULT_FACE)
    if granted:
        return Answer(True, always=pending.always, by=face)
    return Answer(False, always=pending.always, by=face,
                  reason=pending.reason or ("refused always" if pending.always else "refused"))


def leaves(peer: Peer) -> bool:
    """Whether what ``peer`` gets leaves the machine (a peer that names no face is
    Emacs's, as in ``hello``)."""
    return getattr(peer, "face", protocol.DEFAULT_FACE) in LEAVING_FACES


def _leave(text: str) -> str:
    """``text`` as it may leave the machine; nothing of it when the privacy scan is not
    done (the client is told so)."""
    from passepartout.errors import PassepartoutError
    from passepartout.security.outbound import outbound

    try:
        return str(outbound(text))
    except PassepartoutError as err:
        log.warning("a reply was withheld from a client: %s", err.message)
        return "[withheld: the memex is still being scanned for private text; ask again soon]"


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

