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
from typing import Any, Protocol

from passepartout.events.eventlog import Entry, EventLog
from passepartout.events.hookact import SENSOR
from passepartout.loop.actions import ApprovalRequest
from passepartout.signals import Signal

log = logging.getLogger(__name__)

OnReply = Callable[[str], None]


class _Channel(Protocol):
    def send(self, signal: Signal, kind: str, data: dict[str, Any]) -> None: ...

    def approve(self, request: ApprovalRequest) -> bool: ...


class HookReplies:
    """A channel for ``hook`` runs that hands replies to the handlers that wait."""

    def __init__(self, inner: _Channel, events: EventLog) -> None:
        self.inner = inner
        self.events = events
        self._waiting: dict[str, collections.deque[OnReply]] = {}  # node id -> callbacks
        self._bound: dict[str, tuple[OnReply, list[str]]] = {}  # turn id -> (callback, text)
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

    def send(self, signal: Signal, kind: str, data: dict[str, Any]) -> None:
        try:
            if signal.meta.get(SENSOR):
                self._acted(signal, kind, data)
            else:
                self._capture(signal, kind, data)
        except Exception:  # a handler's failure must not stop the run's own record
            log.exception("hook reply handling failed")
        self.inner.send(signal, kind, data)

    def approve(self, request: ApprovalRequest) -> bool:
        return self.inner.approve(request)

    def _capture(self, signal: Signal, kind: str, data: dict[str, Any]) -> None:
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
                bound = self._bound[turn] = (waiting.popleft(), [])
            if kind == "reply":
                bound[1].append(str(data.get("text") or ""))
            elif kind == "error":
                bound[1].append(f"error: {data.get('message')}")
            if kind != "done":
                return
            del self._bound[turn]
        text = "\n\n".join(t for t in bound[1] if t).strip()
        if data.get("cancelled") or not text or text.startswith("error:"):
            return  # the background channel has recorded what went wrong
        bound[0](text)

    def _acted(self, signal: Signal, kind: str, data: dict[str, Any]) -> None:
        # A proposed action the gates refused, or that failed: say so where hooks report.
        hook = str(signal.meta.get("hook") or "hook")
        node_id = str(signal.meta.get("heading") or "") or None
        if kind == "denied":
            self.events.record(Entry("hook", f"{hook}: {data.get('action')} refused",
                                     str(data.get("reason") or ""), "warning", node_id))
        elif kind == "error" and not str(data.get("message") or "").startswith("stopped "):
            self.events.record(Entry("hook", f"{hook}: its action failed",
                                     str(data.get("message") or ""), "warning", node_id))
        elif kind == "tool-result" and not data.get("ok"):
            self.events.record(Entry("hook", f"{hook}: {data.get('name')} failed",
                                     str(data.get("output") or ""), "warning", node_id))
