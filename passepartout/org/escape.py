"""Text into org files: one escaping function, so that no input string (a model's tool
argument, a command's output, a note) becomes a heading, a drawer, a keyword or a
property line in a file the agent writes (the audit log, events, approvals, notes,
schedules).

:func:`org_escape` is that function; every writer goes through it, directly or through
the helpers below.  It neutralises every line break Python or Emacs recognise (``\\r``,
``\\n`` where one line is expected, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, U+0085,
U+2028, U+2029: Python's ``splitlines`` splits at all of them, Emacs only at ``\\n``,
so a writer that let one through would see one line where org sees two, or the other
way round), shows other control characters as ``\\xNN``, puts org's escaping comma
before a body line that org would read as structure, and makes inert, wherever they are
in a line, the constructs org or Emacs evaluate (:data:`ACTIVE`): agenda sexps
(``<%%(...)>``, ``[%%(...)]``, ``%%(...)``), inline source blocks and calls
(``src_lang{...}``, ``call_name()``), links that run code (``elisp:``, ``shell:``, and a
bracket link whose type is not one of org's plain ones, which a link abbreviation could
expand into either), macros (``{{{...}}}``), and file-local variables (a ``-*- ... -*-``
line, a ``Local Variables:`` list).  Inert is org's own escape, a zero-width space: the
text reads the same and nothing in it runs.  Keyword lines (``#+CALL:``, ``#+BEGIN_SRC``,
``#+HEADER:``, ``#+PROPERTY:``, ``#+SETUPFILE:``, ``#+INCLUDE:``, ``#+BIND:``,
``#+MACRO:``, ``#+TBLFM:``) never start a line: they get the comma.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Literal

from passepartout.org.drawer import STRICT_NAME, drawer_lines
from passepartout.text import shorten

Where = Literal["line", "body", "block"]

# Every character Python's str.splitlines() breaks at, \r\n first (one break, not two).
_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Other controls (tab stays), and lone surrogates, which no UTF-8 file can hold.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")
# A line org reads as structure, after org's indentation (spaces and tabs only):
# a heading or any line starting with "*", a "#+" keyword or block line, a drawer or
# property line (":NAME:", ":END:", ":KEY: value"), a planning line right after a
# heading, or a "%%(" diary sexp (which the agenda evaluates).  Leading commas count,
# as in org's own escaping, so that escaping is undone by removing one comma.
# Indentation here is any white space but \n: org counts only spaces and tabs, but
# Python readers (orgparse's property lines) skip a no-break space too.
_BODY_STRUCTURE = re.compile(
    r"^([^\S\n]*)(,*(?:\*|#\+|:[^\s:]*:|(?:SCHEDULED|DEADLINE|CLOSED):|%%))", re.MULTILINE
)
# orgparse ends a drawer at ":END:" anywhere in a line (org only at a line of its own).
_DRAWER_WORD = re.compile(r":(END|PROPERTIES):", re.IGNORECASE)
_HEADING_LINE = re.compile(r"^(?=\*)", re.MULTILINE)
# Inside a block org itself reads only "*" and "#+" lines (its comma rule).
_BLOCK_STRUCTURE = re.compile(r"^([ \t]*)(,*(?:\*|#\+))", re.MULTILINE)
_UNESCAPE = re.compile(r"^([ \t]*),(,*(?:\*|#\+))", re.MULTILINE)
# What JSON leaves raw with ensure_ascii=False but this module would change.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


# Org's own escape, which org never removes: a zero-width space.
ZWSP = "\u200b"
# Bracket link types that only open something (a page, a file in Emacs, a heading, a
# mail); any other type, or a bare word (``[[word]]``), may be a link abbreviation
# (``#+LINK:``, ``org-link-abbrev-alist``) that expands into ``elisp:`` or ``shell:``.
SAFE_LINK_TYPES = frozenset({
    "http", "https", "ftp", "mailto", "file", "id", "doi", "news", "attachment",
    "info", "help", "man", "passepartout"})
# Where org or Emacs would act on text, wherever it stands in a line.  Each match ends
# where the zero-width space goes; what follows it is a lookahead, so that a match never
# swallows the start of the next one and the result is inert in one pass.  A bracket
# link gets it right after its "[[": its type is then no link type and no abbreviation.
ACTIVE = re.compile(
    r"%(?=%[ \t]*\()"  # a sexp org-agenda evaluates: <%%(...)>, [%%(...)], %%(...)
    r"|(?:elisp|shell)(?=:)"  # links that run code, plain, angle or bracket
    r"|\[\[(?=(?P<type>[^\s:\[\]\\\"*#(./~\u200b][^\s:\[\]\\\"\u200b]*)[:\]])"  # [[type:, [[word]]
    r"|src(?=_[^\s\[{]+[\[{])"  # inline source block: src_sh{...}, src_sh[:var x=1]{}
    r"|call(?=_[^\s\[(]+[\[(])"  # inline babel call: call_name(), call_name[...]()
    r"|\{(?=\{\{)"  # a macro, which a #+MACRO: (eval ...) makes code
    r"|-\*(?=-)"  # a file's -*- mode: ...; eval: ... -*- line
    r"|local(?=[ \t]+variables:)",  # a file's Local Variables: list
    re.IGNORECASE,
)


def _inert_at(match: re.Match[str]) -> bool:
    """Whether the zero-width space goes at the end of ``match`` (a bracket link of a
    plain type is left alone)."""
    return not (match.group("type") and match.group("type").lower() in SAFE_LINK_TYPES
                and match.string.startswith(":", match.end("type")))


def inert(text: str) -> str:
    """``text`` with a zero-width space wherever org or Emacs would evaluate it (see
    :data:`ACTIVE`).  It reads the same; idempotent."""
    return ACTIVE.sub(lambda m: m.group() + ZWSP if _inert_at(m) else m.group(), text)


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}" if ord(match.group()) < 0x100 else "\ufffd"


def org_escape(text: Any, where: Where = "body") -> str:
    """``text`` safe to write into an org file at ``where``.

    ``line``: one line (a headline's text, a property value, a list item): every line
    break becomes a space.  ``body``: lines of body
    text under a heading: breaks become ``\\n`` and each line that org would read as a
    heading, keyword, drawer, property, planning line or diary sexp gets a leading
    comma.  ``block``: the contents of a ``#+begin_src`` block: breaks become ``\\n``
    and ``*`` and ``#+`` lines get org's comma (which :func:`unescape_block` and org
    itself remove when reading the block)."""
    flat = inert(_CONTROL.sub(_visible, str(text)))
    if where == "line":
        return _BREAK.sub(" ", flat)
    lines = _BREAK.sub("\n", flat)
    pattern = _BLOCK_STRUCTURE if where == "block" else _BODY_STRUCTURE
    return pattern.sub(r"\1,\2", lines)


def org_line(text: Any, limit: int = 100) -> str:
    """``text`` fit for a headline or a property value: escaped as one line, white
    space runs made one space, bounded.  (Text shown elsewhere than in org goes through
    :func:`passepartout.text.one_line`.)"""
    return shorten(" ".join(org_escape(text, "line").split()), limit)


def body(text: Any, indent: str = "") -> str:
    """Body lines (no trailing newline) under a heading; nothing in them is structure."""
    escaped = org_escape(str(text).strip("\n"), "body")
    return "\n".join(indent + line if line else line for line in escaped.split("\n"))


def their_line(text: Any) -> str:
    """A line of the person's own (a title or property value read from their file and
    written back): kept as it is, but one line.  Text of the agent's never comes here:
    it went through :func:`org_escape` when it came in."""
    return _BREAK.sub(" ", _CONTROL.sub(_visible, str(text)))


def no_drawer_word(text: str) -> str:
    """A property value without the ``:END:`` or ``:PROPERTIES:`` that a looser reader
    (orgparse) would end or open a drawer at (org reads them only on a line alone)."""
    return _DRAWER_WORD.sub(r": \1:", text)


def no_headings(text: str) -> str:
    """Org text kept as it is (a person's own body, read from their file and written
    back), except that a line starting with ``*`` cannot become a heading there."""
    return _HEADING_LINE.sub(",", text)


def escape_block(text: str) -> str:
    """Org's own escaping for block contents: a comma before ``*`` and ``#+`` lines."""
    return org_escape(text, "block")


