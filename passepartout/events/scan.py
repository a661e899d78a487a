"""Finding ``:CRON:`` and ``:HOOK:`` drawers in org files, read as org-mode reads them.

A heading is a job or a hook only where org itself sees the property: the property
drawer right after the headline (and its planning line), every line of it a property
line up to ``:END:`` (``org-get-property-block``), the value as ``org-entry-get`` gives
it (``:CRON+:`` lines appended, ``nil`` for none).  A drawer anywhere else (after body
text, in a list item, inside a ``#+begin_src``/``example``/``quote`` ... block) is text
to org, and so here.  A ``COMMENT`` heading and an ``:ARCHIVE:``-tagged one (with
their subtrees, and a whole file tagged ``ARCHIVE`` by ``#+FILETAGS:``) are skipped,
as org's agenda skips them.  File bytes are decoded as Emacs does (UTF-8; line ends
CRLF or CR converted when a file uses them alone).

``tests/test_scan_drawers_emacs.py`` checks this reading against org-mode itself in
``emacs --batch`` on generated documents.

A byte regex finds the candidate lines first, so a file without any is not decoded.
A file that cannot be read or decoded is reported by name and skipped.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import AnyStr

from passepartout.events.jobs import FileScan, OrgNode, ScanProblem, derive_id
from passepartout.org.private import _verbatim_lines, filetags, heading_tags

log = logging.getLogger(__name__)

# Candidates: unanchored, so the regex engine can skip ahead on the leading colon.
_CANDIDATE = re.compile(rb"(?i):(?:hook|cron)\+?:")
_CANDIDATE_TEXT = re.compile(r"(?i):(?:hook|cron)\+?:")
# org-outline-regexp-bol: stars and a space (a tab is body text).
_OUTLINE = re.compile(r"\*+ ")
# org-planning-line-re, looked at with case-fold-search on (an org buffer's default).
_PLANNING = re.compile(r"[ \t]*(?:CLOSED|DEADLINE|SCHEDULED):", re.IGNORECASE | re.ASCII)
# org-property-drawer-re, line by line (each pattern matches a whole line).
_DRAWER_OPEN = re.compile(r"[ \t]*:PROPERTIES:[ \t]*", re.IGNORECASE | re.ASCII)
_DRAWER_CLOSE = re.compile(r"[ \t]*:END:[ \t]*", re.IGNORECASE | re.ASCII)
# Emacs's \S- in an org buffer: not a character of whitespace syntax.
_NONBLANK = "[^\t\n\x0c\r \xa0\u2000-\u200b\u202f\u205f\u3000]"
_DRAWER_LINE = re.compile(rf"[ \t]*:{_NONBLANK}+:(?: .*)?[ \t]*")
# org-property-re: the key and the value of one property line.
_PROPERTY = re.compile(rf"[ \t]*:({_NONBLANK}+):(?:|[ \t]+(.*?))[ \t]*")
_TODO_KEYWORD = re.compile(r"[ \t]*#\+(?:SEQ_|TYP_)?TODO:[ \t]*(.*)", re.IGNORECASE | re.ASCII)
_SPLIT_BLANKS = re.compile(r"[ \f\t\n\r\v]+")  # split-string's default
_KEYWORD_KEY = re.compile(r"(.*?)(?:\(([^!@/])?.*?\))?")
_TAGS = re.compile(r"[ \t]+:[\w@#%:]+:$")
_PRIORITY = re.compile(r"^\[#.\][ \t]*")
COMMENT = "COMMENT"
ARCHIVE_TAG = "ARCHIVE"
DEFAULT_TODO_KEYWORDS = ("TODO", "DONE")
WATCHED_PROPERTIES = ("CRON", "HOOK")


def is_org_file(path: str | Path) -> bool:
    """An org file worth scanning: not an editor's lock, backup or autosave file."""
    name = os.path.basename(path)
    return name.endswith(".org") and not name.startswith((".#", "#"))


def has_candidates(data: bytes) -> bool:
    """True when some line of ``data`` starts (after blanks) with ``:HOOK:`` or ``:CRON:``
    (or ``:HOOK+:``, ``:CRON+:``): a line ending in CR alone counts as a line end here."""
    return any(True for _ in _candidate_offsets(data))


def _at_line_start(buf: AnyStr, pos: int) -> bool:
    """True when only blanks stand between the start of ``pos``'s line and ``pos``."""
    newline, cr, blanks = ("\n", "\r", " \t") if isinstance(buf, str) else (b"\n", b"\r", b" \t")
    line_start = max(buf.rfind(newline, 0, pos), buf.rfind(cr, 0, pos)) + 1
    return not buf[line_start:pos].strip(blanks)


def _candidate_offsets(data: bytes) -> Iterator[int]:
    return (m.start() for m in _CANDIDATE.finditer(data) if _at_line_start(data, m.start()))


