"""Finding ``:CRON:`` and ``:HOOK:`` drawers in org files, fast.

Parsing a whole memex with orgparse is slow, and almost no heading carries these
properties.  So a byte regex finds the candidate lines first; only a file that has
one is decoded, and only the headings that hold a candidate are handed to orgparse
(with the file's ``#+TODO:`` lines, so custom keywords leave the titles as org reads
them).  A file that cannot be read or decoded is reported by name and skipped.
"""

from __future__ import annotations

import bisect
import logging
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import AnyStr

import orgparse

from passepartout.events.jobs import FileScan, OrgNode, ScanProblem, derive_id

log = logging.getLogger(__name__)

# Candidates: unanchored, so the regex engine can skip ahead on the leading colon.
_CANDIDATE = re.compile(rb"(?i):(?:hook|cron):")
_CANDIDATE_TEXT = re.compile(r"(?i):(?:hook|cron):")
# Unanchored patterns with a literal start: re's multiline "^" is ten times slower.
_HEADING = re.compile(r"(?:\A|\n)(\*+)(?:[ \t]+([^\n]*))?(?=\n|\Z)")
_TODO_LINE = re.compile(r"#\+(?:SEQ_|TYP_)?TODO:[ \t]*([^\n]*)", re.I)
_PRIORITY = re.compile(r"^\[#.\][ \t]*")
_TAGS = re.compile(r"[ \t]+:[\w@#%:]+:$")
DEFAULT_TODO_KEYWORDS = ("TODO", "DONE")
WATCHED_PROPERTIES = ("CRON", "HOOK")


def is_org_file(path: str | Path) -> bool:
    """An org file worth scanning: not an editor's lock, backup or autosave file."""
    name = os.path.basename(path)
    return name.endswith(".org") and not name.startswith((".#", "#"))


def has_candidates(data: bytes) -> bool:
    """True when some line of ``data`` starts (after blanks) with ``:HOOK:`` or ``:CRON:``."""
    return any(True for _ in _candidate_offsets(data))


def _at_line_start(buf: AnyStr, pos: int) -> bool:
    """True when only blanks stand between the start of ``pos``'s line and ``pos``."""
    newline, blanks = ("\n", " \t") if isinstance(buf, str) else (b"\n", b" \t")
    line_start = buf.rfind(newline, 0, pos) + 1
    return not buf[line_start:pos].strip(blanks)


def _candidate_offsets(data: bytes) -> Iterator[int]:
    return (m.start() for m in _CANDIDATE.finditer(data) if _at_line_start(data, m.start()))


def _candidate_positions(text: str) -> list[int]:
    return [m.start() for m in _CANDIDATE_TEXT.finditer(text) if _at_line_start(text, m.start())]


def _todo_lines(text: str) -> list[str]:
    return [m[1].strip() for m in _TODO_LINE.finditer(text) if _at_line_start(text, m.start())]


def todo_keywords(text: str) -> tuple[str, ...]:
    """The TODO keywords a file declares with ``#+TODO:`` (org's defaults without any)."""
    return _keywords(_todo_lines(text))


def _keywords(todo_lines: list[str]) -> tuple[str, ...]:
    words: list[str] = []
    for line in todo_lines:
        for word in line.split():
            if word != "|":
                words.append(word.split("(")[0])  # "WAIT(w@/!)" -> "WAIT"
    return tuple(words) or DEFAULT_TODO_KEYWORDS


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
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        return FileScan(file, problems=[ScanProblem(file, f"not UTF-8 text: {err}")])
    return scan_text(text, file)


def scan_text(text: str, file: str, outline: tuple[str, ...] = ()) -> FileScan:
    """The CRON/HOOK nodes of org ``text``.

    ``outline`` is the titles above ``text`` when it is a piece of a file (a subtree
    Emacs sent), so the nodes get the ids they have in the whole file.
    """
    scan = FileScan(file)
    positions = _candidate_positions(text)
    if not positions:
        return scan
    todo_lines = _todo_lines(text)
    keywords = _keywords(todo_lines)
    header = "".join(f"#+TODO: {line}\n" for line in todo_lines)
    headings = [(m.start(1), len(m[1]), (m[2] or "").rstrip()) for m in _HEADING.finditer(text)]
    starts = [h[0] for h in headings]
    wanted = sorted({i for p in positions if (i := bisect.bisect_right(starts, p) - 1) >= 0})
    outlines = _outlines(headings, wanted, keywords)
    for index in wanted:
        start = headings[index][0]
        end = headings[index + 1][0] if index + 1 < len(headings) else len(text)
        try:
            node = _parse_node(text[start:end], header, file, outline + outlines[index],
                               keywords)
        except Exception as err:  # orgparse raises assorted errors on odd input
            title = clean_title(headings[index][2], keywords)
            scan.problems.append(ScanProblem(file, f"cannot parse: {err}", title))
            continue
        if node is not None:
            scan.nodes.append(node)
    return scan


def _outlines(
    headings: list[tuple[int, int, str]], wanted: list[int], keywords: tuple[str, ...]
) -> dict[int, tuple[str, ...]]:
    """The ancestors' titles of each wanted heading (one pass up to the last one)."""
    result: dict[int, tuple[str, ...]] = {}
    if not wanted:
        return result
    need = set(wanted)
    stack: list[tuple[int, str]] = []
    for index in range(wanted[-1] + 1):
        _, level, raw = headings[index]
        while stack and stack[-1][0] >= level:
            stack.pop()
        if index in need:
            result[index] = tuple(title for _, title in stack)
        stack.append((level, clean_title(raw, keywords)))
    return result


def _parse_node(
    region: str, header: str, file: str, outline: tuple[str, ...], keywords: tuple[str, ...]
) -> OrgNode | None:
    root = orgparse.loads(header + region)
    if not root.children:
        return None
    node = root.children[0]
    properties = {str(k).upper(): str(v).strip() for k, v in node.properties.items()}
    if not any(p in properties for p in WATCHED_PROPERTIES):
        return None  # the candidate line was body text, not the property drawer
    first_line = region.split("\n", 1)[0]
    title = clean_title(first_line.lstrip("*"), keywords)
    node_id = properties.get("ID") or derive_id(file, [*outline, title])
    return OrgNode(
        id=node_id,
        file=file,
        heading=title,
        outline=outline,
        level=node.level,
        body=node.get_body(format="raw").strip(),
        properties=properties,
        text=region.rstrip(),
    )


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
