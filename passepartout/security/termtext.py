"""Text for a terminal: control characters are shown escaped, never sent raw.

A model's reply and a tool's output reach the terminal of ``passepartout chat``; raw,
their escape sequences would act on it (OSC 52 writes the person's clipboard, CSI moves
the cursor and repaints what was shown, a carriage return or backspaces overwrite a
line) and bidirectional controls would reorder what the person reads.  So every C0
control but newline and tab, DEL, the C1 controls U+0080-U+009F (U+009B is a CSI on
its own), the bidi embeddings, overrides, isolates and marks, the Unicode line and
paragraph separators and lone surrogates are written as ``\\xNN``, ``\\r`` or
``\\uNNNN``.  Backslashes are left as they are: the output is for reading, not for
decoding, and escaping twice changes nothing.
"""

from __future__ import annotations

import re

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