def decode_org(data: bytes) -> str:
    """An org file's bytes as Emacs reads them with ``utf-8``: line ends converted as
    its end-of-line detection decides.  A file with any lone LF is read as is; else
    CRLF line ends (stray CRs kept) or CR line ends become LF.  UnicodeDecodeError
    when the bytes are not UTF-8."""
    text = data.decode("utf-8")
    if "\r" not in text:
        return text
    lone_lf = text.count("\n") - text.count("\r\n")
    if lone_lf:
        return text
    if "\r\n" in text:
        return text.replace("\r\n", "\n")
    return text.replace("\r", "\n")


def _keyword_name(word: str) -> str:
    """``WAIT(w@/!)`` -> ``WAIT``, as ``org-remove-keyword-keys`` reads a keyword."""
    match = _KEYWORD_KEY.fullmatch(word)
    return match.group(1) if match else word


def _todo_keywords(lines: list[str]) -> tuple[str, ...]:
    candidates = [i for i, line in enumerate(lines) if "#+" in line and _TODO_KEYWORD.match(line)]
    if not candidates:
        return DEFAULT_TODO_KEYWORDS
    hidden = _verbatim_lines(lines)
    seen = False
    words: list[str] = []
    for index in candidates:
        if index in hidden:
            continue
        match = _TODO_KEYWORD.match(lines[index])
        assert match is not None
        seen = True
        words += [_keyword_name(w) for w in _SPLIT_BLANKS.split(match.group(1)) if w and w != "|"]
    return tuple(dict.fromkeys(words)) if seen else DEFAULT_TODO_KEYWORDS


def todo_keywords(text: str) -> tuple[str, ...]:
    """The TODO keywords a file declares with ``#+TODO:`` (org's defaults without any)."""
    return _todo_keywords(text.split("\n"))


def clean_title(raw: str, keywords: Iterable[str] = DEFAULT_TODO_KEYWORDS) -> str:
    """A heading's title as ``org-get-heading`` with no tags, todo, priority or comment."""
    title = raw.strip()
    first, _, rest = title.partition(" ")
    if first in set(keywords):
        title = rest.lstrip()
    title = _PRIORITY.sub("", title)
    if title.startswith("COMMENT ") or title == "COMMENT":
        title = title[len("COMMENT") :].lstrip()
    return _TAGS.sub("", title).strip()


def _complex_heading(keywords: tuple[str, ...]) -> re.Pattern[str]:
    """org-complex-heading-regexp for ``keywords`` (case-sensitive, as org reads it)."""
    todo = "|".join(re.escape(k) for k in sorted(keywords, key=len, reverse=True))
    todo_part = rf"(?: +({todo}))?" if todo else "()"
    return re.compile(rf"(\*+){todo_part}(?: +(\[#.\]))?(?: +(.*?))??"
                      rf"(?:[ \t]+(:[\w@#%:]+:))?[ \t]*")


def _commented(line: str, heading: re.Pattern[str]) -> bool:
    """The headline's text starts with COMMENT (``org-in-commented-heading-p``)."""
    match = heading.fullmatch(line)
    title: str = (match.group(4) or "") if match else ""
    return title == COMMENT or title.startswith(COMMENT + " ")


def _archived(line: str) -> bool:
    """The headline carries the ARCHIVE tag (``org-in-archived-heading-p``, one level)."""
    return not line.endswith("\r") and ARCHIVE_TAG in heading_tags(line)


def property_block(lines: list[str], heading: int, end: int) -> tuple[int, int] | None:
    """The property lines (first, past-last index) of the heading at line ``heading``
    whose section ends before line ``end``, where ``org-get-property-block`` finds
    them: right after the headline and its planning line, every line a property line
    up to ``:END:``.  None when org sees no property drawer there."""
    at = heading + 1
    if at < end and _PLANNING.match(lines[at]):
        at += 1
    if at >= end or not _DRAWER_OPEN.fullmatch(lines[at]):
        return None
    for j in range(at + 1, end):
        if _DRAWER_CLOSE.fullmatch(lines[j]):
            return at + 1, j
        if not _DRAWER_LINE.fullmatch(lines[j]):
            return None
    return None


def entry_get(lines: list[str], block: tuple[int, int], name: str) -> str | None:
    """The value of property ``name`` in the property lines ``block``, as ``org-entry-get``
    gives it without inheritance: the first ``:NAME:`` line's value and every ``:NAME+:``
    one's, joined by a space; None when there is none or the value is ``nil``."""
    quoted = re.escape(name)
    base = re.compile(rf"[ \t]*:{quoted}:(?:|[ \t]+(.*?))[ \t]*", re.IGNORECASE | re.ASCII)
    plus = re.compile(rf"[ \t]*:{quoted}\+:(?:|[ \t]+(.*?))[ \t]*", re.IGNORECASE | re.ASCII)
    first: str | None = None
    more: list[str] = []
    for j in range(*block):
        if first is None and (match := base.fullmatch(lines[j])):
            first = match.group(1) or ""
        elif match := plus.fullmatch(lines[j]):
            more.append(match.group(1) or "")
    if first == "nil":
        first = None
    if first is None and not more:
        return None
    value = " ".join(v for v in (first, *more) if v is not None)
    return None if value == "nil" else value


