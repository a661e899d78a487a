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
from passepartout.security.privacy.index import current

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


# (file, its identity and change stamp, tag) -> its view: an unchanged file is not read
# and hashed again for every command.
_made: dict[tuple[str, int, int, int, int, int, str], Path] = {}


def _view_of(original: str, view_dir: Path, tag: str) -> str | None:
    try:
        with open(original, "rb", opener=_no_follow) as handle:
            info = os.fstat(handle.fileno())
            key = (original, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns,
                   info.st_size, tag)
            known = _made.get(key)
            if known is not None and known.parent == view_dir and known.exists():
                return str(known)
            data = handle.read(MAX_VIEW_BYTES + 1)
    except OSError:
        return None  # gone or not a plain file: nothing there to read either
    if len(_made) >= _KEEP:
        _made.clear()
    _made[key] = view_dir / f"{_digest(original, data)}.org"
    return _write_view(_made[key], original, data, tag)


def _digest(original: str, data: bytes) -> str:
    return hashlib.sha256(original.encode() + b"\0" + data).hexdigest()[:32]


def _write_view(view: Path, original: str, data: bytes, tag: str) -> str:
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
