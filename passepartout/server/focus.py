"""The heading the person is at in Emacs: the fovea of the agent's context.

Emacs reports it (debounced) through the ``focus`` method; context assembly reads it
from ``agent.services["focus"]``.  The original's point sensor, as a small holder.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

FOCUS_BODY_MAX = 4000  # characters of the heading's own text kept (Emacs bounds it too)


@dataclass(frozen=True)
class Focus:
    """Where the person is: the org file, the heading's id and title, its outline path,
    and its own text (up to the next heading), bounded."""

    file: str | None = None
    id: str | None = None
    heading: str | None = None
    outline: tuple[str, ...] = ()
    body: str | None = None
    at: float = field(default_factory=time.time)


class FocusHolder:
    """The latest :class:`Focus`, safe to set from the EPC thread and read from lanes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._focus: Focus | None = None

    def set(self, focus: Focus | None) -> None:
        with self._lock:
            self._focus = focus

    def get(self) -> Focus | None:
        with self._lock:
            return self._focus

    def clear(self) -> None:
        self.set(None)
