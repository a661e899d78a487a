"""The start of a long-lived process (the daemon, the server Emacs starts): when each
phase happened, and the garbage collector held while it imports.

Phases are marked as they pass (:func:`mark`, cheap and thread-safe): seconds since
the process began (its interpreter's own start included) and the processor time used
by then.  The daemon writes them to its log at debug level once it is ready
(``passepartout -v daemon`` shows them), so that a slow start says where its time went.

A start imports some 3,000 modules (litellm alone most of them): hundreds of thousands
of objects, nearly all kept for the life of the process.  The cyclic garbage collector
would walk them again and again while they are made (a fifth of the import's time,
measured), to find almost nothing (under 2,000 objects after litellm's import).  So it
is held (:func:`hold_collector`) until the start is over; :func:`release_collector`
then freezes what the start made (no collection walks it during the first turns) and
turns the collector back on; a minute later the frozen objects are handed back to it,
so that whatever garbage the start left is freed after all.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time

log = logging.getLogger(__name__)

HAND_BACK_AFTER = 60.0  # seconds after the start is over, what it made goes back to the collector

_marks: list[tuple[str, float, float]] = []
_lock = threading.Lock()
_held = False


def _process_start() -> float:
    """The process's start on the monotonic clock (Linux: from /proc, to a clock tick);
    where that cannot be read, the moment this module was imported."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # starttime, the 22nd field: clock ticks after boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.monotonic() - max(0.0, age)
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()


_STARTED = _process_start()


def since_start() -> float:
    """Seconds since the process began."""
    return time.monotonic() - _STARTED


def mark(phase: str) -> None:
    """Note that ``phase`` is reached now."""
    with _lock:
        _marks.append((phase, since_start(), time.process_time()))


def report() -> str:
    """The phases so far, one line: ``phase +wall s (cpu s)`` in order."""
    with _lock:
        marks = list(_marks)
    return "; ".join(f"{phase} +{wall:.3f} s (cpu {cpu:.2f} s)" for phase, wall, cpu in marks)


def hold_collector() -> None:
    """Hold the cyclic garbage collector for the start (see the module's text); a
    collector already off (switched off by whoever embeds us) is left as it is."""
    global _held
    with _lock:
        if gc.isenabled() and not _held:
            gc.disable()
            _held = True


def release_collector() -> None:
    """The start is over (ready, or failed and saying why): freeze what it made, turn
    the collector back on, and hand the frozen objects back to it a minute later."""
    global _held
    with _lock:
        if not _held:
            return
        _held = False
        gc.freeze()
        gc.enable()
    timer = threading.Timer(HAND_BACK_AFTER, gc.unfreeze)
    timer.name, timer.daemon = "gc-unfreeze", True
    timer.start()
    log.debug("garbage collector back on; %d objects frozen for %.0f s",
              gc.get_freeze_count(), HAND_BACK_AFTER)
