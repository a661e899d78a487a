"""The exit every text takes to a messaging service: the same as a request to a remote
model (secrets masked by the vault, text of ``@personal`` subtrees withheld by the
private index), then cut to the service's message size.

A phone's messages go through a third party's servers, so a reply that a local model
wrote from a private note must not carry that note there.  The face runs in the
daemon's process, whose vault and private index are the ones the gates fill.
"""

from __future__ import annotations

import logging

from passepartout.errors import PassepartoutError

log = logging.getLogger(__name__)

WITHHELD = "[not sent: the memex is still being scanned for private text; ask again soon]"


def outbound(text: str) -> str:
    """``text`` as it may leave the machine."""
    from passepartout.security.outbound import outbound as leave

    try:
        return str(leave(text))
    except PassepartoutError as err:  # the scan failed or is not done: send nothing of it
        log.warning("a message was withheld: %s", err.message)
        return WITHHELD


def pieces(text: str, size: int) -> list[str]:
    """``text`` cut into messages of at most ``size`` characters, at a line end or a
    space where there is one in the second half."""
    out: list[str] = []
    rest = text.strip()
    while len(rest) > size:
        cut = rest.rfind("\n", size // 2, size)
        if cut < 0:
            cut = rest.rfind(" ", size // 2, size)
        if cut < 0:
            cut = size
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        out.append(rest)
    return out
