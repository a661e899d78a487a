"""The turns running now: each turn's one record, found by its session for a cancel.

A turn's record is its :class:`~passepartout.turn.TurnState` (its cancel flag, the
models that answered, its spend, and what each layer keeps for it: the peer channel's
sender and streamed text, the recorder of what a turn showed).  Every signal of the
turn carries it, so no layer keeps a table of turns of its own; this registry holds the
running turn of each session (a cancel names a session, perhaps a turn) and the turns
cancelled before they started, the newest :data:`KEPT_CANCELS` of them: its one bound.
:meth:`Turns.end`, when the loop has shown the turn's Done, is the one place a turn's
record is dropped.
"""

from __future__ import annotations

import collections
import threading

from passepartout.signals import Signal
from passepartout.turn import TurnState

KEPT_CANCELS = 256


class Turns:
    """The running turn of each session, and the turns cancelled before they started."""

    def __init__(self, kept_cancels: int = KEPT_CANCELS) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, tuple[str | None, TurnState]] = {}
        self._cancelled: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._kept_cancels = kept_cancels

    def start(self, signal: Signal) -> TurnState:
        """The record of the turn ``signal`` starts: the one its face gave with the
        prompt, else a new one; already cancelled when a cancel came first."""
        given = signal.turn.state
        state = given if given is not None and not given.ended else TurnState()
        turn = signal.turn.turn_id
        with self._lock:
            if turn is not None and turn in self._cancelled:
                del self._cancelled[turn]  # consumed: it is this turn's now
                state.cancel.set()
            if signal.session_id is not None:
                self._running[signal.session_id] = (turn, state)
        return state

    def cancel(self, session_id: str, turn_id: str | None = None) -> None:
        """Cancel a turn (or the session's running turn), even one not started yet."""
        with self._lock:
            if turn_id is not None:
                self._cancelled[turn_id] = None
                while len(self._cancelled) > self._kept_cancels:
                    self._cancelled.popitem(last=False)
            running = self._running.get(session_id)
            if running is not None and (turn_id is None or running[0] == turn_id):
                running[1].cancel.set()

    def end(self, session_id: str | None, state: TurnState) -> None:
        """The turn of ``state`` ended and its Done was shown: its record goes."""
        with self._lock:
            running = self._running.get(session_id) if session_id is not None else None
            if running is not None and running[1] is state:
                del self._running[str(session_id)]
        state.end()

    def running(self) -> int:
        """How many sessions have a turn running."""
        with self._lock:
            return len(self._running)
