"""SQLite schema, connection settings and the object table's verified I/O."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passepartout.memory.merkle import hash_object, object_hash
from passepartout.memory.nodes import decode
from passepartout.sqlitefile import open_database

SCHEMA_VERSION = "1"
DB_NAME = "memory.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (hash TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idx (
    id TEXT NOT NULL UNIQUE,
    parent TEXT NOT NULL,
    pos INTEGER NOT NULL,
    hash TEXT NOT NULL,
    ckey TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_parent ON idx(parent, pos, id);
CREATE TABLE IF NOT EXISTS snapshots (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    root TEXT NOT NULL,
    label TEXT NOT NULL,
    created REAL NOT NULL,
    nodes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, body);
CREATE TABLE IF NOT EXISTS embeddings (ckey TEXT PRIMARY KEY, vec BLOB NOT NULL) WITHOUT ROWID;
"""


class CorruptObjectError(Exception):
    """An object row is missing, or its bytes do not hash to its key."""

    def __init__(self, h: str, reason: str) -> None:
        super().__init__(f"object {h[:12]}: {reason}")
        self.hash = h
        self.reason = reason


def default_home() -> Path:
    """PASSEPARTOUT_HOME, else $XDG_STATE_HOME/passepartout, else ~/.local/state/passepartout."""
    home = os.environ.get("PASSEPARTOUT_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg) / "passepartout"


def default_path() -> Path:
    return default_home() / DB_NAME


def connect(path: Path) -> sqlite3.Connection:
    """Open the database durable: WAL, every commit fsynced before it returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if str(path) == ":memory:":
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        _setup(conn)
        return conn
    # A file that is not a database at all is set aside (the memex import fills the
    # new one again); a database with bad rows is the verifier's, below.
    return open_database(path, _setup, "memory", isolation_level=None,
                         check_same_thread=False, timeout=30)


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=OFF")
    # Objects are keyed by random hashes: a larger page cache keeps big stores off the disk.
    conn.execute("PRAGMA cache_size=-65536")
    conn.executescript(SCHEMA)
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
    )


class ObjectTable:
    """The content-addressed object table; every load re-checks the hash."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.written = 0

    def load(self, h: str) -> dict[str, Any]:
        data = self._raw(h)
        if data is None:
            raise CorruptObjectError(h, "missing")
        if object_hash(data) != h:
            raise CorruptObjectError(h, "content does not match its hash")
        try:
            return decode(data)
        except ValueError as e:  # includes JSON and UTF-8 errors
            raise CorruptObjectError(h, f"undecodable: {e}") from e

    def _raw(self, h: str) -> bytes | None:
        row = self.conn.execute("SELECT data FROM objects WHERE hash = ?", (h,)).fetchone()
        return None if row is None else bytes(row[0])

    def save(self, obj: Mapping[str, Any]) -> str:
        h, data = hash_object(obj)
        # Rewriting a row whose bytes differ heals a corrupted copy of the same object.
        self.conn.execute(
            "INSERT INTO objects(hash, data) VALUES (?, ?) ON CONFLICT(hash) DO UPDATE"
            " SET data = excluded.data WHERE objects.data IS NOT excluded.data",
            (h, data),
        )
        self.written += 1
        return h


class BulkObjects(ObjectTable):
    """All objects read in one table scan: verifying a big tree without a
    query per object (the bytes are still re-hashed on every load)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._data = {h: bytes(d) for h, d in conn.execute("SELECT hash, data FROM objects")}

    def _raw(self, h: str) -> bytes | None:
        return self._data.get(h)
