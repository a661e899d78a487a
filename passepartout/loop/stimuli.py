"""Where signals enter: ``inject`` puts them on a queue per lane, worker threads drain
the lanes, and the heartbeat thread injects a ``:heartbeat`` every interval.

A lane is a chat session (so one person's turns stay in order, and a long turn in one
chat never holds up another) or ``background`` (heartbeat, cron, hooks).
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

log = logging.getLogger(__name__)

BACKGROUND = "background"
_STOP = object()


class _Lane:
    def __init__(self, name: str, loop: Loop, on_idle: threading.Condition) -> None:
        self.name = name
        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.busy = 0
        self._loop = loop
        self._idle = on_idle
        self.thread = threading.Thread(target=self._run, name=f"lane-{name}", daemon=True)
        self.thread.start()

    def put(self, signal: Signal) -> None:
        with self._idle:
            self.busy += 1
        self.queue.put(signal)

    def _run(self) -> None:
        while True:
            item = self.queue.get()
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

    def __init__(self, loop: Loop, *, heartbeat_interval: float | None = None) -> None:
        self.loop = loop
        self.heartbeat_interval = heartbeat_interval
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
        lane = self._lanes.get(lane_name)
        if lane is None:
            with self._idle:
                lane = self._lanes.get(lane_name) or _Lane(lane_name, self.loop, self._idle)
                self._lanes[lane_name] = lane
        lane.put(signal)
        return True

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
                    meta={"source": Keyword("heartbeat")},
                )
            )

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until every lane is empty (tests and shutdown use it)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while any(lane.busy for lane in self._lanes.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self.loop.stopping.set()
        for lane in list(self._lanes.values()):
            lane.queue.put(_STOP)
        for lane in list(self._lanes.values()):
            lane.thread.join(timeout)
        if self._heartbeat is not None:
            self._heartbeat.join(timeout)
