"""What a sandboxed command reads of a private org file: the file with its private
subtrees withheld.

The boundary filter recognises private text as it was written (and in base64 or hex),
not after a command reversed, rot13'd or compressed it.  So inside the sandbox every
org file the privacy index knows to hold private text is covered, read-only, by a
redacted copy: a command never sees the private text, whatever it does with it.  The
copies live in a 0700 directory of the agent's state (hidden in the sandbox, bound in
by bubblewrap from the host side), one per file content, made again when it changes.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from passepartout.fsutil import atomic_write
from passepartout.security.privacy import redact_file_text
from passepartout.security.privateindex import current

log = logging.getLogger(__name__)

MAX_VIEW_BYTES = 8 * 1024 * 1024
_KEEP = 256  # views kept in the directory; older ones are removed


def private_views(
    view_dir: Path, tag: str, files: Iterable[str] | None = None
) -> list[tuple[str, str]]:
    """``(view, original)`` pairs for every known private file (or ``files``)."""
    index = current()
    index.wait_ready()
    index.refresh()
    view_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    pairs: list[tuple[str, str]] = []
    for original in sorted(index.private_files() if files is None else files):
        view = _view_of(original, view_dir, tag)
        if view is not None:
            pairs.append((view, original))
    _prune(view_dir, keep={v for v, _ in pairs})
    return pairs


def _view_of(original: str, view_dir: Path, tag: str) -> str | None:
    try:
        with open(original, "rb", opener=_no_follow) as handle:
            data = handle.read(MAX_VIEW_BYTES + 1)
    except OSError:
        return None  # gone or not a plain file: nothing there to read either
    digest = hashlib.sha256(original.encode() + b"\0" + data).hexdigest()[:32]
    view = view_dir / f"{digest}.org"
    if view.exists():
        return str(view)
    if len(data) > MAX_VIEW_BYTES:
        text = f"[private: withheld: {os.path.basename(original)} is too large to redact]\n"
    else:
        text = redact_file_text(original, data.decode("utf-8", "replace"), tag)
    atomic_write(view, text.encode("utf-8"), mode=0o600)
    return str(view)


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)


def _prune(view_dir: Path, keep: set[str]) -> None:
    try:
        entries = sorted(view_dir.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in entries[_KEEP:]:
        if str(old) not in keep:
            old.unlink(missing_ok=True)
