"""A fast reader for the plain s-expressions Emacs prints; sexpdata reads the rest.

sexpdata steps through a string one character at a time: a 1 MB message took about
60 ms to read here.  What Emacs sends the server is plain: lists, vectors, strings
whose only escapes are ``\\"`` and ``\\\\``, numbers, symbols and keywords.  This reader
takes exactly that with one regular expression; on anything else (a quote, a dotted
pair, a character literal, another escape, ``#``-syntax) it declines, and
:func:`passepartout.signals.loads` falls back to sexpdata.  Both give the same values.
"""

from __future__ import annotations

import math
import re
from typing import Any

from passepartout.errors import ProtocolError

DECLINED = object()  # "not plain: ask sexpdata"

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<open>[(\[])
  | (?P<close>[)\]])
  | "(?P<string>[^"\\]*(?:\\["\\][^"\\]*)*)"  # unrolled: no per-character alternation
  | (?P<atom>[^\s()\[\]"';`,?#\\.][^\s()\[\]"';`,#\\]*)
    """,
    re.VERBOSE,
)
_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)")
_NUMBERISH = re.compile(r"[-+]?[.\d]")
_UNESCAPE = re.compile(r'\\(["\\])')
# Elisp's printed forms of the floats that have no digits (both readers use these).
SPECIAL_FLOATS = {
    "1.0e+INF": math.inf,
    "-1.0e+INF": -math.inf,
    "0.0e+NaN": math.nan,
    "-0.0e+NaN": math.nan,
}


def read_plain(text: str, max_nesting: int) -> Any:
    """The value of ``text``, or :data:`DECLINED` when it is not plain."""
    from passepartout.signals import Keyword, Symbol

    stack: list[list[Any]] = []
    result: Any = DECLINED
    pos, end = 0, len(text)
    while pos < end:
        match = _TOKEN.match(text, pos)
        if match is None:
            return DECLINED
        pos = match.end()
        kind = match.lastgroup
        if kind == "space":
            continue
        if result is not DECLINED:
            return DECLINED  # more than one expression: let sexpdata say so
        if kind == "open":
            if len(stack) >= max_nesting:
                raise ProtocolError(f"s-expression nested deeper than {max_nesting} levels")
            stack.append([])
            continue
        if kind == "close":
            if not stack:
                return DECLINED
            items = stack.pop()
            value: Any = items or None  # () is nil
        elif kind == "string":
            value = _unescape(match.group("string"))
        else:
            value = _atom(match.group("atom"), Keyword, Symbol)
            if value is DECLINED:
                return DECLINED
        if stack:
            stack[-1].append(value)
        else:
            result = value
    return DECLINED if stack else result


def _unescape(raw: str) -> str:
    """Undo ``\\"`` and ``\\\\`` (the only escapes the token admits), with str.replace:
    re.sub's template expansion cost about 1 us per escape."""
    if "\\" not in raw:
        return raw
    if "\x00" in raw:
        return _UNESCAPE.sub(r"\1", raw)
    # Escapes are pairs read left to right: take the \\ pairs out first, then \".
    return raw.replace("\\\\", "\x00").replace('\\"', '"').replace("\x00", "\\")


def _atom(text: str, keyword: type[str], symbol: type[str]) -> Any:
    if text == "nil":
        return None
    if text == "t":
        return True
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text in SPECIAL_FLOATS:
        return SPECIAL_FLOATS[text]
    if _NUMBERISH.match(text):
        return DECLINED  # a number form this reader does not know (1., -.5, 1e5.)
    if text.startswith(":") and len(text) > 1:
        return keyword(text[1:])
    return symbol(text)
