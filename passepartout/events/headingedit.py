"""Edits of one hooked heading's text, for the shipped hook handlers: a note at the
end of its body, a property in its drawer, a child heading after its body.

Each function takes the whole file's text and returns the new text; the heading is
found as the events scan reads it (its ``:ID:``, or the id derived from its outline),
so the same node the hook fired for is the one edited.  What is written comes from a
model or a handler: it goes through :mod:`passepartout.org.escape`, so nothing
in it becomes a heading, a drawer or a property line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from passepartout.events.jobs import OrgNode
from passepartout.events.scan import scan_text
from passepartout.org.escape import body, property_value
from passepartout.org.escape import org_line as one_line

_HEADING = re.compile(r"^(\*+)[ \t]", re.MULTILINE)
_END = re.compile(r"^[ \t]*:END:[ \t]*$", re.MULTILINE | re.IGNORECASE)

REPLY_MARK = "- Reply of the agent"  # the first words of a note this module writes


class HeadingNotFound(ValueError):
    """The heading is not in the file (any more)."""


@dataclass(frozen=True)
class Located:
    """Where a heading lies in its file's text."""

    node: OrgNode
    start: int  # its heading line
    body_end: int  # the end of its own text: its first child, or the next heading
    subtree_end: int  # the end of its subtree


def locate(text: str, file: str, node_id: str) -> Located:
    """The heading ``node_id`` of the file ``file`` whose text is ``text``."""
    node = next((n for n in scan_text(text, file).nodes if n.id == node_id), None)
    if node is None:
        raise HeadingNotFound(f"no heading with id {node_id} in {file}")
    starts = [(m.start(), len(m[1])) for m in _HEADING.finditer(text)]
    for index, (start, level) in enumerate(starts):
        if level != node.level or not text.startswith(node.text, start):
            continue
        after = starts[index + 1:]
        body_end = after[0][0] if after else len(text)
        subtree_end = next((s for s, lvl in after if lvl <= level), len(text))
        return Located(node, start, body_end, subtree_end)
    raise HeadingNotFound(f"the heading {node.heading!r} moved while it was read")


def subtree(text: str, place: Located) -> str:
    """The heading's subtree, as it is in the file."""
    return text[place.start:place.subtree_end]


def add_note(text: str, place: Located, note: str, stamp: str) -> str:
    """A note at the end of the heading's body (before its children), org style."""
    lines = body(note.strip() or "(empty)", indent="  ")
    entry = f"{REPLY_MARK} {stamp} \\\\\n{lines}\n"
    return _insert(text, place.body_end, entry)


def set_property(text: str, place: Located, key: str, value: str) -> str:
    """``:KEY: value`` in the heading's property drawer (replacing one there)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", key):
        raise ValueError(f"not an org property name: {key!r}")
    own = text[place.start:place.body_end]
    end = _END.search(own)
    if end is None:
        raise HeadingNotFound(f"the heading {place.node.heading!r} has no property drawer")
    drawer = own[:end.start()]
    line = f":{key}: {property_value(value)}"
    existing = re.compile(rf"^([ \t]*):{re.escape(key)}:.*$", re.MULTILINE | re.IGNORECASE)
    if existing.search(drawer):
        drawer = existing.sub(lambda m: m[1] + line, drawer, count=1)
    else:
        indent = re.match(r"[ \t]*", own[end.start():])
        drawer += (indent[0] if indent else "") + line + "\n"
    new_own = drawer + own[end.start():]
    return text[:place.start] + new_own + text[place.body_end:]


def set_child(text: str, place: Located, title: str, content: str) -> str:
    """A child heading ``title`` holding ``content``, first under the heading; a child
    of that title there already is replaced."""
    level = place.node.level + 1
    heading = f"{'*' * level} {one_line(title, 200)}\n"
    entry = heading + body(content.strip() or "(empty)") + "\n"
    first = text[place.body_end:place.subtree_end]
    match = _HEADING.match(first)
    if match and len(match[1]) == level and first.startswith(heading):
        following = _HEADING.search(first, len(heading))
        end = place.body_end + (following.start() if following else len(first))
        return text[:place.body_end] + entry + text[end:]
    return _insert(text, place.body_end, entry)


def without_replies(text: str) -> str:
    """A heading's body without the notes :func:`add_note` wrote into it."""
    kept: list[str] = []
    skipping = False
    for line in text.split("\n"):
        if line.startswith(REPLY_MARK):
            skipping = True
            continue
        if skipping and (line.startswith("  ") or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    return "\n".join(kept).strip()


def _insert(text: str, at: int, entry: str) -> str:
    before = text[:at]
    if before and not before.endswith("\n"):
        before += "\n"
    return before + entry + text[at:]
