"""Org headings named for a person: the title and file behind an id of the ledger.

The ledger and the event log key a heading by its ``:ID:``, or by an id derived from
its file and outline (``h-8b22...``) for the CRON/HOOK headings that have none.  Both
are found again by reading the memex: the scanner derives the same ids, and an
``:ID:`` line names the heading above it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from pathlib import Path

from passepartout.config import Config

log = logging.getLogger(__name__)

_HEADING = re.compile(r"^\*+[ \t]+(.*?)[ \t]*$")
_ID = re.compile(r"^[ \t]*:ID:[ \t]*(\S+)[ \t]*$", re.IGNORECASE)
_TAGS = re.compile(r"[ \t]+:[\w@#%:]+:$")


def memex_roots(config: Config) -> list[Path]:
    return [config.memex_dir / d if d not in (".", "") else config.memex_dir
            for d in config.memex_scan_dirs]


def heading_names(ids: Iterable[str], roots: Iterable[Path],
                  home: Path | None = None) -> dict[str, str]:
    """``{id: "Title (file)"}`` for each of ``ids`` found under ``roots``."""
    from passepartout.events.scan import org_files, scan_file

    wanted = {i for i in ids if i}
    names: dict[str, str] = {}
    if not wanted:
        return names
    for path in org_files(roots):
        try:
            scan = scan_file(path)
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            log.debug("cannot read %s for heading names: %s", path, err)
            continue
        shown = shown_file(path, home)
        for node in scan.nodes:
            if node.id in wanted:
                names[node.id] = f"{node.heading} ({shown})"
        title = ""
        for line in text.splitlines():
            heading = _HEADING.match(line)
            if heading:
                title = _TAGS.sub("", heading.group(1))
                continue
            found = _ID.match(line)
            if found and found.group(1) in wanted and title:
                names.setdefault(found.group(1), f"{title} ({shown})")
        if wanted <= names.keys():
            break
    return names


def shown_file(path: str | Path, home: Path | None = None) -> str:
    """The file as a person writes it: under ~ when it is in the home directory."""
    base = home or Path.home()
    try:
        return "~/" + str(Path(path).relative_to(base))
    except ValueError:
        return str(path)
