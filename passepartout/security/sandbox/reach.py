"""Which host paths a sandboxed command could reach at all.

A sandboxed command runs as the agent's own uid and groups with no capability, so the
kernel lets it through a directory only when that directory's mode or ACL grants it
search. A host socket behind a directory that refuses it (another account's runtime
directory, a 0700 folder of someone else under ``/var/tmp``) is out of its reach
already: the sandbox leaves it alone. Masking it would not protect anything, and
bubblewrap, which sets the mounts up with the same credentials, cannot even get to it
and stops, so every command would fail because of a stranger's socket.

The check follows the kernel's own rules (``generic_permission``: owner, ACL entries
through the mask, group, other) for the credentials the command will have, which are
the daemon's own without its privilege: root's capabilities are dropped in the
sandbox, so root is judged as a plain uid 0. A directory the check cannot read is
taken as reachable: the sandbox then masks, which is the safe side.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_ACL_XATTR = "system.posix_acl_access"
_ACL_VERSION = 2
# Tags of a POSIX ACL entry (linux/posix_acl_xattr.h).
_USER_OBJ, _USER, _GROUP_OBJ, _GROUP, _MASK, _OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_SEARCH = 0o1  # the x bit of an rwx triple


@dataclass(frozen=True)
class Credentials:
    """Who the sandboxed command is, for the file system."""

    uid: int
    groups: frozenset[int]

    @classmethod
    def own(cls) -> Credentials:
        return cls(os.geteuid(), frozenset({os.getegid(), *os.getgroups()}))


def reachable(path: Path | str, who: Credentials | None = None) -> bool:
    """Can ``who`` (the sandbox's command by default) get through every directory to ``path``?"""
    return bool(reachable_only([Path(path)], who))


def reachable_only(paths: Iterable[Path], who: Credentials | None = None) -> list[Path]:
    """``paths`` without those out of ``who``'s reach (directories judged once each)."""
    who = who or Credentials.own()
    judged: dict[Path, bool] = {}

    def through(directory: Path) -> bool:
        if directory not in judged:
            up = directory.parent
            judged[directory] = (up == directory or through(up)) and searchable(directory, who)
        return judged[directory]

    return [p for p in paths if through(Path(os.path.abspath(p)).parent)]


def searchable(directory: Path | str, who: Credentials) -> bool:
    """Does ``directory``'s mode or ACL let ``who`` search it, with no privilege?"""
    try:
        info = os.stat(directory)
    except OSError:
        return True  # nothing known: the safe side is to mask
    if not stat.S_ISDIR(info.st_mode):
        return False
    if info.st_uid == who.uid:
        # The owner may also give itself the bit back (chmod) where the mount is writable.
        return True
    acl = _acl(directory)
    if acl is None:
        bits = info.st_mode >> 3 if info.st_gid in who.groups else info.st_mode
        return bool(bits & _SEARCH)
    return _acl_allows(acl, info, who)


def _acl(directory: Path | str) -> list[tuple[int, int, int]] | None:
    """The access ACL's entries ``(tag, perm, id)``, or None when it has none beyond the mode."""
    try:
        raw = os.getxattr(directory, _ACL_XATTR)
    except OSError:
        return None
    if len(raw) < 4 or struct.unpack_from("<I", raw)[0] != _ACL_VERSION:
        return None
    return [struct.unpack_from("<HHI", raw, at) for at in range(4, len(raw) - 7, 8)]


def _acl_allows(acl: list[tuple[int, int, int]], info: os.stat_result, who: Credentials) -> bool:
    """POSIX ACL access check for search, the owner case excluded (see :func:`searchable`)."""
    mask = next((perm for tag, perm, _ in acl if tag == _MASK), 0o7)
    for tag, perm, ident in acl:
        if tag == _USER and ident == who.uid:
            return bool(perm & mask & _SEARCH)
    groups = [
        perm
        for tag, perm, ident in acl
        if (tag == _GROUP_OBJ and info.st_gid in who.groups)
        or (tag == _GROUP and ident in who.groups)
    ]
    if groups:
        return any(perm & mask & _SEARCH for perm in groups)
    return any(tag == _OTHER and perm & _SEARCH for tag, perm, _ in acl)
