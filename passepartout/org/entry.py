"""A whole entry as org text: headline, planning, property drawer, body.

The parts are laid out as given; the caller escapes what needs it
(:func:`passepartout.org.escape.org_escape`), because what a part may hold
differs by writer (a memory node's own body is the person's org text, a model's
note is not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from passepartout.org.drawer import drawer_lines, property_line
from passepartout.org.heading import heading_line


def entry_lines(level: int, title: str, *, keyword: str | None = None,
                tags: Sequence[str] = (), planning: str = "",
                properties: Mapping[str, str] | None = None, body: str = "",
                line: Callable[[str, str], str] = property_line) -> list[str]:
    """The lines of one entry, without line ends (and without its children)."""
    lines = [heading_line(level, title, keyword, tags)]
    if planning:
        lines += planning.split("\n")
    if properties:
        lines += drawer_lines(properties.items(), line=line)
    if body:
        lines += body.split("\n")
    return lines
