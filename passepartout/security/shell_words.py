"""Bash word decoding, independent of the parser, to catch parse differentials.

bashlex gives each word a quote-removed value, but it is not bash: it reads ``$'\\x41'`` as
a parameter, for instance. So the analysis decodes the raw text of every word again with
bash's own quoting rules, refusing anything it cannot decode exactly, and compares. A word
is *literal* when bash would pass it to the program unchanged by any expansion.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

GLOB_CHARS = frozenset("*?[")
# Characters that follow `$` to form a parameter expansion ($1, $@, $?, $$, $name ...).
_PARAM_START = frozenset("@*#?-$!0123456789_")
# Inside double quotes a backslash escapes only these (bash manual, "Double Quotes").
_DQ_ESCAPABLE = frozenset('$`"\\\n')


@dataclass
class WordInfo:
    """What bash would do to one word, as far as the analysis needs to know."""

    value: str
    expansions: list[str] = field(default_factory=list)
    glob: bool = False
    brace: bool = False
    tilde: bool = False
    continuation: bool = False
    unbalanced: bool = False

    @property
    def literal(self) -> bool:
        """True when the value is exactly the argument bash would pass."""
        return not (self.expansions or self.glob or self.brace or self.tilde or self.unbalanced)


def _dollar(raw: str, i: int) -> str | None:
    """Name the expansion starting at ``raw[i] == '$'``, or None if the `$` is literal."""
    nxt = raw[i + 1] if i + 1 < len(raw) else ""
    if raw.startswith("$((", i):
        return "arithmetic expansion $((...))"
    if nxt == "(":
        return "command substitution $(...)"
    if nxt == "{":
        return "parameter expansion ${...}"
    if nxt == "'":
        return "ANSI-C quoting $'...'"
    if nxt == '"':
        return 'locale quoting $"..."'
    if nxt and (nxt.isalpha() or nxt in _PARAM_START):
        return "parameter expansion $VAR"
    return None


def decode_word(raw: str) -> WordInfo:
    """Decode ``raw`` (the source text of one word) the way bash would."""
    info = WordInfo(value="")
    out: list[str] = []
    i, n = 0, len(raw)
    brace_start = -1
    while i < n:
        c = raw[i]
        if c == "\\":
            if i + 1 >= n:
                out.append("\\")
                i += 1
            elif raw[i + 1] == "\n":
                info.continuation = True
                i += 2
            else:
                out.append(raw[i + 1])
                i += 2
        elif c == "'":
            end = raw.find("'", i + 1)
            if end < 0:
                info.unbalanced = True
                return _finish(info, out)
            out.append(raw[i + 1 : end])
            i = end + 1
        elif c == '"':
            i = _double_quoted(raw, i + 1, out, info)
        elif c == "$":
            kind = _dollar(raw, i)
            if kind:
                info.expansions.append(kind)
            out.append(c)
            i += 1
        elif c == "`":
            info.expansions.append("command substitution `...`")
            out.append(c)
            i += 1
        else:
            if c in GLOB_CHARS:
                info.glob = True
            elif c == "{":
                brace_start = i
            elif c == "}" and brace_start >= 0:
                inner = raw[brace_start + 1 : i]
                # {a,b} and {1..3} expand; a lone {} (as in find -exec) does not.
                info.brace = info.brace or "," in inner or ".." in inner
            elif c == "~" and i == 0:
                info.tilde = True
            out.append(c)
            i += 1
    return _finish(info, out)


def _double_quoted(raw: str, i: int, out: list[str], info: WordInfo) -> int:
    """Consume a double-quoted span starting after the opening quote; return the next index."""
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n and raw[i + 1] in _DQ_ESCAPABLE:
            if raw[i + 1] == "\n":
                info.continuation = True
            else:
                out.append(raw[i + 1])
            i += 2
            continue
        if c == "$":
            kind = _dollar(raw, i)
            if kind and kind not in ("ANSI-C quoting $'...'", 'locale quoting $"..."'):
                info.expansions.append(kind)
        elif c == "`":
            info.expansions.append("command substitution `...`")
        out.append(c)
        i += 1
    info.unbalanced = True
    return i


def _finish(info: WordInfo, out: list[str]) -> WordInfo:
    info.value = "".join(out)
    return info


def suspicious_characters(text: str) -> list[str]:
    """Reasons for characters that make what a person reads differ from what bash runs."""
    reasons: list[str] = []
    seen: set[str] = set()
    for ch in text:
        if ch in seen or ch in "\n\t" or (" " <= ch <= "~"):
            continue
        seen.add(ch)
        code = f"U+{ord(ch):04X}"
        if ch == "\x00":
            continue  # reported separately: NUL cannot be passed to bash at all
        category = unicodedata.category(ch)
        if category in ("Cf", "Cc", "Co", "Cs", "Cn") or (category.startswith("Z") and ch != " "):
            name = unicodedata.name(ch, "unnamed")
            reasons.append(f"invisible or control character {code} ({name.lower()})")
    return reasons


def has_non_ascii(text: str) -> bool:
    """True for any character outside ASCII (a possible homoglyph in a command name)."""
    return any(ord(ch) > 0x7E for ch in text)
