"""An org text's headings, found as org finds them, and the parts of an entry.

A line starting with stars and a space is a heading wherever it is (org reads it so
even inside a block).  Lines keep their line ends so that the text is rebuilt exactly.

:class:`Outline` and :class:`Heading` are the one outline and the one heading of the
package: ``Outline(text)`` is org's own reading (what the org edits act on);
:meth:`Outline.tree` holds a reading made elsewhere, the memory import's
(:func:`passepartout.memory.orgscan.scan`, orgparse's reading, which also keeps each
entry's raw lines and body).  Either way the headings are in ``headings`` (in file
order) and in a tree (``top``, each heading's ``children``).
"""

from __future__ import annotations

import functools
import re

# The grammar lives in passepartout.org; the names stay importable from here.
from passepartout.org.drawer import DRAWER_END, PROPERTIES, PROPERTY_LINE, property_drawer
from passepartout.org.heading import (
    HEADING,
    PLANNING,
    PRIORITY,
    TAGS,
    TAGS_COLUMN,
    Heading,
    read_heading,
    string_width,
)
from passepartout.org.heading import heading_line as _heading_line

__all__ = ["DRAWER_END", "HEADING", "PLANNING", "PRIORITY", "PROPERTIES", "PROPERTY_LINE",
           "TAGS", "TAGS_COLUMN", "OrgEditError", "Outline", "heading_line",
           "string_width", "todo_keywords"]

