"""A text cut to a messaging service's message size.  What is cut has passed the exit
every text takes to a messaging service, the same as a request to a remote model
(:func:`passepartout.security.outbound.outbound_text`: secrets masked by the vault,
text of ``@personal`` subtrees withheld by the private index).

A phone's messages go through a third party's servers, so a reply that a local model
wrote from a private note must not carry that note there.  The face runs in the
daemon's process, whose vault and private index are the ones the gates fill.
"""

from __future__ import annotations


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
