"""Bash word decoding, independent of the parser: a word is proved literal or it is not.

bashlex gives each word a quote-removed value, but it is not bash: it reads ``$'\\x41'`` as
a parameter, and a nested brace ``{a,{b,c}}`` as one plain word. So the analysis decodes
the raw text of every word again, and the decoder never guesses: it accepts only forms
whose result it knows exactly (plain characters, single quotes, double quotes without
``$`` or backquote, backslash escapes), plus two expansions it can carry out itself (a
leading ``~`` or ``~/`` and a simple glob, see :mod:`.glob`). Anything else, even
a form bash would leave alone (``"$"``, ``{a}`` next to a comma, ``a=~``), is reported
as not literal, so the analysis asks.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field

GLOB_CHARS = frozenset("*?[")
# Unquoted characters that stand for themselves in bash (outside the brace check below).
_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./,:=+@%^!#]{}"
)
# Characters of a glob bash expands the way :mod:`.glob` does (no quoting, no [).
_SIMPLE_GLOB = frozenset(_PLAIN - set("{}!#") | {"*", "?"})
# Characters that follow `$` to form a parameter expansion ($1, $@, $?, $$, $name ...).
_PARAM_START = frozenset("@*#?-$!0123456789_")
# Inside double quotes a backslash escapes only these (bash manual, "Double Quotes").
_DQ_ESCAPABLE = frozenset('$`"\\\n')


@dataclass
class WordInfo:
    """What bash would do to one word, as far as the analysis can prove it.

    ``value`` is the argument bash passes when :attr:`literal`; with ``tilde`` it is the
    argument after ``~`` became ``home``; with ``glob`` it is the pattern (which bash
    passes unchanged only when nothing matches). ``expansions`` names every form that
    keeps the word from being proved (a reason each).
    """

    value: str
    expansions: list[str] = field(default_factory=list)
    glob: bool = False
    simple_glob: bool = False
    brace: bool = False
    tilde: bool = False
    continuation: bool = False
    unbalanced: bool = False

    @property
    def literal(self) -> bool:
        """True when the value is exactly the argument bash would pass, expansion-free."""
        return not (
            self.expansions
            or self.glob
            or self.brace
            or self.tilde
            or self.unbalanced
            or self.continuation
        )

    @property
    def known(self) -> bool:
        """True when the value is exact: literal, or a ``~``/``~/`` word made absolute."""
        exact_tilde = self.tilde and not (
            self.expansions or self.glob or self.brace or self.unbalanced or self.continuation
        )
        return exact_tilde or self.literal


def _dollar(raw: str, i: int) -> str:
    """Name the form starting at ``raw[i] == '$'`` (every `$` keeps a word from being proved)."""
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
    return "a $ sign (bash may read it as an expansion)"


def decode_word(raw: str, home: str | None = None) -> WordInfo:
    """Decode ``raw`` (the source text of one word) exactly as bash would, or say why not.

    ``home`` is the value bash gives a leading ``~`` (the sandbox's ``HOME``); by default
    the analysing process's own.
    """
    info = WordInfo(value="")
    out: list[str] = []
    opens: list[int] = []  # positions of the unquoted { and }
    closes: list[int] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            if i + 1 >= n:
                info.expansions.append("a backslash at the end of a word")
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
                break
            out.append(raw[i + 1 : end])
            i = end + 1
        elif c == '"':
            i = _double_quoted(raw, i + 1, out, info)
        elif c == "$":
            info.expansions.append(_dollar(raw, i))
            out.append(c)
            i += 1
        elif c == "`":
            info.expansions.append("command substitution `...`")
            out.append(c)
            i += 1
        elif c == "~":
            _tilde(raw, i, info)
            out.append(c)
            i += 1
        elif c in GLOB_CHARS:
            info.glob = True
            out.append(c)
            i += 1
        elif c in _PLAIN or (c.isprintable() and not c.isspace() and not c.isascii()):
            if c == "{":
                opens.append(i)
            elif c == "}":
                closes.append(i)
            elif c == "#" and i == 0:
                info.expansions.append("a word starting with # (a comment to bash)")
            out.append(c)
            i += 1
        else:
            info.expansions.append(f"the character {c!r} unquoted in a word")
            out.append(c)
            i += 1
    info.value = "".join(out)
    if opens and closes and max(closes) > min(opens):
        inner = raw[min(opens) : max(closes) + 1]
        # Bash expands {a,b} and {x..y} at any nesting; a comma or .. anywhere between
        # the first unquoted { and the last unquoted } is enough to ask.
        info.brace = "," in inner or ".." in inner
    if info.tilde and not (info.expansions or info.glob or info.brace):
        info.value = (home if home is not None else os.path.expanduser("~")) + info.value[1:]
    if info.glob:
        info.simple_glob = (
            not (info.expansions or info.brace or info.tilde or info.unbalanced)
            and all(ch in _SIMPLE_GLOB for ch in raw)
        )
    return info


def _tilde(raw: str, i: int, info: WordInfo) -> None:
    """An unquoted ``~``: ``~`` and ``~/...`` at the start are known; other forms are not."""
    if i == 0:
        if len(raw) == 1 or raw[1] == "/":
            info.tilde = True
        else:
            info.expansions.append("a tilde form other than ~ or ~/ (~user, ~+, ~-)")
    elif raw[i - 1] in "=:":
        # `a=~/x` and `PATH=a:~/b` are expanded by bash in assignment-like arguments.
        info.expansions.append("a tilde after = or : (bash may expand it)")


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
            info.expansions.append(_dollar(raw, i))
        elif c == "`":
            info.expansions.append("command substitution `...`")
        out.append(c)
        i += 1
    info.unbalanced = True
    return i


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
