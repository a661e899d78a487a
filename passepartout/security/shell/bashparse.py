"""bashlex's parse of a command line, remembered: the shell gate reads the same line
for its analysis and for its plain commands, and the shell tool analyses it again
before it runs.  The trees are only read, never changed."""

from __future__ import annotations

import functools
from typing import Any

import bashlex


@functools.lru_cache(maxsize=256)
def parse(cmd: str) -> tuple[Any, ...]:
    """bashlex's trees of ``cmd``; raises what bashlex raises (a failure is not kept)."""
    return tuple(bashlex.parse(cmd))