TODO_LINE = re.compile(r"^#\+(?:SEQ_|TYP_)?TODO:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)


class OrgEditError(ValueError):
    """An edit that cannot be made (no such heading, a bad argument): a clear message."""


def todo_keywords(text: str) -> tuple[list[list[str]], set[str], set[str]]:
    """The file's TODO sequences (each a list of keywords), its done keywords and its
    type keywords (``#+TYP_TODO``)."""
    sequences: list[list[str]] = []
    done: set[str] = set()
    types: set[str] = set()
    for match in TODO_LINE.finditer(text):
        words = [w.split("(")[0] for w in match.group(1).split()]
        if "|" in words:
            bar = words.index("|")
            todo, finished = words[:bar], words[bar + 1:]
        else:
            todo, finished = words[:-1], words[-1:]
        if todo or finished:
            sequences.append(todo + finished)
            done.update(finished)
            if match.group(0)[2:5].upper() == "TYP":
                types.update(todo + finished)
    if not sequences:
        return [["TODO", "DONE"]], {"DONE"}, set()
    return sequences, done, types


class Outline:
    """The headings of one org text, and where each entry and subtree lies."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._org_lines = True
        self.headings = [h for i, line in enumerate(self.lines) if (h := self._heading(i, line))]
        first = self.headings[0].line if self.headings else len(self.lines)
        self.body = "".join(self.lines[:first])  # the text before the first heading
        self.top = _tree(self.headings)

    @classmethod
    def tree(cls, text: str, body: str, top: list[Heading],
             headings: list[Heading] | None = None) -> Outline:
        """The outline of ``text`` as another reading found it: its body before the first
        heading, its top-level headings (each with its ``children``, and ``line`` an index
        into ``text.splitlines()``), and all of them in file order when the reading has
        that list at hand."""
        outline = cls.__new__(cls)
        outline._text = text
        outline._org_lines = False
        outline.body = body
        outline.top = top
        if headings is None:
            headings = []
            stack = top[::-1]
            while stack:
                heading = stack.pop()
                headings.append(heading)
                stack += heading.children[::-1]
        outline.headings = headings
        return outline

    # Computed when first used: the memory import reads none of them.

    @functools.cached_property
    def lines(self) -> list[str]:
        """The text's lines with their ends.  Org splits at ``\n`` only (any other break
        stays inside its line); a tree reading's line numbers count every break, as
        ``str.splitlines`` does."""
        lines = self._text.splitlines(keepends=True)
        return _join_at_newlines(lines) if self._org_lines else lines

    @functools.cached_property
    def _todo(self) -> tuple[list[list[str]], set[str], set[str]]:
        return todo_keywords(self._text)

    @property
    def sequences(self) -> list[list[str]]:
        """The file's TODO sequences."""
        return self._todo[0]

    @property
    def done(self) -> set[str]:
        """Its done keywords."""
        return self._todo[1]

    @property
    def types(self) -> set[str]:
        """Its type keywords (``#+TYP_TODO``)."""
        return self._todo[2]

    @functools.cached_property
    def keywords(self) -> set[str]:
        """Every TODO keyword of the file."""
        return {w for seq in self.sequences for w in seq}

    def text(self) -> str:
        return "".join(self.lines)

    def _heading(self, i: int, line: str) -> Heading | None:
        return read_heading(line, self.keywords, i)

    # -- addressing -------------------------------------------------------------------

    def heading_at(self, line: int) -> Heading:
        for heading in self.headings:
            if heading.line == line:
                return heading
        raise OrgEditError(f"line {line + 1} is not a heading")

    def find(self, address: str) -> Heading:
        """The heading with ``:ID:`` ``address`` (``id:X`` or ``X``), or at the outline
        path ``A/B/C`` (titles without TODO keyword, priority or tags)."""
        address = address.strip()
        if not address:
            raise OrgEditError("no heading named: give an :ID: or an outline path")
        ident = address[3:] if address.startswith("id:") else address
        by_id = [h for h in self.headings if self.property(h, "ID") == ident]
        if len(by_id) == 1:
            return by_id[0]
        if len(by_id) > 1:
            raise OrgEditError(f"the ID {ident!r} is on {len(by_id)} headings")
        return self.find_path([p.strip() for p in address.strip("/").split("/")])

    def find_path(self, path: list[str]) -> Heading:
        parent: Heading | None = None
        for part in path:
            children = [h for h in self.children(parent) if h.title == part]
            if not children:
                where = "/".join(path[: path.index(part) + 1])
                raise OrgEditError(f"no heading at {where!r}")
            if len(children) > 1:
                raise OrgEditError(f"{len(children)} headings are at {'/'.join(path)!r}")
            parent = children[0]
        if parent is None:
            raise OrgEditError("an empty outline path")
        return parent

    def children(self, parent: Heading | None) -> list[Heading]:
        start, end = (0, len(self.lines)) if parent is None else (parent.line + 1,
                                                                  self.subtree_end(parent))
        inside = [h for h in self.headings if start <= h.line < end]
        if not inside:
            return []
        top = min(h.level for h in inside)
        return [h for h in inside if h.level == top]

    def olpath(self, heading: Heading) -> list[Heading]:
        """The ancestors of ``heading``, outermost first."""
        chain: list[Heading] = []
        level = heading.level
        for other in reversed([h for h in self.headings if h.line < heading.line]):
            if other.level < level:
                chain.append(other)
                level = other.level
        return chain[::-1]

    # -- the parts of an entry --------------------------------------------------------

    def subtree_end(self, heading: Heading) -> int:
        """The line after the subtree (the next heading of its level or higher)."""
        for other in self.headings:
            if other.line > heading.line and other.level <= heading.level:
                return other.line
        return len(self.lines)

    def entry_end(self, heading: Heading) -> int:
        for other in self.headings:
            if other.line > heading.line:
                return other.line
        return len(self.lines)

    def drawer(self, heading: Heading) -> tuple[int, int] | None:
        """The property drawer's :PROPERTIES: and :END: lines, where org looks for it."""
        i = heading.line + 1
        end = self.entry_end(heading)
        if i < end and PLANNING.match(self.lines[i]):
            i += 1
        found = property_drawer(self.lines, i, end)
        return (found.start, found.end) if found else None

    def meta_end(self, heading: Heading) -> int:
        """``org-end-of-meta-data``: the line after the planning line and drawer."""
        found = self.drawer(heading)
        if found:
            return found[1] + 1
        i = heading.line + 1
        if i < self.entry_end(heading) and PLANNING.match(self.lines[i]):
            i += 1
        return i

    def property(self, heading: Heading, key: str) -> str | None:
        found = self.drawer(heading)
        if not found:
            return None
        for j in range(found[0] + 1, found[1]):
            match = PROPERTY_LINE.match(self.lines[j])
            if match and match.group(1).upper() == key.upper() and not match.group(2):
                return match.group(3) or ""
        return None

    def inherited_tags(self, heading: Heading) -> list[str]:
        tags: list[str] = []
        for other in self.olpath(heading):
            tags += [t for t in other.tags if t not in tags]
        return tags


def _tree(headings: list[Heading]) -> list[Heading]:
    """The top-level headings, each heading put under the nearest earlier heading of a
    lower level (as :meth:`Outline.olpath` finds its ancestors)."""
    top: list[Heading] = []
    stack: list[Heading] = []
    for heading in headings:
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        (stack[-1].children if stack else top).append(heading)
        stack.append(heading)
    return top


def _join_at_newlines(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if out and not out[-1].endswith("\n"):
            out[-1] += line
        else:
            out.append(line)
    return out


def heading_line(level: int, keyword: str | None, text: str,
                 tags: tuple[str, ...] | list[str]) -> str:
    """A headline as org writes it, tags aligned as ``org-align-tags`` aligns them."""
    return _heading_line(level, text, keyword, tags, align=True) + "\n"