def entry_properties(lines: list[str], block: tuple[int, int]) -> dict[str, str]:
    """Every property of the property lines ``block`` (names upper-cased, ``NAME+``
    folded into ``NAME``), each valued as ``org-entry-get`` gives it."""
    names: dict[str, str] = {}
    for j in range(*block):
        match = _PROPERTY.fullmatch(lines[j])
        if match:
            name = match.group(1)
            name = name[:-1] if name.endswith("+") and len(name) > 1 else name
            names.setdefault(name.upper(), name)
    out: dict[str, str] = {}
    for upper, name in names.items():
        value = entry_get(lines, block, name)
        if value is not None:
            out[upper] = value
    return out


def scan_file(path: str | Path) -> FileScan:
    """The CRON/HOOK nodes of one org file (problems reported, never raised)."""
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return FileScan(name, problems=[ScanProblem(name, f"cannot read: {err.strerror or err}")])
    return scan_bytes(data, name)


def scan_bytes(data: bytes, file: str) -> FileScan:
    """The CRON/HOOK nodes of an org file's bytes."""
    if not has_candidates(data):
        return FileScan(file)
    try:
        text = decode_org(data)
    except UnicodeDecodeError as err:
        return FileScan(file, problems=[ScanProblem(file, f"not UTF-8 text: {err}")])
    return scan_text(text, file)


def scan_text(text: str, file: str, outline: tuple[str, ...] = ()) -> FileScan:
    """The CRON/HOOK nodes of org ``text`` (as Emacs holds it: lines end in LF).

    ``outline`` is the titles above ``text`` when it is a piece of a file (a subtree
    Emacs sent), so the nodes get the ids they have in the whole file.
    """
    return FileScan(file, nodes=[node for _, node in located_nodes(text, file, outline)])


def located_nodes(text: str, file: str,
                  outline: tuple[str, ...] = ()) -> list[tuple[int, OrgNode]]:
    """The CRON/HOOK nodes of org ``text``, each with its headline's line index."""
    if not _CANDIDATE_TEXT.search(text):
        return []
    lines = text.split("\n")
    if ARCHIVE_TAG in filetags(text):
        return []  # org's agenda skips a file tagged ARCHIVE whole
    keywords = _todo_keywords(lines)
    complex_heading = _complex_heading(keywords)
    heads = [i for i, line in enumerate(lines) if line.startswith("*") and _OUTLINE.match(line)]
    found: list[tuple[int, OrgNode]] = []
    stack: list[tuple[int, int, bool]] = []  # (level, line, skipped) of the open headings
    for n, index in enumerate(heads):
        line = lines[index]
        level = _OUTLINE.match(line).end() - 1  # type: ignore[union-attr]
        while stack and stack[-1][0] >= level:
            stack.pop()
        skipped = ((bool(stack) and stack[-1][2])
                   or (COMMENT in line and _commented(line, complex_heading))
                   or (ARCHIVE_TAG in line and _archived(line)))
        stack.append((level, index, skipped))
        if skipped:
            continue
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        block = property_block(lines, index, end)
        if block is None:
            continue
        if not any(entry_get(lines, block, p) is not None for p in WATCHED_PROPERTIES):
            continue
        properties = entry_properties(lines, block)
        titles = tuple(clean_title(lines[i][lvl:], keywords) for lvl, i, _ in stack[:-1])
        title = clean_title(line[level:], keywords)
        node_id = properties.get("ID") or derive_id(file, [*outline, *titles, title])
        body = [lines[j] for j in range(index + 1, end) if not block[0] - 1 <= j <= block[1]]
        if index + 1 < block[0] - 1:
            body = body[1:]  # the planning line
        found.append((index, OrgNode(
            id=node_id,
            file=file,
            heading=title,
            outline=outline + titles,
            level=level,
            body="\n".join(body).strip(),
            properties=properties,
            text="\n".join(lines[index:end]).rstrip(),
        )))
    return found


def org_files(dirs: Iterable[str | Path]) -> Iterator[Path]:
    """Every org file under ``dirs`` (hidden directories skipped), each once."""
    seen: set[Path] = set()
    for directory in dirs:
        root = Path(directory)
        if not root.is_dir():
            continue
        for base, subdirs, files in os.walk(root):
            subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
            for name in sorted(files):
                if is_org_file(name):
                    path = Path(base, name).resolve()
                    if path not in seen:
                        seen.add(path)
                        yield path


def scan_tree(dirs: Iterable[str | Path]) -> Iterator[FileScan]:
    """Scan every org file under ``dirs``."""
    for path in org_files(dirs):
        yield scan_file(path)
