"""A command's result says when it used the sandbox's private directories.

Inside the sandbox ``/tmp``, ``/dev/shm`` and ``/run`` (``/var/run``, the runtime
directory) are fresh and private: a command may write there and succeed, and the file
is gone when the command ends.  A result that only says "exit code 0" then tells the
person (and the model) that a file exists that nobody can find.  This module finds the
paths of a command line that lie in those places (outside the workspace, which is the
real one even when it sits under ``/tmp``), and ``mktemp`` (which writes in ``/tmp``),
and words the note the shell result carries.
"""

from __future__ import annotations

import os
import re
from pathlib import PurePosixPath

PRIVATE_DIRS = ("/tmp", "/dev/shm", "/run", "/var/run")
# A path in the line: after a start, a blank, a quote, "=", ">" or "<", up to a blank,
# a quote or a shell operator.
_PATH = re.compile(r"""(?:^|(?<=[\s'"=<>:]))(/[^\s'";|&<>()`]*)""")
_MKTEMP = re.compile(r"(?:^|[\s;|&(`])mktemp(?=$|[\s;|&)`])")
SHOWN = 3


def private_dirs() -> tuple[str, ...]:
    """The directories a sandboxed command writes into and loses."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return (*PRIVATE_DIRS, runtime) if runtime and runtime.startswith("/") else PRIVATE_DIRS


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def private_paths(cmd: str, workspace: str | os.PathLike[str]) -> list[str]:
    """The paths of ``cmd`` that lie in the sandbox's private directories."""
    ws = str(workspace)
    found: list[str] = []
    for match in _PATH.finditer(cmd):
        raw = match.group(1).rstrip(".,")
        path = str(PurePosixPath(raw)) if raw else raw
        if _inside(path, ws) or not any(_inside(path, d) for d in private_dirs()):
            continue
        if path not in found:
            found.append(path)
    if _MKTEMP.search(cmd) and "/tmp" not in found:
        found.append("/tmp (mktemp)")
    return found


def private_note(cmd: str, workspace: str | os.PathLike[str]) -> str | None:
    """The note a shell result carries when ``cmd`` used the private directories."""
    paths = private_paths(cmd, workspace)
    if not paths:
        return None
    shown = ", ".join(paths[:SHOWN]) + (f" and {len(paths) - SHOWN} more"
                                        if len(paths) > SHOWN else "")
    return (f"[note] This command used {shown}: inside the sandbox /tmp, /dev/shm and "
            "/run are private and emptied when the command ends, so nothing written "
            "there is on the person's disk. To keep a file, write it under the "
            f"workspace ({workspace}).")
