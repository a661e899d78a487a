"""The one exit for text that leaves toward a remote model, a client or a chat:
secrets masked (the vault), private text withheld (the privacy index).

A model request, a message to a messaging chat and the context preview a person asks
for all pass this one function, so what the preview shows is what a request carries.
"""

from __future__ import annotations

from typing import TypeVar

from passepartout.security.privacy.index import READY_WAIT, withhold_value
from passepartout.security.vault import mask_value

T = TypeVar("T")


def outbound(value: T, *, wait: float = READY_WAIT) -> T:
    """``value`` (a string, or messages: dicts and lists of them) as it may leave.

    Waits for the memex's first scan for private text; raises
    :class:`~passepartout.security.privacy.index.PrivacyNotReady` when it does not end.
    """
    out: T = withhold_value(mask_value(value), wait=wait)
    return out
