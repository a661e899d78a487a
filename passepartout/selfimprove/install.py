"""Putting an approved proposal in place: written, trusted by its hash, hot-reloaded.

The file is replaced atomically and the trust record names its exact sha256 (what the
person approved is what loads).  When the new version does not load, the file goes
back to what it was (or away, for a new skill), so that what is on disk is what serves:
the previous version goes on serving and the next start loads it too.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from passepartout.engine.loader import Status
from passepartout.fsutil import atomic_write
from passepartout.selfimprove.proposal import Proposal

log = logging.getLogger(__name__)


def put_in_place(proposal: Proposal, loader: Any) -> str:
    """Write, trust and load ``proposal``; what happened, in a sentence for the model."""
    path = proposal.path
    atomic_write(path, proposal.content, mode=0o644)
    if loader.trust is not None:
        loader.trust.trust(proposal.name, proposal.sha256, path)
    entry = loader.add(path)
    if entry.status is Status.READY and entry.sha256 == proposal.sha256 and not entry.error:
        log.info("skill %s installed from an approved proposal (%s)", proposal.name, path)
        return f"{path} written, trusted by its hash and loaded: {proposal.name} is ready"
    problem = entry.error or str(entry.status)
    if proposal.previous is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return f"{proposal.name} did not load ({problem}); the file was removed again"
    atomic_write(path, proposal.previous, mode=0o644)
    if entry.status is Status.READY:
        entry.error = None  # the previous version serves, and is on disk again
    else:
        loader.reload(proposal.name)  # the old file again, as it was trusted before
    return (f"{proposal.name} did not load ({problem}); {path} holds the previous version "
            "again, which goes on serving")
