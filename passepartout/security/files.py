"""The file tools' safe read and write.

The path is judged (:mod:`passepartout.security.files.paths`), then opened by walking from
``/`` one component at a time with ``O_NOFOLLOW``: a symlink swapped in between the
check and the write makes the walk fail instead of leading elsewhere.  A write goes to
a temporary file in the same directory, is fsynced and renamed over the target (a
rename replaces a symlink or hard link at the target, it never writes through it).

Only regular files are read: the entry is looked at (``lstat``) before it is opened, the
open cannot block or follow a link (``O_NONBLOCK | O_NOFOLLOW``), and the opened file
must be the same regular file (``fstat``): a FIFO, a socket or a device never holds a
turn up, and one swapped in between the look and the open is caught.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from passepartout.security.files.paths import PathDenied, PathRules, denial

MAX_READ_BYTES = 2_000_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LEAF_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_KINDS = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISLNK, "a symlink"),
)


class FileToolError(PathDenied):
    """A file operation that could not be done safely."""


@dataclass(frozen=True)
class WriteResult:
    path: Path
    size: int
    created: bool


def _open_dir(path: Path, *, create: bool) -> int:
    """A descriptor of directory ``path`` reached without following any symlink."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in path.parts[1:]:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError as err:
        os.close(fd)
        if err.errno == errno.ELOOP:
            raise FileToolError(
                f"{path} changed into a symlink while it was being opened", path=str(path)
            ) from None
        if err.errno == errno.ENOTDIR:
            raise FileToolError(
                f"a part of {path} is not a directory (or changed into a symlink)",
                path=str(path),
            ) from None
        raise
    return fd


def _checked(raw: str, rules: PathRules, *, writing: bool) -> Path:
    resolved, reason = denial(raw, rules, writing=writing)
    if reason is not None or resolved is None:
        raise FileToolError(f"refused: {reason}", path=raw)
    return resolved.path


def kind_of(mode: int) -> str:
    """What a file of this mode is, for a message ("a FIFO (named pipe)")."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_leaf(dir_fd: int, name: str, shown: str) -> int:
    """A read-only descriptor of the regular file ``name`` in directory ``dir_fd``.

    Anything else is refused before it is opened (no open of a FIFO that waits for a
    writer); the open neither blocks nor follows a symlink, and what it opened must be
    the very file that was looked at.
    """
    try:
        seen = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise FileToolError(f"{shown}: no such file", path=shown) from None
    except OSError as err:
        raise FileToolError(f"{shown}: {err.strerror}", path=shown) from None
    if not stat.S_ISREG(seen.st_mode):
        raise FileToolError(f"{shown} is {kind_of(seen.st_mode)}, not a regular file",
                            path=shown)
    try:
        fd = os.open(name, _LEAF_FLAGS, dir_fd=dir_fd)
    except OSError as err:
        raise FileToolError(f"{shown}: {err.strerror}", path=shown) from None
    opened = os.fstat(fd)
    if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
        seen.st_dev, seen.st_ino
    ):
        os.close(fd)
        raise FileToolError(f"{shown} changed while it was being opened", path=shown)
    return fd


def read_leaf(fd: int, max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of the descriptor ``fd`` (closed after)."""
    with os.fdopen(fd, "rb") as handle:
        return handle.read(max_bytes + 1)


def read_text(raw: str, rules: PathRules, *, max_bytes: int = MAX_READ_BYTES) -> str:
    """The text of the regular file at ``raw`` (UTF-8, undecodable bytes replaced)."""
    path = _checked(raw, rules, writing=False)
    try:
        dir_fd = _open_dir(path.parent, create=False)
    except FileNotFoundError:
        raise FileToolError(f"{raw}: no such file", path=raw) from None
    except OSError as err:
        raise FileToolError(f"{raw}: {err.strerror}", path=raw) from None
    try:
        fd = open_leaf(dir_fd, path.name, raw)
    finally:
        os.close(dir_fd)
    data = read_leaf(fd, max_bytes)
    text = data[:max_bytes].decode("utf-8", errors="replace")
    if len(data) > max_bytes:
        text += f"\n[... truncated at {max_bytes} bytes]"
    return text


def write_text(raw: str, content: str, rules: PathRules) -> WriteResult:
    """Write ``content`` to ``raw`` atomically (temporary file, fsync, rename)."""
    path = _checked(raw, rules, writing=True)
    payload = content.encode("utf-8")
    dir_fd = _open_dir(path.parent, create=True)
    tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        try:
            old = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise FileToolError(f"{raw} is a directory", path=raw)
        mode = stat.S_IMODE(old.st_mode) if old is not None and stat.S_ISREG(old.st_mode) else 0o644
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
            dir_fd=dir_fd,
        )
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                os.fchmod(handle.fileno(), mode)  # the umask must not change a file's mode
                handle.flush()
                os.fsync(handle.fileno())
            os.rename(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return WriteResult(path, len(payload), old is None)
