"""The scribe: a cron job in the memex (``system/background.org``) that distils the chat
sessions and events since its last note into a dated note with links back, asking the
cognition model once and only when there is something new; the note is an
``org-add-heading`` proposal that passes the gates.  See
:mod:`passepartout.background.scribe`.
"""

from __future__ import annotations

from passepartout.api import defskill, host

DEPENDS_ON = ["events", "orgtools"]

AGENT = host()

if AGENT is not None:
    from passepartout.background.scribe import SPEC, Scribe
    from passepartout.background.service import Background, reflex_for, trigger_for

    scribe_BACKGROUND = Background.of(AGENT)
    scribe_JOB = scribe_BACKGROUND.add(SPEC, Scribe(scribe_BACKGROUND))
    defskill("scribe", priority=60, depends_on=DEPENDS_ON, trigger=trigger_for("scribe"),
             reflex=reflex_for(AGENT))
else:
    defskill("scribe", priority=60, depends_on=DEPENDS_ON)
