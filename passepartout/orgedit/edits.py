"""The org edits, each a pure function from a file's text to its new text, made as
org-mode's own commands make them with org's default settings (checked against
``emacs --batch`` in the tests): ``org-insert-heading-respect-content`` then demote,
``org-set-property``, ``org-todo`` (with ``org-auto-repeat-maybe`` and its state note),
``org-add-note``, ``org-refile`` and ``org-archive-subtree``.

Every text written goes through :func:`passepartout.org.escape.org_escape`: a
title, tag, property or note can never become a heading, drawer or keyword.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from passepartout.org import drawer
from passepartout.org.escape import no_drawer_word, org_escape
from passepartout.org.escape import org_line as one_line
from passepartout.org.heading import Heading
from passepartout.org.outline import (
    PLANNING,
    PROPERTY_LINE,
    TAGS,
    OrgEditError,
    Outline,
    heading_line,
)
from passepartout.org.repeaters import next_after_done
from passepartout.org.timestamps import TimestampError, parse_timestamp

PROPERTY_NAME = drawer.STRICT_NAME
TAG = re.compile(r"[\w@#%]+")
# Properties org computes or keeps elsewhere: org-set-property would not store them.
SPECIAL = frozenset({"ALLTAGS", "BLOCKED", "CLOCKSUM", "CLOCKSUM_T", "CLOSED", "DEADLINE",
                     "FILE", "ITEM", "PRIORITY", "SCHEDULED", "TAGS", "TIMESTAMP",
                     "TIMESTAMP_IA", "TODO", "PROPERTIES", "END"})
# An active timestamp with a repeater (org-repeat-re): what org-auto-repeat-maybe moves.
REPEATED = re.compile(r"<\d{4}-\d{2}-\d{2}[^>\n]*?[.+]?\+\d+[hdwmy][^>\n]*>"
                      r"(?:--<\d{4}-\d{2}-\d{2}[^>\n]*>)?")
ACTIVE_ONE = re.compile(r"<\d{4}-\d{2}-\d{2}[^>\n]*>")


@dataclass(frozen=True)
class NewHeading:
    """What :func:`add_heading` writes: the model's text, escaped when written."""

    title: str
    tags: tuple[str, ...] = ()
    properties: dict[str, str] = field(default_factory=dict)
    body: str = ""
    todo: str | None = None


def long_stamp(moment: dt.datetime, active: bool = False) -> str:
    """Org's long timestamp of a moment: ``[2026-11-23 Mon 18:00]``."""
    text = moment.strftime("%Y-%m-%d %a %H:%M")
    return f"<{text}>" if active else f"[{text}]"


def _ensure_newline(lines: list[str], index: int) -> None:
    if 0 <= index < len(lines) and not lines[index].endswith("\n"):
        lines[index] += "\n"


def check_property(key: str) -> str:
    key = key.strip()
    if not PROPERTY_NAME.fullmatch(key):
        raise OrgEditError(f"not an org property name: {key!r} (letters, digits, _ and -)")
    if key.upper() in SPECIAL:
        raise OrgEditError(f"{key} is not a property org stores in the drawer")
    return key


