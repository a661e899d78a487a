"""A heading line: reading its parts as org does, and writing one."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

HEADING = re.compile(r"^(\*+)(?:[ \t]+(.*?))?[ \t]*\n?$")
TAGS = re.compile(r"[ \t]+(:(?:[\w@#%]+:)+)[ \t]*$")
PRIORITY = re.compile(r"\[#.\][ \t]*")
PLANNING = re.compile(r"^[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):")
TAGS_COLUMN = 77  # org-tags-column is -77: tags end at column 77
DEFAULT_KEYWORDS = frozenset({"TODO", "DONE"})


@dataclass(frozen=True)
class Heading:
    """One heading: where it is (in an :class:`~passepartout.org.outline.Outline`), its
    headline's parts, its subheadings."""

    line: int  # index into Outline.lines
    level: int
    keyword: str | None
    title: str  # without keyword, priority and tags
    tags: tuple[str, ...]
    text: str = ""  # the headline between keyword and tags, priority included
    # The subheadings, each under its nearest earlier heading of a lower level.
    children: list[Heading] = field(default_factory=list, compare=False, repr=False)
    # Kept by a reading that keeps them (memory's): the entry's raw lines (headline
    # first, up to the next heading) and its body, as that reading reads them.
    lines: list[str] = field(default_factory=list, compare=False, repr=False)
    body: str = field(default="", compare=False, repr=False)


def read_heading(line: str, keywords: Collection[str] = DEFAULT_KEYWORDS,
                 at: int = 0) -> Heading | None:
    """``line`` as org reads a headline (None when it is not one): stars and a space
    (or stars alone), then an optional keyword of ``keywords``, priority, title, tags;
    ``at`` is the line's index in its text."""
    match = HEADING.match(line)
    if not match or not line.startswith("*"):
        return None
    rest = match.group(2) or ""
    if match.group(2) is None and line.rstrip("\n") != match.group(1):
        return None
    tags: tuple[str, ...] = ()
    found = TAGS.search(" " + rest)
    if found:
        tags = tuple(t for t in found.group(1).split(":") if t)
        rest = (" " + rest)[: found.start()].strip()
    keyword = None
    first = rest.split(" ", 1)
    if first[0] in keywords:
        keyword = first[0]
        rest = first[1] if len(first) > 1 else ""
    title = PRIORITY.sub("", rest, count=1) if rest.startswith("[#") else rest
    return Heading(at, len(match.group(1)), keyword, title.strip(), tags, rest.strip())


def string_width(text: str) -> int:
    """Columns ``text`` takes, as Emacs's ``string-width`` counts (wide CJK is two)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def heading_line(level: int, title: str, keyword: str | None = None,
                 tags: Sequence[str] = (), *, align: bool = False) -> str:
    """A headline without its line end; the parts are written as given (escape them
    first).  ``align``: as org's own commands write one (no space after the stars of
    an empty headline, tags ending at column 77 as ``org-align-tags`` puts them);
    else the stars and a space always, and one space before the tags."""
    stars = "*" * max(level, 1)
    if not align:
        head = stars + " " + " ".join(p for p in (keyword, title) if p)
        return head + (" :" + ":".join(tags) + ":" if tags else "")
    head = stars + (" " + keyword if keyword else "") + (" " + title if title else "")
    if not tags:
        return head
    tagtext = ":" + ":".join(tags) + ":"
    column = max(string_width(head) + 1, TAGS_COLUMN - string_width(tagtext))
    return head + " " * (column - string_width(head)) + tagtext
