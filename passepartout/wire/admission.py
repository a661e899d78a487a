"""Connections that have not presented the token yet: how many may wait, and how long.

A peer that connects gets a thread to read its frames; until a ``hello`` with the right
token it holds that thread for nothing.  So at most ``cap`` such connections wait at
once; over it, the one waiting longest is closed (Emacs says ``hello`` within
milliseconds of connecting, so the newcomer is the likelier honest one, and a few idle
sockets cannot lock Emacs out).  Each waiting connection is closed ``timeout`` seconds
after it connected, whatever it sent meanwhile: a header or body dribbled a byte at a
time is no way to stay.  An authenticated connection leaves the count and has no
deadline (Emacs may stay idle for hours).  A closed connection counts until its thread
has ended: with as many of those as the cap, a newcomer waits a moment for one to end
(and is closed if none does), so that such threads stay bounded too.  One
:class:`Admission` may serve several listening sockets: the cap and the deadline hold
for the whole server.

Closings are logged at most once a minute: the first at once with its reason, later
ones counted and summed up in one line (a flood must not flood the log).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass

from passepartout.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_CAP = 16
DEFAULT_TIMEOUT = 5.0
TIMEOUT_VARIABLE = "PASSEPARTOUT_AUTH_TIMEOUT"
REPORT_EVERY = 60.0  # seconds between two log lines about closed connections
CLOSING_WAIT = 1.0  # how long a newcomer waits for a closed connection's thread to end

TOO_MANY = "too many connections waiting for the token"
STILL_CLOSING = "too many closed connections still ending"


@dataclass
class _Waiting:
    deadline: float
    close: Callable[[], None]


class Admission:
    """The connections waiting for their token, each with its deadline and its close."""

    def __init__(self, cap: int = DEFAULT_CAP, timeout: float = DEFAULT_TIMEOUT) -> None:
        if cap < 1 or not timeout > 0:
            raise ValueError("an admission needs a cap of at least 1 and a positive timeout")
        self.cap = cap
        self.timeout = timeout
        self._waiting: OrderedDict[Hashable, _Waiting] = OrderedDict()  # oldest first
        self._closing: set[Hashable] = set()  # closed here, their threads not ended yet
        self._cond = threading.Condition()
        self._sweeper: threading.Thread | None = None
        self._tally: Counter[str] = Counter()  # closings not logged yet, by reason
        self._logged = -REPORT_EVERY  # when the last line was logged (monotonic)

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> Admission:
        """The default cap, and the deadline ``PASSEPARTOUT_AUTH_TIMEOUT`` sets."""
        raw = settings.get(TIMEOUT_VARIABLE, "").strip()
        if not raw:
            return cls()
        try:
            timeout = float(raw)
        except ValueError:
            timeout = float("nan")
        if not 0.01 <= timeout <= 3600:
            raise ConfigError(f"{TIMEOUT_VARIABLE} must be a number of seconds between 0.01 "
                              f"and 3600, not {raw!r}", variable=TIMEOUT_VARIABLE)
        return cls(timeout=timeout)

    def admit(self, key: Hashable, close: Callable[[], None]) -> bool:
        """A new connection waits for its token (over the cap, the oldest is closed);
        False: too many closed connections are still ending, close this one at once."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._closing) < self.cap, CLOSING_WAIT):
                self._count(STILL_CLOSING, None)
                return False
            while len(self._waiting) >= self.cap:
                self._close(*self._waiting.popitem(last=False), TOO_MANY)
            self._waiting[key] = _Waiting(time.monotonic() + self.timeout, close)
            self._wake_sweeper()
            return True

    def attach(self, key: Hashable, close: Callable[[], None]) -> bool:
        """Close the connection with ``close`` from now on; False: it was closed already."""
        with self._cond:
            entry = self._waiting.get(key)
            if entry is not None:
                entry.close = close
            return entry is not None

    def passed(self, key: Hashable) -> None:
        """The connection presented the token: no cap, no deadline any more."""
        with self._cond:
            self._waiting.pop(key, None)

    def left(self, key: Hashable) -> None:
        """The connection's thread is ending."""
        with self._cond:
            self._waiting.pop(key, None)
            if key in self._closing:
                self._closing.discard(key)
                self._cond.notify_all()

    def refused(self, reason: str, peer: object = None) -> None:
        """Count a connection closed before its token for ``reason`` (a wrong token...)."""
        with self._cond:
            self._count(reason, peer)

    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    def flush(self) -> None:
        """Log the closings not logged yet (at stop)."""
        with self._cond:
            if self._tally:
                self._report()

    # -- inside the lock ----------------------------------------------------------------

    def _wake_sweeper(self) -> None:
        """The sweeper runs only while a connection waits or a count is to be logged."""
        if self._sweeper is None:
            self._sweeper = threading.Thread(target=self._sweep, name="epc-admission",
                                             daemon=True)
            self._sweeper.start()
        else:
            self._cond.notify_all()  # it may sleep until a later time than a new deadline

    def _sweep(self) -> None:
        with self._cond:
            while self._waiting or self._tally:
                now = time.monotonic()
                wake = []
                if self._waiting:
                    key, first = next(iter(self._waiting.items()))
                    if first.deadline <= now:
                        del self._waiting[key]
                        self._close(key, first, f"no token within {self.timeout:g} s")
                        continue
                    wake.append(first.deadline)
                if self._tally:
                    if self._logged + REPORT_EVERY <= now:
                        self._report()
                        continue
                    wake.append(self._logged + REPORT_EVERY)
                self._cond.wait(min(wake) - now)
            self._sweeper = None

    def _close(self, key: Hashable, entry: _Waiting, reason: str) -> None:
        self._closing.add(key)
        with contextlib.suppress(OSError):  # the peer may have gone already
            entry.close()
        self._count(reason, None)

    def _count(self, reason: str, peer: object) -> None:
        self._tally[reason] += 1
        if self._logged + REPORT_EVERY <= time.monotonic():
            self._report(peer)
        else:
            self._wake_sweeper()  # to log the count when the minute is over

    def _report(self, peer: object = None) -> None:
        total = sum(self._tally.values())
        if total == 1:
            where = f" (from {peer})" if peer else ""
            log.warning("closed a connection before its token: %s%s",
                        next(iter(self._tally)), where)
        elif total:
            reasons = ", ".join(f"{n} {reason}" for reason, n in self._tally.most_common())
            log.warning("closed %d connections before their token: %s", total, reasons)
        self._tally.clear()
        self._logged = time.monotonic()
