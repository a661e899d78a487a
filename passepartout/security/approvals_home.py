"""Where the person's approvals live: one file, the same from the first start on.

The approvals file (Flight Plans and standing grants) is ``system/approvals.org`` in the
memex, where the person's org tools and agenda see it, unless
``PASSEPARTOUT_APPROVALS_FILE`` names another. Earlier versions wrote it to the state
directory until the memex had a ``system`` directory, then read the memex's: grants
given on the first day were forgotten at the next start. Such a file is merged into
the one home when found (its grants and plans that the home lacks, verbatim: their
seals cover their content, not their place) and kept beside it as
``approvals.org.merged-STAMP``; nothing is lost.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from passepartout.fsutil import atomic_write
from passepartout.security.approvals import HEADER, parse
from passepartout.security.approvals import grants as grant_file

log = logging.getLogger(__name__)

FILENAME = "approvals.org"


def approvals_file(memex_dir: Path, override: str | None = None) -> Path:
    """The approvals file: ``override`` when set, else the memex's ``system/approvals.org``."""
    if override:
        return Path(os.path.expanduser(override))
    return Path(memex_dir) / "system" / FILENAME


def settle(memex_dir: Path, state_dir: Path, override: str | None = None) -> tuple[Path, int]:
    """The approvals file, with an earlier version's in ``state_dir`` merged into it.

    Returns the file and how many entries the merge moved.
    """
    path = approvals_file(memex_dir, override)
    return path, adopt_stray(path, Path(state_dir) / FILENAME)


def adopt_stray(home_file: Path, stray: Path) -> int:
    """Merge an earlier version's approvals file ``stray`` into ``home_file``.

    The entries ``home_file`` lacks (grants by rule, Flight Plans by id) are appended,
    as written; ``stray`` is then renamed ``approvals.org.merged-STAMP``. Returns how
    many entries moved (0 when there was nothing to merge).
    """
    if not stray.is_file() or _same_file(stray, home_file):
        return 0
    try:
        old_text = stray.read_text(encoding="utf-8")
        home_text = home_file.read_text(encoding="utf-8") if home_file.exists() else HEADER
    except (OSError, UnicodeDecodeError) as err:
        log.warning("cannot merge %s into %s: %s", stray, home_file, err)
        return 0
    old, home = parse(old_text), parse(home_text)
    have_grants = {grant_file.canonical(g.entry()) for g in home.grants}
    have_plans = {p.id for p in home.plans}
    grants = [g for g in old.grants if grant_file.canonical(g.entry()) not in have_grants]
    plans = [p for p in old.plans if p.id not in have_plans]
    lines = home.lines
    if grants:
        at = _end_of_grants(lines)
        moved = [line for g in grants for line in old.lines[g.start : g.end]]
        lines = [*lines[:at], *moved, *lines[at:]]
    for plan in plans:
        lines = [*lines, *old.lines[plan.start : plan.end]]
    if grants or plans:
        atomic_write(home_file, "\n".join(lines) + "\n")
    kept = stray.with_name(f"{FILENAME}.merged-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(stray, kept)
    log.warning(
        "merged %d grants and %d Flight Plans of %s into %s (the old file is kept as %s)",
        len(grants), len(plans), stray, home_file, kept.name,
    )
    return len(grants) + len(plans)


def _end_of_grants(lines: list[str]) -> int:
    """The line after the ``* Grants`` subtree (a new one is added when missing)."""
    start = next((i for i, line in enumerate(lines) if grant_file.is_grants_heading(line)), None)
    if start is None:
        lines.append("* Grants")
        return len(lines)
    after = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("* ")), len(lines)
    )
    while after > start + 1 and not lines[after - 1].strip():
        after -= 1
    return after


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
