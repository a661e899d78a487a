"""The one exit for text that leaves toward a remote model, a client or a chat:
secrets masked (the vault), private text withheld (the privacy index).

A model request, a message to a messaging chat and the context preview a person asks
for all pass this one function, so what the preview shows is what a request carries.
"""

from __future__ import annotations

import logging
from typing import TypeVar

from passepartout.errors import PassepartoutError
from passepartout.security.privacy.index import READY_WAIT, withhold_value
from passepartout.security.vault import mask_value

log = logging.getLogger(__name__)

T = TypeVar("T")

WITHHELD = "[not sent: the memex is still being scanned for private text; ask again soon]"


def outbound(value: T, *, wait: float = READY_WAIT) -> T:
    """``value`` (a string, or messages: dicts and lists of them) as it may leave.

    Waits for the memex's first scan for private text; raises
    :class:`~passepartout.security.privacy.index.PrivacyNotReady` when it does not end.
    """
    out: T = withhold_value(mask_value(value), wait=wait)
    return out


def outbound_text(text: str) -> str:
    """``text`` as it may leave, or :data:`WITHHELD` when the privacy scan failed or is
    not done: for a sender that must say something (a chat, a reply) and never send
    what it could not judge."""
    try:
        return str(outbound(text))
    except PassepartoutError as err:
        log.warning("a message was withheld: %s", err.message)
        return WITHHELD
