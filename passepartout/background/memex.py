"""The memex as the background skills read it: its org files, each read once per run,
with which of its lines are private."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from passepartout.org.heading import Heading
from passepartout.org.outline import Outline
from passepartout.org.private import read_private

log = logging.getLogger(__name__)

MAX_BYTES = 4 * 1024 * 1024  # a bigger org file is skipped (and said so)
SKIPPED_DIRS = ("system",)  # the agent's own files: approvals, background jobs


@dataclass
class OrgText:
    """One org file: its text, outline and private lines."""

    path: Path
    text: str
    outline: Outline
    private: list[bool] = field(default_factory=list)

    @property
    def archive(self) -> bool:
        return self.path.name.endswith(".org_archive")

    def heading_private(self, heading: Heading) -> bool:
        return heading.line < len(self.private) and self.private[heading.line]

    def subtree_private(self, heading: Heading) -> bool:
        end = self.outline.subtree_end(heading)
        return any(self.private[heading.line:end])

    def address(self, heading: Heading) -> str | None:
        """How the org tools name ``heading``: its unique :ID:, else its outline path;
        None when neither names it alone."""
        ident = self.outline.property(heading, "ID")
        if ident:
            try:
                if self.outline.find(f"id:{ident}").line == heading.line:
                    return f"id:{ident}"
            except ValueError:
                pass
        titles = [h.title for h in [*self.outline.olpath(heading), heading]]
        if any("/" in t or not t for t in titles):
            return None
        path = "/".join(titles)
        try:
            return path if self.outline.find_path(titles).line == heading.line else None
        except ValueError:
            return None


def org_paths(memex: Path, *, archives: bool = False,
              skipped: tuple[str, ...] = SKIPPED_DIRS) -> Iterator[Path]:
    """The memex's org files (hidden directories, editor files and ``skipped`` top
    directories left out), in a stable order."""
    root = memex.expanduser()
    if not root.is_dir():
        return
    for base, dirs, files in os.walk(root):
        top = Path(base) == root
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and not (top and d in skipped))
        for name in sorted(files):
            if name.startswith((".", "#")):
                continue
            if name.endswith(".org") or (archives and name.endswith(".org_archive")):
                yield Path(base, name)


def read_org(path: Path, tag: str) -> OrgText | None:
    """The file as :class:`OrgText`; None (logged) when it cannot be read as UTF-8 text."""
    try:
        if path.stat().st_size > MAX_BYTES:
            log.warning("background: %s is larger than %d MB, skipped", path, MAX_BYTES >> 20)
            return None
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        log.warning("background: %s skipped: %s", path, err)
        return None
    outline = Outline(text)
    return OrgText(path, text, outline, read_private(text, tag).private[:len(outline.lines)])


def read_memex(memex: Path, tag: str, *, archives: bool = False,
               skipped: tuple[str, ...] = SKIPPED_DIRS) -> list[OrgText]:
    return [org for path in org_paths(memex, archives=archives, skipped=skipped)
            if (org := read_org(path, tag)) is not None]
