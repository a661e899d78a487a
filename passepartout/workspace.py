"""The workspace of a turn: the directory its shell runs in and its relative paths
point to, chosen by the face the turn came from.

Emacs sends the project of the buffer the chat or the send came from (``project.el``),
else the person's ``passepartout-workspace``; a turn that names none works in the
agent's default workspace (PASSEPARTOUT_WORKSPACE, else the home directory, which the
sandbox keeps safe).  Never the directory the daemon was started from.  The turn's
choice holds in its own context (the loop sets it around the turn; the gates run in a
copy of it), so two sessions' turns each keep theirs.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from passepartout.errors import ProtocolError

META_KEY = "workspace"

_turn: contextvars.ContextVar[Path | None] = contextvars.ContextVar(
    "passepartout_turn_workspace", default=None)


def current() -> Path | None:
    """The workspace the running turn named, or None."""
    return _turn.get()


def checked(raw: Any) -> Path:
    """``raw`` as a turn's workspace: an absolute path of an existing directory, not the
    root directory.  :class:`ProtocolError` says what is wrong otherwise."""
    if not isinstance(raw, str) or not raw:
        raise ProtocolError(":workspace must be a directory's absolute path")
    if "\x00" in raw:
        raise ProtocolError(":workspace may not contain a NUL byte")
    path = Path(os.path.expanduser(raw))
    if not path.is_absolute():
        raise ProtocolError(f":workspace {raw!r} is not an absolute path")
    real = Path(os.path.realpath(path))
    if not real.is_dir():
        raise ProtocolError(f":workspace {raw!r} is not a directory")
    if real == Path("/"):
        raise ProtocolError("the root directory cannot be the workspace")
    return real


@contextmanager
def entered(raw: str | None) -> Iterator[Path | None]:
    """For a turn: the ``workspace`` its context names (``raw``), when valid, holds
    until the turn ends."""
    try:
        path = checked(raw) if raw is not None else None
    except ProtocolError:
        path = None  # the face refused it already; a stale one is not used
    token = _turn.set(path)
    try:
        yield path
    finally:
        _turn.reset(token)
