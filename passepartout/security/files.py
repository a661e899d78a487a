"""The file tools' safe read and write.

The path is judged (:mod:`passepartout.security.paths`), then opened by walking from
``/`` one component at a time with ``O_NOFOLLOW``: a symlink swapped in between the
check and the write makes the walk fail instead of leading elsewhere.  A write goes to
a temporary file in the same directory, is fsynced and renamed over the target (a
rename replaces a symlink or hard link at the target, it never writes through it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from passepartout.security.paths import PathDenied, PathRules, denial

MAX_READ_BYTES = 2_000_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


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
        if err.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FileToolError(
                f"{path} changed into a symlink while it was being opened", path=str(path)
            ) from None
        raise
    return fd


def _checked(raw: str, rules: PathRules, *, writing: bool) -> Path:
    resolved, reason = denial(raw, rules, writing=writing)
    if reason is not None or resolved is None:
        raise FileToolError(f"refused: {reason}", path=raw)
    return resolved.path


def read_text(raw: str, rules: PathRules, *, max_bytes: int = MAX_READ_BYTES) -> str:
    """The text of the file at ``raw`` (UTF-8, undecodable bytes replaced)."""
    path = _checked(raw, rules, writing=False)
    try:
        dir_fd = _open_dir(path.parent, create=False)
    except FileNotFoundError:
        raise FileToolError(f"{raw}: no such file", path=raw) from None
    try:
        fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        raise FileToolError(f"{raw}: no such file", path=raw) from None
    except OSError as err:
        raise FileToolError(f"{raw}: {err.strerror}", path=raw) from None
    finally:
        os.close(dir_fd)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise FileToolError(f"{raw} is not a regular file", path=raw)
        data = handle.read(max_bytes + 1)
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
