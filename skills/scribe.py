"""The scribe: a cron job in the memex (``system/background.org``) that distils the chat
sessions and events since its last note into a dated note with links back, asking the
cognition model once and only when there is something new; the note is an
``org-add-heading`` proposal that passes the gates.  See
:mod:`passepartout.background.scribe`.
"""

from __future__ import annotations

from passepartout.api import defskill, host

DEPENDS_ON = ["events", "orgtools"]

HOST = host()


def scribe_start() -> None:
    """Register the job's reflex and make its cron heading if it never was."""
    from passepartout.background.scribe import SPEC, Scribe
    from passepartout.background.service import Background

    assert HOST is not None
    background = Background.of(HOST.agent)
    background.add(SPEC, Scribe(background))


if HOST is not None:
    from passepartout.background.service import reflex_for, trigger_for

    defskill("scribe", priority=60, depends_on=DEPENDS_ON, trigger=trigger_for("scribe"),
             reflex=reflex_for(HOST.agent), start=scribe_start)
else:
    defskill("scribe", priority=60, depends_on=DEPENDS_ON)
