"""The channel of hook runs, with what the shipped handlers need on top: the reply of
a prompt they started, and a word in the event log when a proposed action was refused.

It wraps the orchestrator's background channel (which records every run's reply in
``events.org`` and asks approvals in Emacs) and passes everything on to it.  A handler
that runs a heading's prompt :meth:`expects` a reply for that heading; the first run
of the heading's session that starts afterwards is bound to it, and its text is
handed over when the run is done.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable

from passepartout.events.hookact import SENSOR
from passepartout.loop.actions import ApprovalRequest
from passepartout.loop.events import Channel, Denied, Error, Event, ToolResult
from passepartout.loop.replytext import ReplyText
from passepartout.org.eventlog import Entry, EventLog
from passepartout.signals import Signal

log = logging.getLogger(__name__)

OnReply = Callable[[str], None]


class HookReplies:
    """A channel for ``hook`` runs that hands replies to the handlers that wait."""

    def __init__(self, inner: Channel, events: EventLog) -> None:
        self.inner = inner
        self.events = events
        self._waiting: dict[str, collections.deque[OnReply]] = {}  # node id -> callbacks
        self._bound: dict[str, tuple[OnReply, ReplyText]] = {}  # turn id -> (callback, text)
        self._lock = threading.Lock()

    def expect(self, node_id: str, on_reply: OnReply) -> None:
        """Give the reply of the next prompt run of ``node_id`` to ``on_reply``."""
        with self._lock:
            self._waiting.setdefault(node_id, collections.deque()).append(on_reply)

    def forget(self, node_id: str) -> None:
        """Drop the newest wait for ``node_id`` (its run was never queued)."""
        with self._lock:
            waiting = self._waiting.get(node_id)
            if waiting:
                waiting.pop()

    def send(self, signal: Signal, event: Event) -> None:
        try:
            if signal.meta.get(SENSOR):
                self._acted(signal, event)
            else:
                self._capture(signal, event)
        except Exception:  # a handler's failure must not stop the run's own record
            log.exception("hook reply handling failed")
        self.inner.send(signal, event)

    def approve(self, request: ApprovalRequest) -> bool:
        return self.inner.approve(request)

    def _capture(self, signal: Signal, event: Event) -> None:
        turn = str(signal.meta.get("turn-id") or "")
        node_id = str(signal.meta.get("heading") or "")
        if not turn or not node_id:
            return
        with self._lock:
            bound = self._bound.get(turn)
            if bound is None:
                waiting = self._waiting.get(node_id)
                if not waiting:
                    return
                bound = self._bound[turn] = (waiting.popleft(), ReplyText())
            done = bound[1].take(event)
            if done is None:
                return
            del self._bound[turn]
        answer = bound[1].answer(done)
        if answer is not None:  # else the background channel has recorded what went wrong
            bound[0](answer)

    def _acted(self, signal: Signal, event: Event) -> None:
        # A proposed action the gates refused, or that failed: say so where hooks report.
        hook = str(signal.meta.get("hook") or "hook")
        node_id = str(signal.meta.get("heading") or "") or None
        match event:
            case Denied(action=action, reason=reason):
                self.events.record(Entry("hook", f"{hook}: {action} refused", reason,
                                         "warning", node_id))
            case Error(message=message) if not message.startswith("stopped "):
                self.events.record(Entry("hook", f"{hook}: its action failed", message,
                                         "warning", node_id))
            case ToolResult(ok=False, name=name, output=output):
                self.events.record(Entry("hook", f"{hook}: {name} failed", output,
                                         "warning", node_id))
            case _:
                pass
