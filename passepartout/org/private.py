"""Which lines of an org text are private, read the way org-mode 9.5 reads them.

One reader decides it for every caller (the file tools, the memex scan, the event
scan, the boundary filter), and ``tests/test_orgprivacy_emacs.py`` checks it line by
line against org-mode itself in ``emacs --batch``.  Org's rules, as measured there:

- Lines are split on ``\\n`` only (not on ``\\r``, ``\\f``, U+2028 ...).
- A heading is ``^\\*+ `` (``org-outline-regexp-bol``): stars and a *space*.  A star
  and a tab or a no-break space is body text.  Org's outline functions do not know
  about blocks: ``* x`` inside ``#+begin_src`` is a heading (and ends the block).
- A heading's tags are ``org-tag-line-re``: the last blank-separated word of the
  line, ``:a:b:`` made of letters, digits (Unicode, as Emacs's ``[:alnum:]``) and
  ``_@#%``, followed only by spaces and tabs.
- Tags are inherited from every ancestor (``org-tags-exclude-from-inheritance`` is
  empty by default; a person who excludes the private tag there still gets it
  inherited here, the safe side) and from ``#+FILETAGS:`` (split on blanks and
  colons, every such keyword line of the file; a line inside a ``#+begin_src``,
  ``example``, ``export``, ``comment`` or ``verse`` block closed before the next
  heading, a property drawer or a LaTeX environment is not a keyword for org).
- Lines before the first heading carry no tags in org; here they are private when the
  file tags are (``#+FILETAGS: :@personal:`` makes the whole file private).

A trailing ``\\r`` is ignored when reading tags (Emacs reads a CRLF file without
them); that can only make more lines private.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

DEFAULT_TAG = "@personal"

_HEADING = re.compile(r"\*+ ")
# org-tag-line-re with a broad class; each tag character is checked by _tag_chars_ok.
_TAG_LINE = re.compile(r"\*+ (?:.*[ \t])?(:([^ \t]+):)[ \t]*")
_FILETAGS = re.compile(r"[ \t]*#\+FILETAGS:[ \t]*(.*)", re.IGNORECASE)
_BEGIN = re.compile(r"[ \t]*#\+BEGIN_(\S+)", re.IGNORECASE)
_FOOTNOTE = re.compile(r"\[fn:[-\w]+\]")
_DYNAMIC = re.compile(r"[ \t]*#\+BEGIN:(?: |$)", re.IGNORECASE)
_DYNAMIC_END = re.compile(r"[ \t]*#\+END:?[ \t]*", re.IGNORECASE)
_LATEX_BEGIN = re.compile(r"[ \t]*\\begin\{([A-Za-z0-9*]+)\}")
_PROPERTIES = re.compile(r"[ \t]*:PROPERTIES:[ \t]*", re.IGNORECASE)
_DRAWER_END = re.compile(r"[ \t]*:END:[ \t]*", re.IGNORECASE)
_NODE_PROPERTY = re.compile(r"[ \t]*:\S+:(?: .*)?[ \t]*")
_DRAWER = re.compile(r"[ \t]*:([\w-]+):[ \t]*")
_PLANNING = re.compile(r"[ \t]*(?:CLOSED|DEADLINE|SCHEDULED):")
_SPLIT_BLANKS = re.compile(r"[ \f\t\n\r\v]+")  # Emacs's split-string default
# Blocks whose contents are not elements (org-element's "lesser" blocks).
_VERBATIM_BLOCKS = frozenset({"src", "example", "export", "comment", "verse"})
# Emacs's [:alnum:] for a non-ASCII character (character.c, alphanumericp).
_ALNUM_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nl", "Nd"})
# org-mode by name: auto-mode-alist's "\.org\'" (any case, backup suffixes dropped),
# and the archives org-archive writes and opens in org-mode.


def split_lines(text: str) -> list[str]:
    """``text``'s lines as org sees them (split on ``\\n`` alone), without the ``\\n``."""
    return text.split("\n")


def heading_level(line: str) -> int:
    """The number of stars of a heading line, 0 for any other line."""
    match = _HEADING.match(line)
    return match.end() - 1 if match else 0


@functools.lru_cache(maxsize=4096)
def _tag_chars_ok(group: str) -> bool:
    for char in group:
        if char in "_@#%:" or (char.isascii() and char.isalnum()):
            continue
        if char.isascii() or unicodedata.category(char) not in _ALNUM_CATEGORIES:
            return False
    return True


def heading_tags(line: str) -> tuple[str, ...]:
    """The local tags of a heading line, as ``org-get-tags`` reads them (in order)."""
    if line.endswith("\r"):
        line = line[:-1]
    if not line.endswith(":") and not line.endswith((" ", "\t")):
        return ()
    match = _TAG_LINE.fullmatch(line)
    if match is None or not _tag_chars_ok(match.group(2)):
        return ()
    return tuple(t for t in match.group(2).split(":") if t)


def filetags(text: str) -> tuple[str, ...]:
    """The tags of every ``#+FILETAGS:`` keyword of an org text, as org collects them."""
    if "#+" not in text:
        return ()
    found: list[str] = []
    for _, value in _keyword_lines(split_lines(text)):
        for word in _SPLIT_BLANKS.split(value):
            found += [t for t in word.split(":") if t]
    return tuple(dict.fromkeys(found))


def _keyword_lines(lines: list[str]) -> list[tuple[int, str]]:
    """(index, value) of each line org-element reads as a FILETAGS keyword."""
    out: list[tuple[int, str]] = []
    candidates = [i for i, line in enumerate(lines) if "#+" in line and _FILETAGS.match(line)]
    if not candidates:
        return out
    hidden = _verbatim_lines(lines)
    for index in candidates:
        if index not in hidden:
            match = _FILETAGS.match(lines[index])
            assert match is not None
            out.append((index, match.group(1).strip()))
    return out


