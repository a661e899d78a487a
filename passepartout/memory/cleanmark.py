"""The clean-close mark: opening a store nothing has touched since it was closed.

Re-hashing every object at open costs seconds on a large store. A clean close
(everything checkpointed into the main file, no WAL left) writes beside the
database a mark holding the SHA-256 of the whole file and the head it holds.
Opening reads the file once: when its digest still matches, not a byte changed
since a state the closing process had verified or written itself, and the
tree need not be re-hashed. The mark is removed as the store opens, so after a
crash there is none and the whole head is verified, as when the file changed
while closed (bit rot, another program): any difference means a full check.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def mark_path(db: Path) -> Path:
    return db.with_name(db.name + ".clean")


def _digest(db: Path) -> str | None:
    wal = Path(f"{db}-wal")
    if wal.exists() and wal.stat().st_size:
        return None  # commits not yet in the main file: not a clean close
    try:
        with db.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def take(db: Path) -> str | None:
    """The head the mark vouches for when the file is unchanged; the mark is used up."""
    mark = mark_path(db)
    try:
        recorded = json.loads(mark.read_text())
    except (OSError, ValueError):
        return None
    try:
        mark.unlink()
    except OSError:
        return None  # a mark that cannot be used up would vouch for later changes
    if not isinstance(recorded, dict) or recorded.get("digest") != _digest(db):
        log.info("memory store %s changed since its clean close: verifying it all", db)
        return None
    head = recorded.get("head")
    return head if isinstance(head, str) else None


def record(db: Path, head: str) -> None:
    """After a clean close: vouch for the file as it is now (atomically)."""
    digest = _digest(db)
    if digest is None:
        return
    mark = mark_path(db)
    tmp = mark.with_name(mark.name + ".tmp")
    try:
        tmp.write_text(json.dumps({"digest": digest, "head": head}))
        os.replace(tmp, mark)
    except OSError as e:  # no mark: the next open verifies everything
        log.warning("memory store: cannot write the clean-close mark: %s", e)
