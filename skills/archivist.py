"""The archivist: a cron job in the memex (``system/background.org``) that proposes to
archive DONE subtrees closed longer ago than ``:ARCHIVE_AFTER:`` days, org-style, through
the ``org-archive`` tool and the gates.  No model.  See
:mod:`passepartout.background.archivist`.
"""

from __future__ import annotations

from passepartout.api import defskill, host

DEPENDS_ON = ["events", "orgtools"]

HOST = host()


def archivist_start() -> None:
    """Register the job's reflex and make its cron heading if it never was."""
    from passepartout.background.archivist import SPEC, Archivist
    from passepartout.background.service import Background

    assert HOST is not None
    background = Background.of(HOST.agent)
    background.add(SPEC, Archivist(background))


if HOST is not None:
    from passepartout.background.service import reflex_for, trigger_for

    defskill("archivist", priority=60, depends_on=DEPENDS_ON, trigger=trigger_for("archivist"),
             reflex=reflex_for(HOST.agent), start=archivist_start)
else:
    defskill("archivist", priority=60, depends_on=DEPENDS_ON)
