"""A fast reading of an org file's outline that gives exactly what orgparse gives.

orgparse builds date objects for every line of every heading (the
timestamp, clock, SCHEDULED and repeated-task parsers run on each line), which
is most of an import's time. The importer only needs each heading's raw lines,
its TODO keyword and its body as orgparse's ``get_body(format="raw")`` returns
it, so this module finds those directly and hands orgparse's own functions
only the lines they could act on (a clock line holds ``CLOCK:``, a timestamp a
``dddd-dd-dd`` date, and so on). Those calls keep orgparse's answers and its
errors: a date orgparse cannot read still fails the file. tests/test_memory_
orgscan.py compares this module with orgparse on generated and tricky files.

The result is the package's one :class:`~passepartout.org.outline.Outline` (made by
:meth:`~passepartout.org.outline.Outline.tree`), whose headings keep their raw lines
and their body as orgparse's ``get_body(format="raw")`` gives it.
"""

from __future__ import annotations

import re

from orgparse.date import OrgDate, OrgDateClock, parse_sdc
from orgparse.node import (
    OrgEnv,
    OrgNode,
    parse_comment,
    parse_heading_level,
    parse_heading_priority,
    parse_heading_tags,
    parse_heading_todos,
    parse_property,
    parse_seq_todo,
)

from passepartout.org.heading import Heading
from passepartout.org.outline import Outline

_HEADER = re.compile(r"^\*+ ")
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
_DASHES = re.compile(r"-\d\d-")  # in every date; its literal start makes a miss fast
_REPEATED = OrgNode._repeated_tasks_re
_TODO_KEYS = ("TODO", "SEQ_TODO", "TYP_TODO")


def scan(text: str) -> Outline:
    """Read ``text`` as ``orgparse.loads(text)`` does (same bodies, TODOs, tree)."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line[:1] == "*" and _HEADER.match(line)]
    bounds = [0, *starts, len(lines)]
    chunks = [lines[bounds[k] : bounds[k + 1]] for k in range(len(bounds) - 1)]
    env = OrgEnv()
    for chunk in chunks:  # TODO keywords from any chunk apply to the whole file
        _todo_keywords(chunk, env)
    root_lines = chunks[0]
    root_body = _timestamps(_drop_properties(root_lines))
    top: list[Heading] = []
    headings: list[Heading] = []
    keys = env.all_todo_keys
    # A heading's parent is the nearest earlier heading of a lower level, as in orgparse.
    stack: list[Heading] = []
    for start, chunk in zip(starts, chunks[1:], strict=True):
        heading = _heading(start, chunk, keys)
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        (stack[-1].children if stack else top).append(heading)
        stack.append(heading)
        headings.append(heading)
    return Outline.tree(text, "\n".join(root_body) if root_lines else "", top, headings)


def _todo_keywords(chunk: list[str], env: OrgEnv) -> None:
    special: dict[str, list[str]] = {}
    for line in chunk:
        if "#+" in line:
            parsed = parse_comment(line)
            if parsed:
                special.setdefault(parsed[0].upper(), []).extend(parsed[1])
    for key in _TODO_KEYS:
        for val in special.get(key, []):
            env.add_todo_keys(*parse_seq_todo(val))


def _heading(start: int, chunk: list[str], todo_keys: list[str]) -> Heading:
    first = chunk[0]
    parsed = parse_heading_level(first)
    text, level = parsed if parsed is not None else (first, 0)
    tags: tuple[str, ...] = ()
    if text.endswith(":"):  # orgparse's tag pattern ends the heading with a colon
        text, found = parse_heading_tags(text)
        tags = tuple(found)
    text, todo = parse_heading_todos(text, todo_keys)
    headline = title = text
    if "[#" in text:  # and its priority cookie starts with "[#"
        title, _priority = parse_heading_priority(text)
    body = chunk[1:]
    whole = "\n".join(body)  # one substring test per marker, then only the lines holding it
    if body and _has_sdc(body[0]) and any(parse_sdc(body[0])):
        body = body[1:]
    if "CLOCK:" in whole:
        body = [line for line in body if "CLOCK:" not in line or not OrgDateClock.from_str(line)]
    if ":PROPERTIES:" in whole:
        body = _drop_properties(body)
    if "State" in whole:
        body = [line for line in body if not _repeated_task(line)]
    if _has_date(title):
        OrgDate.list_from_str(title)
    if len(body) != len(chunk) - 1:
        whole = "\n".join(body)
    if _has_date(whole):
        _timestamps(body)
    return Heading(start, level, todo, title, tags, headline, lines=chunk, body=whole)


def _has_date(text: str) -> bool:
    return _DASHES.search(text) is not None and _DATE.search(text) is not None


def _has_sdc(line: str) -> bool:
    return "SCHEDULED:" in line or "DEADLINE:" in line or "CLOSED:" in line


def _drop_properties(lines: list[str]) -> list[str]:
    """Without the first property drawer (orgparse finds its markers anywhere in a line).

    orgparse's reading, not org's (passepartout.org): the fast import must give the
    nodes orgparse's tree gives (tests/test_memory_import_same.py), with one substring
    test per marker (bench/memex.py)."""
    i = next((k for k, line in enumerate(lines) if ":PROPERTIES:" in line), -1)
    if i < 0:
        return lines
    j = i + 1
    while j < len(lines) and ":END:" not in lines[j]:
        parse_property(lines[j])  # an Effort orgparse cannot read fails the file, as there
        j += 1
    return lines[:i] + lines[j + 1 :]


def _repeated_task(line: str) -> bool:
    if "State" not in line:
        return False
    match = _REPEATED.search(line)
    if match is None:
        return False
    OrgDate.from_str(match.group("date"))
    return True


def _timestamps(lines: list[str]) -> list[str]:
    """``lines`` unchanged; reading their dates raises where orgparse's would."""
    for line in lines:
        if _has_date(line):
            OrgDate.list_from_str(line)
    return lines
