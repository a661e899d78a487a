"""Simple globs, expanded the way bash expands them, so the analysis knows the argv.

Only one shape is taken on: plain characters with ``*`` and ``?`` in the last path
component (``*.py``, ``src/test_?.py``, ``/tmp/x*``); no ``[``, no quoting, no ``//``, no
trailing ``/``, and no pattern component starting with a dot (whether ``.*`` matches
``.`` and ``..`` depends on bash's version). With ``dotglob``, ``nullglob``,
``failglob``, ``nocaseglob``, ``extglob`` and ``GLOBIGNORE`` as ``bash -c`` starts them
(all off, unset), such a pattern matches the names of its directory that do not start
with a dot, sorted; when none matches, bash passes the pattern itself. The order is
the C.UTF-8 locale's (code points), which the sandbox sets. Everything else is "unsure"
(``None``) and the analysis asks.
"""

from __future__ import annotations

import os
import re

GLOB = frozenset("*?")


def _split(pattern: str) -> tuple[str, str] | None:
    """The directory prefix (kept in every match) and the last component, or None."""
    if "//" in pattern or pattern.endswith("/") or "[" in pattern:
        return None
    last = pattern.rsplit("/", 1)[-1]
    prefix = pattern[: len(pattern) - len(last)]
    if GLOB & set(prefix) or not GLOB & set(last) or last.startswith("."):
        return None
    return prefix, last


def supported(pattern: str) -> bool:
    """Whether ``pattern`` has the one shape this module expands exactly."""
    return _split(pattern) is not None


def _regex(last: str) -> re.Pattern[str]:
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in last)
    return re.compile(body, re.DOTALL)


def expand(pattern: str, cwd: str) -> list[str] | None:
    """The words bash makes of ``pattern`` run in ``cwd``; None when this cannot be sure."""
    split = _split(pattern)
    if split is None:
        return None
    prefix, last = split
    directory = os.path.join(cwd, prefix) if prefix else cwd
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return [pattern]  # bash finds nothing there either
    except OSError:
        return None
    regex = _regex(last)
    found = []
    for name in names:
        if any("\udc80" <= ch <= "\udcff" for ch in name):
            return None  # not UTF-8: how bash's ? reads its bytes is not ours to guess
        if not name.startswith(".") and regex.fullmatch(name):
            found.append(prefix + name)
    return sorted(found) or [pattern]


def may_reach(pattern: str, cwd: str, place: str) -> bool:
    """Whether ``pattern`` could name ``place`` or a directory above it (now or later).

    ``place`` is absolute, or relative meaning "anywhere" (``.git/hooks``). Unsure
    patterns answer True.
    """
    split = _split(pattern)
    if split is None:
        return True
    prefix, last = split
    regex = _regex(last)
    if not os.path.isabs(place):
        return any(
            not part.startswith(".") and regex.fullmatch(part)
            for part in place.strip("/").split("/")
        )
    base = os.path.join(cwd, prefix) if prefix else cwd
    for directory in {os.path.normpath(base), os.path.realpath(base)}:
        for target in {os.path.normpath(place), os.path.realpath(place)}:
            head = directory.rstrip("/") + "/"
            if target.startswith(head):
                first = target[len(head) :].split("/", 1)[0]
                if not first.startswith(".") and regex.fullmatch(first):
                    return True
    return False
