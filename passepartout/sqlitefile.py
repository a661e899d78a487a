"""An SQLite file of the agent's home that is not a database any more (a disk error,
a file copied half-way) is set aside and a new one started, so the agent keeps
working; the old file is kept beside it, renamed, for the person to look at.

Only SQLite's own verdicts count (``SQLITE_NOTADB``, ``SQLITE_CORRUPT``): a locked
file or one this user may not open is an error as before, never moved.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

UNREADABLE = ".unreadable-"  # what a set-aside file's name holds
_CORRUPT = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def open_database(path: Path, setup: Callable[[sqlite3.Connection], None], what: str,
                  **connect: Any) -> sqlite3.Connection:
    """``path`` opened and ``setup`` run on it; when SQLite says the file is not a
    database, it is set aside (with its WAL) and a new one is opened in its place."""
    try:
        return _open(path, setup, connect)
    except sqlite3.DatabaseError as err:
        if getattr(err, "sqlite_errorname", "") not in _CORRUPT:
            raise
        aside = set_aside(path)
        log.error("%s: %s is not a readable database (%s); it is kept as %s and a new "
                  "one is started", what, path, err, aside.name)
    return _open(path, setup, connect)


def _open(path: Path, setup: Callable[[sqlite3.Connection], None],
          connect: dict[str, Any]) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), **connect)
    try:
        setup(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def set_aside(path: Path) -> Path:
    """Rename ``path`` (and its ``-wal``/``-shm`` files) to ``NAME.unreadable-STAMP``."""
    stamp = dt.datetime.now().strftime("%Y%m%dT%H%M%S")
    aside = path.with_name(f"{path.name}{UNREADABLE}{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}{UNREADABLE}{stamp}-{n}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        extra = path.with_name(path.name + suffix)
        if extra.exists():
            os.replace(extra, aside.with_name(aside.name + suffix))
    return aside


def set_aside_files(home: Path) -> list[Path]:
    """The databases set aside in ``home`` (what ``passepartout doctor`` lists)."""
    try:
        return sorted(p for p in home.iterdir()
                      if UNREADABLE in p.name and not p.name.endswith(("-wal", "-shm")))
    except OSError:
        return []
