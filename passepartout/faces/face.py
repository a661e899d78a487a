"""A face of the daemon on the client side: prompts out, typed events back.

:class:`Face` holds one connection to the running daemon (the EPC wire of
:mod:`passepartout.wire.client`, the same ``hello`` and method table as Emacs) and one
reader thread.  The reader answers every callback the daemon sends, turns it into an
:data:`~passepartout.protocol.Event` (the daemon's contract,
:mod:`passepartout.protocol`) and routes it: the events of a turn go to that
turn's :class:`Turn` (iterate it in the caller's thread: an approval is asked there,
never on the reader), everything else (notifications, status, events of turns this
face did not start) to the listeners given to :meth:`Face.listen`.  Calls may be made
from any thread; each waits for its own reply, matched by uid.

The face never evaluates anything the daemon sends: an approval is a question to the
person, and :meth:`Face.answer` sends back only yes or no.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import queue
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from passepartout import protocol
from passepartout.errors import DaemonError
from passepartout.protocol import ApprovalAnswer, Disconnected, Done, Event, Listener
from passepartout.signals import Symbol
from passepartout.wire.client import DaemonClient, connect, frame

log = logging.getLogger(__name__)

CALL_TIMEOUT = 30.0
R = TypeVar("R")


# -- one turn ----------------------------------------------------------------------------


@dataclass
class Turn:
    """The events of one prompt, in order, ending with :class:`Done`."""

    face: Face
    session: str
    turn: str
    _events: queue.SimpleQueue[Event] = field(default_factory=queue.SimpleQueue, repr=False)
    finished: bool = False
    # called on the reader thread after each event is queued (an asyncio face wakes its
    # loop with it instead of waiting on the queue in a thread)
    on_event: Callable[[], None] | None = field(default=None, repr=False)

    def put(self, event: Event) -> None:
        self._events.put(event)
        wake = self.on_event
        if wake is not None:
            wake()

    def next(self, timeout: float | None = None) -> Event | None:
        """The next event; None when ``timeout`` passes first."""
        try:
            event = self._events.get(timeout=timeout)
        except queue.Empty:
            return None
        if isinstance(event, Done | Disconnected):
            self.finished = True
            self.face._forget(self)
        return event

    def events(self, timeout: float | None = None) -> Iterator[Event]:
        """Every event up to and including the last (``Done`` or ``Disconnected``);
        ``timeout`` bounds the wait for each (a :class:`DaemonError` when it passes)."""
        while not self.finished:
            event = self.next(timeout)
            if event is None:
                raise DaemonError(f"turn {self.turn}: no event within {timeout:g} s", "timeout")
            yield event

    def cancel(self) -> None:
        self.face.cancel(self.session, self.turn)


# -- the face ----------------------------------------------------------------------------


@dataclass
class _Call:
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False
    value: Any = None


class Face:
    """One attached client of the daemon (see the module's docstring)."""

    def __init__(self, client: DaemonClient, *, source: str = "terminal") -> None:
        self.client = client
        self.source = source
        self.info = client.info
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._uids = itertools.count(1_000_000)  # clear of the uids DaemonClient used
        self._calls: dict[int, _Call] = {}
        self._turns: dict[tuple[str, str], Turn] = {}
        self._listeners: list[Listener] = []
        self._closed = threading.Event()
        self.closed_reason = ""
        client.sock.settimeout(None)  # the reader blocks; each call has its own deadline
        self._reader = threading.Thread(target=self._read_loop, name="passepartout-face",
                                        daemon=True)
        self._reader.start()

    @classmethod
    def attach(cls, home: Path, *, source: str = "terminal",
               client: Mapping[str, Any] | None = None,
               environ: Mapping[str, str] | None = None) -> Face | None:
        """A face of the daemon of ``home``; None when none runs."""
        found = connect(home, environ=environ,
                        client={"client": source, **(client or {})})
        return None if found is None else cls(found, source=source)

    # -- life --------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Leave the daemon (it keeps running); pending calls and turns end."""
        self._shut("closed by the client")
        self.client.close()

    def __enter__(self) -> Face:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def listen(self, listener: Listener) -> None:
        """``listener`` gets every event that is not a turn's of this face (called on
        the reader thread: it must return quickly and never call back and wait)."""
        with self._lock:
            self._listeners.append(listener)

    # -- calls -------------------------------------------------------------------------

    def request(self, request: protocol.Request[R], *,
                timeout: float = CALL_TIMEOUT) -> R:
        """Send a request of the protocol and wait for its result (a refusal raises
        :class:`DaemonError`, its ``kind`` the daemon's)."""
        return request.result(self.call(request.NAME, *request.args(), timeout=timeout))

    def call(self, method: str, *args: Any, timeout: float = CALL_TIMEOUT) -> Any:
        """Call a method by its wire name with raw arguments and wait for its reply;
        :meth:`request` is the typed form."""
        uid = next(self._uids)
        pending = _Call()
        with self._lock:
            if self.closed:
                raise DaemonError(f"{method}: {self.closed_reason}", "closed")
            self._calls[uid] = pending
        try:
            self._send([Symbol("call"), uid, Symbol(method), list(args)])
            if not pending.done.wait(timeout):
                raise DaemonError(f"{method}: no answer within {timeout:g} s", "timeout")
        finally:
            with self._lock:
                self._calls.pop(uid, None)
        if pending.ok:
            return pending.value
        value = pending.value
        if isinstance(value, list) and len(value) == 2:
            raise DaemonError(f"{method}: {value[1]}", str(value[0]))
        raise DaemonError(f"{method}: {value}", "closed" if self.closed else "daemon-error")

    def send(self, session: str, text: str, *, context: Mapping[str, Any] | None = None,
             turn: str | None = None) -> Turn:
        """Send a prompt in ``session``; its events come to the returned :class:`Turn`."""
        turn_id = turn or uuid.uuid4().hex[:12]
        handle = Turn(self, session, turn_id)
        with self._lock:
            self._turns[(session, turn_id)] = handle
        try:
            self.request(protocol.ChatSend(session, turn_id, text, dict(context or {})))
        except DaemonError:
            self._forget(handle)
            raise
        return handle

    def answer(self, approval_id: str, answer: ApprovalAnswer) -> bool:
        """Answer an approval; False when it is no longer waiting (timed out).  With
        ``always`` the daemon also keeps the answer as a standing grant scoped to the
        action (see :mod:`passepartout.security.approvals.standing`)."""
        try:
            return self.request(protocol.AnswerApproval(approval_id, answer))
        except DaemonError as err:
            if err.kind == "expired":
                return False
            raise

    def cancel(self, session: str, turn: str | None = None) -> None:
        self.request(protocol.ChatCancel(session, turn))

    def sessions(self) -> list[dict[str, Any]]:
        """The kept sessions (id, title, messages, last-activity), most recent first."""
        return self.request(protocol.Sessions())

    def history(self, session: str) -> list[dict[str, Any]]:
        """A session's messages (role, content ...), oldest first."""
        return self.request(protocol.SessionHistory(session))

    def status(self) -> dict[str, Any]:
        return self.request(protocol.Status())

    def jobs(self) -> list[dict[str, Any]]:
        return self.request(protocol.Jobs())

    def usage(self, session: str | None = None) -> dict[str, Any]:
        """Tokens and cost of ``session`` and of today (nested plists as dicts)."""
        return self.request(protocol.Usage(session))

    # -- the wire ----------------------------------------------------------------------

    def _send(self, message: list[Any]) -> None:
        data = frame(message)  # too large: the caller's error, the connection stays
        with self._send_lock:
            try:
                self.client.sock.sendall(data)
            except OSError as err:
                self._shut(f"the connection failed ({err})")
                raise DaemonError(f"the connection failed ({err})", "closed") from None

    def _read_loop(self) -> None:
        reason = "the daemon closed the connection"
        try:
            while not self.closed:
                self._dispatch(self.client._read())
        except DaemonError as err:
            reason = err.message
        except OSError as err:
            reason = f"the connection failed ({err})"
        except Exception:  # a bug here must end the face, not hang its callers
            log.exception("the face's reader failed")
            reason = "the face's reader failed"
        self._shut(reason)

    def _dispatch(self, message: list[Any]) -> None:
        kind = str(message[0])
        if kind == "call":
            with self._send_lock, contextlib.suppress(OSError):  # acknowledged first
                    self.client.sock.sendall(frame([Symbol("return"), message[1], None]))
            method = str(message[2]) if len(message) > 2 else ""
            event = protocol.decode(method, (message[3] if len(message) > 3 else None) or [])
            if event is not None:
                self._route(event)
            return
        with self._lock:
            pending = self._calls.pop(message[1], None) if isinstance(message[1], int) else None
        if pending is None:
            log.debug("a reply to no waiting call: %s", kind)
            return
        pending.ok = kind == "return"
        pending.value = message[2] if len(message) > 2 else None
        pending.done.set()

    def _route(self, event: Event) -> None:
        key = protocol.turn_of(event)
        with self._lock:
            handle = self._turns.get(key) if key is not None else None
            listeners = list(self._listeners)
        if handle is not None:
            handle.put(event)
            return
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # one listener's bug must not stop the reader
                log.exception("a face listener failed on %s", type(event).__name__)

    def _forget(self, handle: Turn) -> None:
        with self._lock:
            if self._turns.get((handle.session, handle.turn)) is handle:
                del self._turns[(handle.session, handle.turn)]

    def _shut(self, reason: str) -> None:
        with self._lock:
            if self._closed.is_set():
                return
            self.closed_reason = reason
            self._closed.set()
            calls, self._calls = list(self._calls.values()), {}
            turns, self._turns = list(self._turns.values()), {}
            listeners = list(self._listeners)
        for pending in calls:
            pending.value = ["closed", reason]
            pending.done.set()
        gone = Disconnected(reason)
        for handle in turns:
            handle.put(gone)
        for listener in listeners:
            try:
                listener(gone)
            except Exception:
                log.exception("a face listener failed on Disconnected")

