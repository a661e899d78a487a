"""The archivist: a cron job in the memex (``system/background.org``) that proposes to
archive DONE subtrees closed longer ago than ``:ARCHIVE_AFTER:`` days, org-style, through
the ``org-archive`` tool and the gates.  No model.  See
:mod:`passepartout.background.archivist`.
"""

from __future__ import annotations

from passepartout.api import defskill, host

DEPENDS_ON = ["events", "orgtools"]

AGENT = host()

if AGENT is not None:
    from passepartout.background.archivist import SPEC, Archivist
    from passepartout.background.service import Background, reflex_for, trigger_for

    archivist_BACKGROUND = Background.of(AGENT)
    archivist_JOB = archivist_BACKGROUND.add(SPEC, Archivist(archivist_BACKGROUND))
    defskill("archivist", priority=60, depends_on=DEPENDS_ON, trigger=trigger_for("archivist"),
             reflex=reflex_for(AGENT))
else:
    defskill("archivist", priority=60, depends_on=DEPENDS_ON)
