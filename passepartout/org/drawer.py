"""Drawers: finding and reading one at a position, and writing a property drawer.

Two readings of a property line: :data:`PROPERTY_LINE` is org's own (``org-entry-put``
compares with it, a ``+`` after the name marks an appended value), :data:`PROPERTY`
is the one a reader of the person's files uses (the name as written, ``+`` and all).
:data:`STRICT_PROPERTY` is the security parsers' (approvals, grants): a name of
letters, digits, ``_`` and ``-`` only, as their writers write it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# A property name as a reader takes it, and as the agent's own files write it.
NAME = re.compile(r"[^\s:]+")
STRICT_NAME = re.compile(r"[A-Za-z0-9_-]+")
DRAWER_END = re.compile(r"^[ \t]*:END:[ \t]*\n?$", re.IGNORECASE)
PROPERTIES = re.compile(r"^[ \t]*:PROPERTIES:[ \t]*\n?$", re.IGNORECASE)
PROPERTY_LINE = re.compile(r"^[ \t]*:([^\s:]+?)(\+)?:(?:[ \t]+(.*?))?[ \t]*\n?$")
PROPERTY = re.compile(r"^\s*:([^:\s]+):(?:\s+(.*?))?\s*$")
STRICT_PROPERTY = re.compile(r"^\s*:([A-Za-z0-9_-]+):\s*(.*?)\s*$")
_LOOSE_PLANNING = re.compile(r"^\s*(SCHEDULED|DEADLINE|CLOSED):")
_NAMED = re.compile(r"^[ \t]*:([\w-]+):[ \t]*\n?$")


@dataclass
class Drawer:
    """A drawer found in a list of lines: its opening and ``:END:`` line indexes."""

    name: str
    start: int
    end: int
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def after(self) -> int:
        """The index of the line after ``:END:``."""
        return self.end + 1


def property_drawer(lines: list[str], at: int, end: int | None = None) -> Drawer | None:
    """The property drawer opening at line ``at``, as org reads one: every line up to
    ``:END:`` is a property line, else there is no drawer (None).  Names are kept as
    written (``KEY+`` too)."""
    end = len(lines) if end is None else end
    if at >= end or not PROPERTIES.match(lines[at]):
        return None
    props: dict[str, str] = {}
    for j in range(at + 1, end):
        if DRAWER_END.match(lines[j]):
            return Drawer("PROPERTIES", at, j, props)
        match = PROPERTY_LINE.match(lines[j])
        if match is None:
            return None
        props[match.group(1) + (match.group(2) or "")] = match.group(3) or ""
    return None


def named_drawer(lines: list[str], name: str, at: int, end: int | None = None) -> Drawer | None:
    """The first drawer called ``name`` (``:LOGBOOK:`` ...) from line ``at`` to ``end``,
    its lines left unread (a drawer's body is free text)."""
    end = len(lines) if end is None else end
    for i in range(at, end):
        match = _NAMED.match(lines[i])
        if match and match.group(1).upper() == name.upper():
            for j in range(i + 1, end):
                if DRAWER_END.match(lines[j]):
                    return Drawer(match.group(1), i, j)
            return None
    return None


def entry_properties(lines: list[str]) -> tuple[str, dict[str, str], int]:
    """A reader's take on the lines right after a headline (any white space, a line
    end ``\\r`` included, around the words): its planning line(s), the properties of
    its drawer (read up to ``:END:``, other lines passed over), and the index of the
    first line after them."""
    i, planning = 0, []
    while i < len(lines) and _LOOSE_PLANNING.match(lines[i]):
        planning.append(lines[i].strip())
        i += 1
    props: dict[str, str] = {}
    if i < len(lines) and lines[i].strip().upper() == ":PROPERTIES:":
        j = i + 1
        while j < len(lines) and lines[j].strip().upper() != ":END:":
            if (match := PROPERTY.match(lines[j])) is not None:
                props[match.group(1)] = match.group(2) or ""
            j += 1
        i = j + 1
    return "\n".join(planning), props, i


def property_line(key: str, value: str, width: int = 0) -> str:
    """One property line, without its line end, the value as given (escape it first);
    ``width`` pads ``:KEY:`` as ``org-property-format`` (``%-10s %s``) does."""
    return f"{':' + key + ':':<{width}} {value}".rstrip()


def drawer_lines(properties: Iterable[tuple[str, str]], indent: str = "",
                 line: Callable[[str, str], str] = property_line) -> list[str]:
    """A property drawer's lines, without line ends; values as given (escape them first)."""
    return [f"{indent}:PROPERTIES:",
            *(indent + line(key, value) for key, value in properties),
            f"{indent}:END:"]