def _verbatim_lines(lines: list[str]) -> set[int]:
    """Lines whose text org-element does not read as elements: property drawers, and
    the insides of verbatim blocks and LaTeX environments closed within their section
    (or drawer, or greater block; org's lists skip over blocks whole)."""
    hidden: set[int] = set()
    starts = [i for i, line in enumerate(lines) if heading_level(line)]
    for start, end in zip([0, *starts], [*starts, len(lines)], strict=True):
        i = start
        if start in starts:  # the heading, its planning line, its property drawer
            i += 1
            if i < end and _PLANNING.match(lines[i]):
                i += 1
            if i < end and _PROPERTIES.fullmatch(lines[i]):
                close = _find(lines, i + 1, end, _DRAWER_END)
                inside = range(i + 1, close if close is not None else i)
                if close is not None and all(_NODE_PROPERTY.fullmatch(lines[j]) for j in inside):
                    hidden.update(inside)
                    i = close + 1
        _elements(lines, i, end, hidden)
    return hidden


def _elements(lines: list[str], i: int, end: int, hidden: set[int]) -> None:
    while i < end:
        line = lines[i]
        begin = _BEGIN.match(line) if "#+" in line else None
        if begin is not None:
            kind = begin.group(1)
            closing = re.compile(rf"[ \t]*#\+END_{re.escape(kind)}[ \t]*", re.IGNORECASE)
            close = _find(lines, i + 1, end, closing)
            if close is not None:
                if kind.lower() not in _VERBATIM_BLOCKS:
                    _elements(lines, i + 1, close, hidden)  # a greater block
                else:
                    hidden.update(range(i + 1, close))
                i = close + 1
                continue
        if line.startswith("[fn:") and _FOOTNOTE.match(line):
            # a footnote definition holds elements up to the next one, a heading or
            # two blank lines: a block must close before that
            close = _footnote_end(lines, i + 1, end)
            _elements(lines, i + 1, close, hidden)
            i = close
            continue
        dynamic = _DYNAMIC.match(line) if begin is None and "#+" in line else None
        if dynamic is not None:
            close = _find(lines, i + 1, end, _DYNAMIC_END)
            if close is not None:
                _elements(lines, i + 1, close, hidden)
                i = close + 1
                continue
        drawer = _DRAWER.fullmatch(line) if line.rstrip().endswith(":") else None
        if drawer is not None:
            close = _find(lines, i + 1, end, _DRAWER_END)
            if close is not None:
                _elements(lines, i + 1, close, hidden)
                i = close + 1
                continue
        latex = _LATEX_BEGIN.match(line) if "\\begin{" in line else None
        if latex is not None:
            name = re.escape(latex.group(1))
            close = _find(lines, i, end, re.compile(rf".*\\end\{{{name}\}}[ \t]*"))
            if close is not None:
                hidden.update(range(i, close + 1))
                i = close + 1
                continue
        i += 1


def _footnote_end(lines: list[str], start: int, end: int) -> int:
    for j in range(start, end):
        if lines[j].startswith("[fn:") and _FOOTNOTE.match(lines[j]):
            return j
        if j + 1 < end and not lines[j].strip(" \t\r") and not lines[j + 1].strip(" \t\r"):
            return j
    return end


def _find(lines: list[str], start: int, end: int, pattern: re.Pattern[str]) -> int | None:
    for j in range(start, end):
        if pattern.fullmatch(lines[j]):
            return j
    return None


@dataclass(frozen=True)
class Reading:
    """An org text's lines and, for each, whether it is private."""

    lines: list[str]
    private: list[bool]
    file_private: bool

    def private_text(self) -> list[str]:
        """The private lines themselves (what the privacy index learns)."""
        return [line for line, hidden in zip(self.lines, self.private, strict=True) if hidden]

    def any_private(self) -> bool:
        return self.file_private or any(self.private)


def read_private(text: str, tag: str = DEFAULT_TAG) -> Reading:
    """Which lines of org ``text`` are inside a subtree tagged ``tag`` (own, inherited
    or file tags)."""
    lines = split_lines(text)
    if tag not in text:
        return Reading(lines, [False] * len(lines), False)
    file_private = tag in filetags(text)
    if file_private:
        return Reading(lines, [True] * len(lines), True)
    private: list[bool] = []
    stack: list[tuple[int, bool]] = []  # (level, private) of the open headings
    current = False
    for line in lines:
        level = heading_level(line) if line.startswith("*") else 0
        if level:
            while stack and stack[-1][0] >= level:
                stack.pop()
            inherited = bool(stack) and stack[-1][1]
            current = inherited or tag in heading_tags(line)
            stack.append((level, current))
        private.append(current)
    return Reading(lines, private, False)


MARKER = "[private: withheld]"


def redact(text: str, tag: str = DEFAULT_TAG, marker: str = MARKER, *,
           per_line: bool = False) -> str:
    """``text`` with each run of private lines replaced by one ``marker`` line (with
    ``per_line``, each private line by one, so line numbers stay)."""
    if tag not in text:
        return text
    reading = read_private(text, tag)
    if not reading.any_private():
        return text
    kept: list[str] = []
    for line, hidden in zip(reading.lines, reading.private, strict=True):
        if not hidden:
            kept.append(line)
        elif per_line or not kept or kept[-1] != marker:
            kept.append(marker)
    return "\n".join(kept)
