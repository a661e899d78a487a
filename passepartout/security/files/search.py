"""``grep-search``'s engine: a regular expression over a tree, bounded in time and size.

The pattern is Python's syntax, matched by the ``regex`` module, whose searches take a
time limit: a pattern that backtracks catastrophically (``(a+)+$`` on a long line)
stops at the deadline with a clear error instead of holding the turn for good.  (The
module counts the process's CPU time: on a loaded machine the wall time can be a few
times longer, never unbounded.)  Its
compiler unrolls counted repeats, so a pattern whose unrolled size is too large
(``(a{1000}){1000}``) is refused before it is compiled.  The output stops at a number
of matches and of characters.

The tree is walked without following symlinks, from the real directory, with a
descriptor per directory (``os.fwalk``): each file is opened beside its directory's
descriptor as a regular file only (:func:`~passepartout.security.files.open_leaf`),
so a FIFO, a socket or a device is skipped, never waited on.  Hidden and version
control directories, binary and huge files are left out, and so is every place
``refused`` names (credentials, the agent's state), with a note saying how many.
"""

from __future__ import annotations

import logging
import os
import re
import re._constants as sre  # the standard parser's opcodes, to size a pattern
import re._parser as sre_parse
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from passepartout.errors import PipelineError
from passepartout.security.files import FileToolError, open_leaf, read_leaf

log = logging.getLogger(__name__)

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})
MAX_PATTERN_SIZE = 20_000  # unrolled pattern items; past this, compiling alone takes seconds
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)


@dataclass(frozen=True)
class Limits:
    """How far one search may go."""

    seconds: float = 3.0
    matches: int = 200
    output_chars: int = 40_000
    file_bytes: int = 2_000_000
    line_chars: int = 300


@dataclass
class _Found:
    lines: list[str]
    chars: int = 0
    skipped: int = 0
    stopped: str = ""


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled (a pattern that is not a valid regular expression is searched
    as plain text); a pattern too large to compile quickly is a clear error."""
    if not isinstance(pattern, str) or not pattern:
        raise PipelineError("grep-search needs a non-empty pattern")
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return regex.compile(regex.escape(pattern))
    if _size(parsed) > MAX_PATTERN_SIZE:
        raise PipelineError(
            f"the pattern {_short(pattern)} is too large once its counted repeats are "
            f"unrolled (more than {MAX_PATTERN_SIZE} items): use smaller {{n}} counts"
        )
    try:
        return regex.compile(pattern)
    except (regex.error, RecursionError, OverflowError):
        return regex.compile(regex.escape(pattern))


def _size(node: Any) -> int:
    """The unrolled size of a parsed pattern: each counted repeat multiplies its body."""
    total = 0
    for op, av in node:
        if op in _REPEATS:
            low, _high, body = av
            total += max(1, low) * _size(body)
        else:
            total += 1 + sum(_size(sub) for sub in _subpatterns(av))
        if total > MAX_PATTERN_SIZE:
            break
    return total


def _subpatterns(value: Any) -> Iterator[Any]:
    if isinstance(value, sre_parse.SubPattern):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _subpatterns(item)


def search(
    pattern: str,
    root: Path,
    *,
    refused: Callable[[Path], str | None] = lambda path: None,
    limits: Limits | None = None,
) -> str:
    """``path:line: text`` for each line under ``root`` that matches ``pattern``."""
    limits = limits or Limits()
    compiled = compile_pattern(pattern)
    real = Path(os.path.realpath(root))
    if not real.is_dir():
        raise PipelineError(f"no such directory: {root}")
    reason = refused(real)
    if reason is not None:
        raise PipelineError(f"refused: {reason}")
    deadline = time.monotonic() + limits.seconds
    found = _Found([])
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(real):
        here = Path(dirpath)
        kept = []
        for name in sorted(dirnames):
            if name in SKIP_DIRS or name.startswith("."):
                continue
            if refused(here / name) is not None:
                found.skipped += 1
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            path = here / name
            if refused(path) is not None:
                found.skipped += 1
                continue
            if time.monotonic() > deadline:
                found.stopped = f"stopped after {limits.seconds:g} s"
                return _report(found)
            text = _text_of(dir_fd, name, path, limits.file_bytes)
            if text is not None and not _scan(compiled, text, path.relative_to(real), found,
                                              deadline, limits, pattern):
                return _report(found)
    return _report(found)


def _text_of(dir_fd: int, name: str, path: Path, max_bytes: int) -> str | None:
    """The text of a regular, small, non-binary file (``None``: leave it out)."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        data = read_leaf(open_leaf(dir_fd, name, str(path)), max_bytes)
    except (FileToolError, OSError):
        return None
    if len(data) > max_bytes or b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def _scan(compiled: regex.Pattern[str], text: str, rel: Path, found: _Found,
          deadline: float, limits: Limits, pattern: str) -> bool:
    """Add the matching lines of one file; ``False`` once a limit stops the search."""
    for number, line in enumerate(text.splitlines(), 1):
        left = deadline - time.monotonic()
        if left <= 0:
            found.stopped = f"stopped after {limits.seconds:g} s"
            return False
        try:
            hit = compiled.search(line, timeout=left)
        except TimeoutError:
            if left < limits.seconds / 2:  # the walk had used the time: not this line
                found.stopped = f"stopped after {limits.seconds:g} s"
                return False
            raise PipelineError(
                f"the pattern {_short(pattern)} took longer than {limits.seconds:g} s "
                f"(at {rel}:{number}): it backtracks too much; simplify it (no nested "
                "repeats such as (a+)+ or (a|aa)*)"
            ) from None
        if hit is None:
            continue
        entry = f"{rel}:{number}: {line.strip()[: limits.line_chars]}"
        found.lines.append(entry)
        found.chars += len(entry) + 1
        if len(found.lines) >= limits.matches:
            found.stopped = f"stopped at {limits.matches} matches"
            return False
        if found.chars >= limits.output_chars:
            found.stopped = f"stopped at {limits.output_chars} characters of output"
            return False
    return True


def _report(found: _Found) -> str:
    text = "\n".join(found.lines) if found.lines else "no matches"
    if found.stopped:
        text += f"\n[{found.stopped}]"
    if found.skipped:
        places = "place" if found.skipped == 1 else "places"
        text += f"\n[left out: {found.skipped} {places} holding secrets or the agent's state]"
    return text


def _short(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 60 else pattern[:57] + "...")