def unescape_block(text: str) -> str:
    """Undo :func:`escape_block`: one comma less before ``*`` and ``#+`` lines."""
    return _UNESCAPE.sub(r"\1\2", text)


def org_json(value: Any, indent: int | None = 2) -> str:
    """JSON for a src block that :func:`org_escape` leaves exactly as it is (characters
    it would change are written as JSON escapes), so the block reads back the same."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=True, default=str)
    text = _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    # Where inert() would put a zero-width space (always inside a string: nothing outside
    # one is a letter, "%", "*", "{{" or "[[" on one line), the next character is written
    # as its JSON escape instead: the same value, and nothing left to make inert.
    return _JSON_STRING.sub(lambda m: _json_inert(m.group()), text)


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _json_inert(literal: str) -> str:
    out, at = [], 0
    for match in ACTIVE.finditer(literal):
        if _inert_at(match) and match.end() > at:
            out += [literal[at:match.end()], f"\\u{ord(literal[match.end()]):04x}"]
            at = match.end() + 1
    return "".join(out) + literal[at:]


def timestamp(moment: dt.datetime | None = None) -> str:
    """An inactive org timestamp with seconds, e.g. ``[2025-03-01 Sat 14:03:07]``."""
    moment = moment or dt.datetime.now().astimezone()
    return moment.strftime("[%Y-%m-%d %a %H:%M:%S]")


def src_block(text: str, language: str = "json", indent: str = "") -> str:
    """A ``#+begin_src`` block holding ``text`` exactly (escaped as org escapes it)."""
    lines = org_escape(text, "block").rstrip("\n").split("\n")
    inner = "\n".join(indent + line for line in lines)
    return f"{indent}#+begin_src {org_line(language, 40)}\n{inner}\n{indent}#+end_src\n"


def drawer(properties: dict[str, str], indent: str = "") -> str:
    """A property drawer; names must be org property names, values become one line."""
    for key in properties:
        if not STRICT_NAME.fullmatch(key):
            raise ValueError(f"not an org property name: {key!r}")
    lines = drawer_lines(properties.items(), indent,
                         lambda key, value: f":{key}: {property_value(value)}")
    return "\n".join(lines) + "\n"


def property_value(value: Any) -> str:
    """A property value as :func:`drawer` writes it (and a reader gets it back): one
    line, bounded, and no ``:END:`` in it that a looser reader would end the drawer at."""
    return no_drawer_word(org_line(value, 400))
