"""Where signals enter: ``inject`` puts them on a queue per lane, worker threads drain
the lanes, and the heartbeat thread injects a ``:heartbeat`` every interval.

A lane is a chat session (so one person's turns stay in order, and a long turn in one
chat never holds up another) or ``background`` (heartbeat, cron, hooks).  Every cron
node is a session, so a lane with nothing to do for ``lane_idle`` seconds ends, and is
made again by the next signal for it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.loop.core import Loop
from passepartout.loop.perceive import perceive
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnContext

log = logging.getLogger(__name__)

BACKGROUND = "background"
LANE_IDLE = 60.0  # seconds a lane waits for work before its thread ends
_STOP = object()


class _Lane:
    def __init__(self, name: str, loop: Loop, on_idle: threading.Condition,
                 lanes: dict[str, _Lane], idle: float) -> None:
        self.name = name
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.busy = 0
        self._loop = loop
        self._idle = on_idle
        self._lanes = lanes
        self._idle_seconds = idle
        self.thread = threading.Thread(target=self._run, name=f"lane-{name}", daemon=True)
        self.thread.start()

    def put(self, signal: Signal) -> None:
        with self._idle:
            self.busy += 1
        self.queue.put(signal)

    def _ended(self) -> bool:
        """Nothing came for a while: leave the table, unless work came meanwhile.

        Under the lock ``inject`` holds while it picks a lane and puts to it, so a
        signal is never put to a lane that has ended."""
        with self._idle:
            if self.busy or not self.queue.empty():
                return False
            if self._lanes.get(self.name) is self:
                del self._lanes[self.name]
            return True

    def _run(self) -> None:
        while True:
            try:
                item = self.queue.get(timeout=self._idle_seconds)
            except queue.Empty:
                if self._ended():
                    return
                continue
            if item is _STOP:
                return
            try:
                self._loop.process(item)
            except Exception:  # the loop reports its own errors; this is the last net
                log.exception("lane %s: unhandled error", self.name)
            finally:
                with self._idle:
                    self.busy -= 1
                    self._idle.notify_all()


class Stimuli:
    """The stimulus queues of a loop, and its heartbeat."""

    def __init__(self, loop: Loop, *, heartbeat_interval: float | None = None,
                 lane_idle: float = LANE_IDLE) -> None:
        self.loop = loop
        self.heartbeat_interval = heartbeat_interval
        self.lane_idle = lane_idle
        self._lanes: dict[str, _Lane] = {}
        self._idle = threading.Condition()
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self.heartbeats = 0

    def inject(self, raw: Any) -> bool:
        """Queue a stimulus (stimulus_inject).  Malformed input is logged and dropped."""
        try:
            signal = perceive(raw)
        except ProtocolError as err:
            log.warning("stimulus dropped: %s", err.message)
            return False
        if self._stop.is_set():
            return False
        lane_name = signal.session_id or BACKGROUND
        with self._idle:  # a lane ends under this lock too: never put to one that ended
            lane = self._lanes.get(lane_name)
            if lane is None:
                lane = _Lane(lane_name, self.loop, self._idle, self._lanes, self.lane_idle)
                self._lanes[lane_name] = lane
            lane.put(signal)
        return True

    def lanes(self) -> list[str]:
        """The sessions whose lane runs now."""
        with self._idle:
            return list(self._lanes)

    def start(self) -> None:
        if self.heartbeat_interval and self._heartbeat is None:
            self._heartbeat = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
            self._heartbeat.start()

    def _beat(self) -> None:
        assert self.heartbeat_interval is not None
        while not self._stop.wait(self.heartbeat_interval):
            background = self._lanes.get(BACKGROUND)
            if background is not None and background.busy:
                continue  # a tick is still being worked on: do not pile them up
            self.heartbeats += 1
            self.inject(
                Signal(
                    payload={"sensor": Keyword("heartbeat"), "unix-time": int(time.time())},
                    turn=TurnContext(face="heartbeat"),
                )
            )

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until every lane is empty (tests and shutdown use it)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while any(lane.busy for lane in list(self._lanes.values())):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.loop.stopping.set()
        with self._idle:
            lanes = list(self._lanes.values())
        for lane in lanes:
            lane.queue.put(_STOP)
        for lane in lanes:
            lane.thread.join(timeout)
        if self._heartbeat is not None:
            self._heartbeat.join(timeout)
