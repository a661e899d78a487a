"""bashlex's parse of a command line, remembered: the shell gate reads the same line
for its analysis and for its plain commands, and the shell tool analyses it again
before it runs.  The trees are only read, never changed.

bashlex builds its parser's tables when it is imported (about a third of a second of
processor time, every time): it is imported on the first parse, or by :func:`warm_up`
once the daemon is ready, never on the way to the daemon's first answer."""

from __future__ import annotations

import functools
import threading
from typing import Any


@functools.lru_cache(maxsize=256)
def parse(cmd: str) -> tuple[Any, ...]:
    """bashlex's trees of ``cmd``; raises what bashlex raises (a failure is not kept)."""
    import bashlex

    return tuple(bashlex.parse(cmd))


def warm_up(delay: float) -> None:
    """Import bashlex in the background after ``delay`` seconds, so that the first
    command the shell gate reads does not wait for its tables."""
    def load() -> None:
        import bashlex  # noqa: F401

    timer = threading.Timer(delay, load)
    timer.name, timer.daemon = "bashlex-import", True
    timer.start()
