"""What the person chose for one chat turn, as the model layer uses it.

Emacs sends the choice in the turn's context (``:model``, ``:tier``, ``:system``,
``:tools``, ``:budget``); :class:`passepartout.turn.TurnChoice` reads and checks it where
the signal is built.  Here: the preset's system text, escaped, appended after the
instructions.
"""

from __future__ import annotations

from passepartout.org.escape import org_escape
from passepartout.turn import TurnChoice

SYSTEM_MAX = 4000  # a preset's addition is a few lines, not a second prompt


def system_text(choice: TurnChoice) -> list[str]:
    """The preset's addition to the system prompt, escaped, or nothing."""
    if not choice.system:
        return []
    return ["The person's preset for this turn adds:\n" + org_escape(choice.system[:SYSTEM_MAX])]
