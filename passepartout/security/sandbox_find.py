"""What the sandbox must cover that only a look at the machine finds.

Two searches, both bounded: the git directories under the workspace (their hooks and
config run programs when the person later uses git there), and the host's listening
Unix sockets (a socket stays connectable on a read-only mount, so each is covered
with ``/dev/null``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from passepartout.security.sandbox.reach import Credentials, searchable
from passepartout.security.sensitive import GIT_PROTECTED

__all__ = ["GIT_PROTECTED", "Found", "WorkspaceTooLarge", "find_in_workspace",
           "listening_sockets", "other_homes"]

log = logging.getLogger(__name__)

MAX_DIRS = 3_000
MAX_SOCKETS = 1_000
# Trees that hold packages and caches, never the person's repositories: not searched.
_NOT_SEARCHED = frozenset(
    {"node_modules", "__pycache__", ".venv", "site-packages", ".tox", ".mypy_cache",
     ".ruff_cache", ".pytest_cache", ".cache"}
)
_UNIX_TABLE = "/proc/net/unix"


class WorkspaceTooLarge(Exception):
    """The search passed its bound: what it did not see cannot be protected."""


@dataclass(frozen=True)
class Found:
    """The git directories of the workspace, and files matching a relative entry."""

    git_dirs: tuple[Path, ...]
    named: tuple[Path, ...]


@dataclass(frozen=True)
class _Listing:
    """One directory as last read: trusted again while its mtime has not moved."""

    mtime_ns: int
    read_at_ns: int
    names: frozenset[str]
    subdirs: tuple[str, ...]


_listings: dict[str, _Listing] = {}
_listings_lock = threading.Lock()
# A change within the clock's tick keeps the mtime: a listing read that soon after its
# directory's last change is read again next time (git's "racily clean" rule).
_RACY_NS = 1_000_000_000
# Workspaces found too large: not searched again for a while (their answer, read-only
# as a whole, is the safe one to keep).
_too_large: dict[str, float] = {}
TOO_LARGE_TTL = 60.0


def _listing(path: str) -> _Listing | None:
    try:
        stat = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    with _listings_lock:
        cached = _listings.get(path)
    if (
        cached is not None
        and cached.mtime_ns == stat.st_mtime_ns
        and cached.read_at_ns - cached.mtime_ns > _RACY_NS
    ):
        return cached
    try:
        entries = list(os.scandir(path))
    except OSError:
        return None
    listing = _Listing(
        stat.st_mtime_ns,
        time.time_ns(),
        frozenset(e.name for e in entries),
        tuple(e.name for e in entries if e.is_dir(follow_symlinks=False)),
    )
    with _listings_lock:
        if len(_listings) > 4 * MAX_DIRS:
            _listings.clear()
        _listings[path] = listing
    return listing


def find_in_workspace(
    workspace: Path, names: Iterable[str], skip: Iterable[Path | str] = ()
) -> Found:
    """Git directories (``.git`` and bare repositories) and entries called one of ``names``.

    ``skip``: directories already covered whole (not searched). Raises
    :class:`WorkspaceTooLarge` past :data:`MAX_DIRS` directories. A directory whose
    mtime has not changed since the last search is not read again.
    """
    key = str(workspace)
    if _too_large.get(key, 0.0) > time.monotonic():
        raise WorkspaceTooLarge(_too_large_message(workspace))
    wanted = frozenset(names)
    skipped = {str(p) for p in skip}
    git_dirs: list[Path] = []
    named: list[Path] = []
    stack = [str(workspace)]
    seen = 0
    while stack:
        top = stack.pop()
        seen += 1
        if seen > MAX_DIRS:
            _too_large[key] = time.monotonic() + TOO_LARGE_TTL
            log.warning("%s: it is read-only as a whole", _too_large_message(workspace))
            raise WorkspaceTooLarge(_too_large_message(workspace))
        listing = _listing(top)
        if listing is None:
            continue
        if _is_bare_repository(listing.names):
            git_dirs.append(Path(top))
            continue
        named += [Path(top, name) for name in wanted & listing.names]
        for name in listing.subdirs:
            path = os.path.join(top, name)
            if name == ".git":
                git_dirs += _with_submodules(Path(path))
            elif name not in _NOT_SEARCHED and path not in skipped:
                stack.append(path)
    return Found(tuple(git_dirs), tuple(named))


def _too_large_message(workspace: Path) -> str:
    return (
        f"the workspace {workspace} has more than {MAX_DIRS} directories to search for "
        "git hooks and configs"
    )


def _is_bare_repository(names: frozenset[str]) -> bool:
    """What git itself takes for a git directory: ``HEAD`` with ``objects`` and ``refs``
    (no ``config`` needed), or ``HEAD`` with ``commondir`` (a worktree's)."""
    return "HEAD" in names and ({"objects", "refs"} <= names or "commondir" in names)


def _with_submodules(git_dir: Path) -> list[Path]:
    """A ``.git`` directory and the git directories of its submodules (``modules/...``)
    and of its worktrees (``worktrees/NAME``, each with its own ``config.worktree``)."""
    found = [git_dir]
    stack = [git_dir / "modules"]
    with contextlib.suppress(OSError):
        found += [Path(e.path) for e in os.scandir(git_dir / "worktrees")
                  if e.is_dir(follow_symlinks=False)][:100]
    while stack and len(found) < 200:
        top = stack.pop()
        try:
            entries = [e for e in os.scandir(top) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if (path / "HEAD").exists():
                found.append(path)
                stack.append(path / "modules")
            else:  # a submodule named with slashes: modules/a/b
                stack.append(path)
    return found


def listening_sockets(table: str = _UNIX_TABLE) -> list[Path]:
    """Paths of the host's bound Unix sockets (abstract and unnamed ones have none)."""
    try:
        with open(table, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError as exc:
        log.warning("cannot read %s (%s): only the socket directories are masked", table, exc)
        return []
    paths = list(_socket_paths(lines))
    if len(paths) > MAX_SOCKETS:
        log.warning("%d host sockets; masking the first %d", len(paths), MAX_SOCKETS)
    return paths[:MAX_SOCKETS]


def _socket_paths(lines: Iterable[str]) -> Iterator[Path]:
    seen: set[str] = set()
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue
        path = fields[7]
        if path not in seen:
            seen.add(path)
            yield Path(path)


def other_homes(own: Path, limit: int = 64) -> list[Path]:
    """The other users' home directories a sandboxed command could enter (root's too).

    Judged without privilege (:mod:`.sandbox_reach`): root enters every home, its
    sandboxed command only those whose modes let it in.
    """
    who = Credentials.own()
    found: list[Path] = []
    candidates = [Path("/root")]
    with contextlib.suppress(OSError):
        candidates += sorted(Path("/home").iterdir())
    for home in candidates:
        if len(found) >= limit:
            break
        if home != own and home.is_dir() and searchable(home, who):
            found.append(home)
    return found
