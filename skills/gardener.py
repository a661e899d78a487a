"""The gardener: a cron job in the memex (``system/background.org``) that finds broken
``id:`` and ``file:`` links, orphaned notes and duplicate IDs, proposes the unambiguous
fixes through the org tools and the gates, and reports the rest in ``events.org``.  No
model.  See :mod:`passepartout.background.gardener`.
"""

from __future__ import annotations

from passepartout.api import defskill, host

DEPENDS_ON = ["events", "orgtools"]

AGENT = host()

if AGENT is not None:
    from passepartout.background.gardener import SPEC, Gardener
    from passepartout.background.service import Background, reflex_for, trigger_for

    gardener_BACKGROUND = Background.of(AGENT)
    gardener_JOB = gardener_BACKGROUND.add(SPEC, Gardener(gardener_BACKGROUND))
    defskill("gardener", priority=60, depends_on=DEPENDS_ON, trigger=trigger_for("gardener"),
             reflex=reflex_for(AGENT))
else:
    defskill("gardener", priority=60, depends_on=DEPENDS_ON)
