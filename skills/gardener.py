"""The gardener: a cron job in the memex (``system/background.org``) that finds broken
``id:`` and ``file:`` links, orphaned notes and duplicate IDs, proposes the unambiguous
fixes through the org tools and the gates, and reports the rest in ``events.org``.  No
model.  See :mod:`passepartout.background.gardener`.
"""

from __future__ import annotations

from passepartout.api import defskill, host

DEPENDS_ON = ["events", "orgtools"]

HOST = host()


def gardener_start() -> None:
    """Register the job's reflex and make its cron heading if it never was."""
    from passepartout.background.gardener import SPEC, Gardener
    from passepartout.background.service import Background

    assert HOST is not None
    background = Background.of(HOST.agent)
    background.add(SPEC, Gardener(background))


if HOST is not None:
    from passepartout.background.service import reflex_for, trigger_for

    defskill("gardener", priority=60, depends_on=DEPENDS_ON, trigger=trigger_for("gardener"),
             reflex=reflex_for(HOST.agent), start=gardener_start)
else:
    defskill("gardener", priority=60, depends_on=DEPENDS_ON)
