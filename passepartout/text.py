"""Plain text helpers: text for a terminal, and text on one line.

:func:`terminal_safe`: control characters are shown escaped, never sent raw.  A
model's reply and a tool's output reach the terminal of ``passepartout chat``; raw, their
escape sequences would act on it (OSC 52 writes the person's clipboard, CSI moves the
cursor and repaints what was shown, a carriage return or backspaces overwrite a line)
and bidirectional controls would reorder what the person reads.  So every C0 control
but newline and tab, DEL, the C1 controls U+0080-U+009F (U+009B is a CSI on
its own), the bidi embeddings, overrides, isolates and marks, the Unicode line and
paragraph separators and lone surrogates are written as ``\\xNN``, ``\\r`` or
``\\uNNNN``.  Backslashes are left as they are: the output is for reading, not for
decoding, and escaping twice changes nothing.

:func:`one_line`: a text of any origin (a model's, a tool's, an MCP server's, a
person's) shown on one line of a list, a prompt or a log: no control, format or
separator character is left in it, and it is bounded.  Org text has its own
(:func:`passepartout.org.escape.org_line`), which escapes for org instead.
"""

from __future__ import annotations

import re
import unicodedata

# Bidi embeddings, overrides and pop (U+202A-E), isolates (U+2066-9) and the marks
# (ALM, LRM, RLM): the characters of "Trojan Source" reordering.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(
    "\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "\u2028\u2029\ud800-\udfff]"
)


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"  # a line end written by Windows tools overwrites nothing
    if char == "\r":
        return "\\r"
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every character that acts on a terminal shown escaped.

    Newlines and tabs stay; a ``\\r\\n`` pair becomes a newline."""
    return _UNSAFE.sub(_shown, text)


def one_line(text: object, limit: int | None = 100, *, on_word: bool = False,
             shown: bool = False) -> str:
    """``text`` on one line: every control, format (bidirectional marks, zero-width
    characters) and separator character (line and paragraph breaks, no-break spaces)
    becomes a space, runs of white space one space; cut at ``limit`` characters with an
    ellipsis (at the last whole word when ``on_word``), never cut when ``limit`` is
    None.  ``shown``: control characters are shown escaped (:func:`terminal_safe`)
    instead, for a person who must see what a model or a tool sent."""
    raw = terminal_safe(str(text)) if shown else str(text)
    flat = " ".join("".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in raw).split())
    return flat if limit is None else shorten(flat, limit, on_word=on_word)


def shorten(text: str, limit: int, *, on_word: bool = False) -> str:
    """``text`` when it has at most ``limit`` characters; else its start and an ellipsis,
    ``limit`` characters in all (or its whole words that fit, and the ellipsis, when
    ``on_word``)."""
    if len(text) <= limit:
        return text
    if on_word:
        return (text[:limit].rsplit(" ", 1)[0] or text[:limit]) + "…"
    return text[: limit - 1] + "…"