def check_tags(tags: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for tag in tags:
        tag = tag.strip().strip(":")
        if not TAG.fullmatch(tag):
            raise OrgEditError(f"not an org tag: {tag!r} (letters, digits, _, @, # and %)")
        if tag not in out:
            out.append(tag)
    return tuple(out)


def property_value(value: str) -> str:
    """A property value: one line, white space kept as org keeps it, and no ``:END:``
    a looser reader would end the drawer at."""
    flat = org_escape(value, "line").strip()
    if len(flat) > 400:
        raise OrgEditError("a property value is at most 400 characters")
    return no_drawer_word(flat)


def property_line(key: str, value: str) -> str:
    """A property line as org writes it (``org-property-format`` is ``%-10s %s``)."""
    return drawer.property_line(key, value, 10) + "\n"


def _drawer(properties: list[tuple[str, str]]) -> list[str]:
    """A property drawer as org writes it (values already escaped)."""
    return [line + "\n" for line in drawer.drawer_lines(
        properties, line=lambda key, value: drawer.property_line(key, value, 10))]


# -- properties ----------------------------------------------------------------------


def _put(outline: Outline, heading: Heading, key: str, value: str) -> None:
    """``org-entry-put`` on ``outline.lines`` in place (value already escaped)."""
    lines = outline.lines
    found = outline.drawer(heading)
    if found:
        start, end = found
        for j in range(start + 1, end):
            match = PROPERTY_LINE.match(lines[j])
            if match and match.group(1).upper() == key.upper() and not match.group(2):
                lines[j] = property_line(match.group(1), value)
                return
        lines.insert(end, property_line(key, value))
        return
    at = heading.line + 1
    if at < outline.entry_end(heading) and PLANNING.match(lines[at]):
        at += 1
    _ensure_newline(lines, at - 1)
    lines[at:at] = _drawer([(key, value)])


def _refresh(outline: Outline) -> Outline:
    return Outline(outline.text())


def set_property(text: str, address: str, key: str, value: str) -> str:
    """``org-set-property``: the property ``key`` of the heading at ``address``."""
    key = check_property(key)
    outline = Outline(text)
    _put(outline, outline.find(address), key, property_value(value))
    return outline.text()


# -- notes -----------------------------------------------------------------------------


def _log_beginning(outline: Outline, heading: Heading) -> int:
    """``org-log-beginning`` without a log drawer: after the planning line and the
    property drawer, past blank lines."""
    i = outline.meta_end(heading)
    while i < len(outline.lines) and not outline.lines[i].strip(" \t\n"):
        i += 1
    return i


def _store_note(outline: Outline, heading: Heading, first: str, text: str) -> None:
    """``org-store-log-note``: a list item at the start of the entry's notes."""
    lines = outline.lines
    body = [line.rstrip() for line in org_escape(text, "body").rstrip().split("\n")]
    body = [line for line in body if line] if text.strip() else []
    if body:
        first += " \\\\"
    at = _log_beginning(outline, heading)
    _ensure_newline(lines, at - 1)
    indent = ""
    if at < len(lines):
        item = re.match(r"^([ \t]*)[-+*][ \t]", lines[at])
        if item and not lines[at].startswith("*"):
            indent = item.group(1)
    note = [f"{indent}- {first}\n"] + [f"{indent}  {line}\n" for line in body]
    lines[at:at] = note


def add_note(text: str, address: str, note: str, now: dt.datetime) -> str:
    """``org-add-note``: ``- Note taken on [now] \\\\`` and the note's lines."""
    outline = Outline(text)
    heading = outline.find(address)
    _store_note(outline, heading, f"Note taken on {long_stamp(now)}", note)
    return outline.text()


# -- TODO state ------------------------------------------------------------------------


def _with_keyword(outline: Outline, heading: Heading, keyword: str | None) -> None:
    ending = "\n" if outline.lines[heading.line].endswith("\n") else ""
    line = heading_line(heading.level, keyword, heading.text, heading.tags)
    outline.lines[heading.line] = line[:-1] + ending


def set_todo(text: str, address: str, state: str | None, now: dt.datetime,
             tz: dt.tzinfo | None = None, *, legacy_catch_up: bool = False) -> str:
    """``org-todo``: the heading's TODO keyword becomes ``state`` (None or "" for none).

    A repeated task marked done comes back to the first state of its sequence (or its
    ``REPEAT_TO_STATE``) with every repeated timestamp of the entry moved by org's
    repeater rule (:func:`passepartout.org.repeaters.next_after_done`, the cron
    rule's own code), ``LAST_REPEAT`` set and a state note, as org does by default."""
    outline = Outline(text)
    heading = outline.find(address)
    state = (state or "").strip() or None
    if state is not None and state not in outline.keywords:
        known = ", ".join(w for seq in outline.sequences for w in seq)
        raise OrgEditError(f"{state!r} is not a TODO keyword of this file ({known})")
    if state == heading.keyword:
        return text
    lines = outline.lines
    start, end = heading.line + 1, outline.entry_end(heading)
    first = next((m for i in range(start, end) if (m := REPEATED.search(lines[i]))), None)
    was_done = heading.keyword in outline.done
    repeats = first is not None and re.search(r"[1-9]", _repeater(first.group(0)))
    if state in outline.done and not was_done and repeats:
        return _repeat(outline, heading, state, now, tz, legacy_catch_up)
    _with_keyword(outline, heading, state)
    if state not in outline.done and start < end and PLANNING.match(lines[start]):
        _drop_planning(outline, start, "CLOSED")
    return outline.text()


def _repeater(stamp: str) -> str:
    found = re.search(r"[.+]?\+[0-9]+[hdwmy]", stamp)
    return found.group(0) if found else ""


def _drop_planning(outline: Outline, line: int, word: str) -> None:
    text = outline.lines[line]
    new = re.sub(rf"[ \t]*{word}:[ \t]*[\[<][^\]>\n]*[\]>]", "", text)
    if new == text:
        return
    if new.strip():
        outline.lines[line] = new if new.endswith("\n") or not text.endswith("\n") else new + "\n"
    else:
        del outline.lines[line]


def _repeat(outline: Outline, heading: Heading, state: str, now: dt.datetime,
            tz: dt.tzinfo | None, legacy: bool) -> str:
    previous = heading.keyword
    to_state = outline.property(heading, "REPEAT_TO_STATE")
    if to_state not in outline.keywords:
        # org-auto-repeat-maybe: back to the previous state for a type keyword, else
        # to the head of the previous state's sequence (none without a previous state)
        sequence = next((s for s in outline.sequences if previous in s), None)
        head = sequence[0] if sequence else None
        to_state = previous if previous in outline.types else head
    _with_keyword(outline, heading, to_state)
    outline = _refresh(outline)
    heading = outline.heading_at(heading.line)
    _put(outline, heading, "LAST_REPEAT", long_stamp(now))
    outline = _refresh(outline)
    heading = outline.heading_at(heading.line)
    lines = outline.lines
    planning = heading.line + 1
    if PLANNING.match(lines[planning]):
        scheduled = re.search(r"SCHEDULED:[ \t]*(<[^>\n]*>)", lines[planning])
        if scheduled and not REPEATED.fullmatch(scheduled.group(1)):
            _drop_planning(outline, planning, "SCHEDULED")
            outline = _refresh(outline)
            heading = outline.heading_at(heading.line)
            lines = outline.lines
    for i in range(heading.line + 1, outline.entry_end(heading)):
        lines[i] = REPEATED.sub(lambda m: _moved(m.group(0), now, tz, legacy), lines[i])
    quoted_prev = f'"{previous or ""}"'
    _store_note(outline, heading,
                f'State {chr(34) + state + chr(34):<12} from {quoted_prev:<12} {long_stamp(now)}',
                "")
    return outline.text()


def _moved(stamp: str, now: dt.datetime, tz: dt.tzinfo | None, legacy: bool) -> str:
    try:
        parsed = parse_timestamp(stamp)
    except TimestampError:
        return stamp
    if not parsed.repeats:
        return stamp
    try:
        return next_after_done(parsed, now, tz, legacy_catch_up=legacy).format()
    except TimestampError as err:
        raise OrgEditError(str(err)) from None


# -- headings --------------------------------------------------------------------------


def _new_lines(level: int, new: NewHeading, keywords: set[str]) -> list[str]:
    title = one_line(new.title, 400)
    if not title:
        raise OrgEditError("a heading needs a title")
    todo = (new.todo or "").strip() or None
    if todo is not None and todo not in keywords:
        raise OrgEditError(f"{todo!r} is not a TODO keyword of this file")
    if title.split(" ", 1)[0] in keywords:
        title = "," + title  # org would read the first word as a TODO keyword
    if TAGS.search(" " + title):
        raise OrgEditError(f"the title {title!r} ends like org tags: give them as tags")
    lines = [heading_line(level, todo, title, check_tags(new.tags))]
    if new.properties:
        lines += _drawer([(check_property(key), property_value(value))
                          for key, value in new.properties.items()])
    if new.body.strip():
        lines += [line + "\n" for line in org_escape(new.body.strip("\n"), "body").split("\n")]
    return lines


def _blank_before(outline: Outline, heading: Heading) -> bool:
    """``org--blank-before-heading-p`` with org's ``auto`` setting: whether the heading
    has a blank line before it (at the top of the buffer: the next heading, or the
    buffer's end)."""
    lines = outline.lines
    if heading.line > 0:
        return not lines[heading.line - 1].strip()
    after = [h for h in outline.headings if h.line > heading.line]
    if after:
        return not lines[after[0].line - 1].strip()
    text = outline.text().rstrip(" \t")
    return text.endswith("\n\n") or (not text.endswith("\n") and len(lines) > 1
                                       and not lines[-2].strip())


def add_heading(text: str, parent: str | None, new: NewHeading, level: int | None = None,
                *, capture: bool = False) -> str:
    """A new heading at the end of ``parent``'s subtree (one level below it, or
    ``level``), or at the end of the file (level 1, or ``level``), as
    ``org-insert-heading-respect-content`` places it (with ``capture``, as
    ``org-capture`` places an entry at the end of its file: no blank line before)."""
    outline = Outline(text)
    lines = outline.lines
    if parent is None:
        # org-insert-heading at the end of the buffer: the blank lines before the new
        # heading become one if the last heading has a blank line before it, else none
        # (org-capture: none)
        depth = level or 1
        anchor = outline.headings[-1] if outline.headings else None
        blank = not capture and anchor is not None and _blank_before(outline, anchor)
        at = len(lines)
        while at > 0 and not lines[at - 1].strip():
            at -= 1
        del lines[at:]
    else:
        # org-insert-heading-respect-content: after the subtree's last non-blank line
        anchor = outline.find(parent)
        depth = level or anchor.level + 1
        if depth <= anchor.level:
            raise OrgEditError(f"a heading under a level-{anchor.level} heading needs a "
                               "deeper level")
        blank = _blank_before(outline, anchor)
        at = outline.subtree_end(anchor)
        while at > anchor.line + 1 and not lines[at - 1].strip():
            at -= 1
    if depth < 1 or depth > 30:
        raise OrgEditError(f"an org heading level is 1 to 30, not {depth}")
    _ensure_newline(lines, at - 1)
    block = _new_lines(depth, new, outline.keywords)
    if blank:
        block.insert(0, "\n")
    lines[at:at] = block
    return outline.text()


# -- moving subtrees ---------------------------------------------------------------------


@dataclass(frozen=True)
class Cut:
    """A subtree taken out of its file: its lines, with trailing blank lines."""

    lines: list[str]
    level: int


def cut_subtree(outline: Outline, heading: Heading) -> tuple[list[str], Cut]:
    start, end = heading.line, outline.subtree_end(heading)
    rest = outline.lines[:start] + outline.lines[end:]
    return rest, Cut(outline.lines[start:end], heading.level)


def shifted(cut: Cut, level: int) -> list[str]:
    """The subtree's lines with every heading moved so that its top is at ``level``
    (``org-demote``/``org-promote`` realign the tags of each heading they touch)."""
    shift = level - cut.level
    lines = list(cut.lines)
    if shift == 0:
        return lines
    text = "".join(lines)
    sub = Outline(text)
    for heading in sub.headings:
        ending = "\n" if sub.lines[heading.line].endswith("\n") else ""
        line = heading_line(max(1, heading.level + shift), heading.keyword, heading.text,
                            heading.tags)
        sub.lines[heading.line] = line[:-1] + ending
    return sub.lines


def paste(lines: list[str], at: int, cut: Cut, level: int) -> list[str]:
    """``org-paste-subtree`` at line ``at`` (a heading's line or the end)."""
    lines = list(lines)
    _ensure_newline(lines, at - 1)
    block = shifted(cut, level)
    _ensure_newline(block, len(block) - 1)
    return lines[:at] + block + lines[at:]


def refile(text: str, address: str, target: str | None, target_text: str | None = None
           ) -> tuple[str, str | None]:
    """``org-refile``: the subtree at ``address`` moves to the end of ``target``'s
    subtree, one level below it (``target`` None: to the end of the file, level 1).
    With ``target_text`` the target is in that other file: both new texts return."""
    outline = Outline(text)
    heading = outline.find(address)
    if target_text is None:
        goal_outline = outline
        goal = outline.find(target) if target is not None else None
        if goal is not None and heading.line <= goal.line < outline.subtree_end(heading):
            raise OrgEditError("cannot refile a subtree under itself")
        start, end = heading.line, outline.subtree_end(heading)
        at = goal_outline.subtree_end(goal) if goal else len(outline.lines)
        level = goal.level + 1 if goal else 1
        cut = Cut(outline.lines[start:end], heading.level)
        pasted = paste(outline.lines, at, cut, level)
        # the original lines lie before or after the pasted block
        if at <= start:
            size = len(pasted) - len(outline.lines)
            del pasted[start + size:end + size]
        else:
            del pasted[start:end]
        return "".join(pasted), None
    rest, cut = cut_subtree(outline, heading)
    other = Outline(target_text)
    goal = other.find(target) if target is not None else None
    at = other.subtree_end(goal) if goal else len(other.lines)
    level = goal.level + 1 if goal else 1
    return "".join(rest), "".join(paste(other.lines, at, cut, level))


def archive(text: str, address: str, file_name: str, archive_text: str | None,
            now: dt.datetime) -> tuple[str, str]:
    """``org-archive-subtree`` with org's default location ``%s_archive::``: the
    subtree goes to the end of the archive file at level 1 with its context in
    ``ARCHIVE_*`` properties; a new archive file starts with org's header.
    ``file_name`` is the file as org names it (``abbreviate-file-name``)."""
    outline = Outline(text)
    heading = outline.find(address)
    parents = outline.olpath(heading)
    inherited = inherited_tags(outline, heading)
    context = {
        "ARCHIVE_TIME": now.strftime("%Y-%m-%d %a %H:%M"),
        "ARCHIVE_FILE": file_name,
        "ARCHIVE_OLPATH": "/".join(h.title for h in parents),
        "ARCHIVE_CATEGORY": category(outline, heading, file_name),
        "ARCHIVE_TODO": heading.keyword or "",
        "ARCHIVE_ITAGS": " ".join(inherited),
    }
    rest, cut = cut_subtree(outline, heading)
    if archive_text is None:
        archive_text = ("#    -*- mode: org -*-\n\n\n"
                        f"Archived entries from file {file_name}\n\n")
    target = archive_text.splitlines(keepends=True)
    _ensure_newline(target, len(target) - 1)
    target.append("\n")
    at = len(target)
    pasted = Outline("".join(paste(target, at, cut, 1)))
    top = pasted.heading_at(at)
    for key, value in context.items():
        if value.strip():
            _put(pasted, top, key, property_value(value))
            pasted = _refresh(pasted)
            top = pasted.heading_at(at)
    return "".join(rest), pasted.text()


def inherited_tags(outline: Outline, heading: Heading) -> list[str]:
    """``org-get-tags``'s inherited tags: file tags, then each ancestor's, outermost
    first, a tag kept at its last place (a local tag is not inherited)."""
    filetags = re.findall(r"^#\+FILETAGS:[ \t]*(.*)$", outline.text(), re.MULTILINE | re.I)
    tags = [t for line in filetags for t in line.split(":") if t.strip()]
    for parent in outline.olpath(heading):
        tags += parent.tags
    every = tags + list(heading.tags)
    last = {tag: i for i, tag in enumerate(every)}
    return [tag for i, tag in enumerate(tags) if last[tag] == i]


def category(outline: Outline, heading: Heading, file_name: str) -> str:
    """``org-get-category``: the nearest CATEGORY property, the file's #+CATEGORY, or
    the file's name without its extension."""
    for node in [heading, *reversed(outline.olpath(heading))]:
        value = outline.property(node, "CATEGORY")
        if value:
            return value
    found = re.findall(r"^#\+CATEGORY:[ \t]*(.*?)[ \t]*$", outline.text(), re.MULTILINE | re.I)
    if found:
        return found[-1]
    name = file_name.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name
