"""Chat sessions: each conversation's messages, persisted so that a chat resumes after
a restart of the server or of Emacs.

Messages are kept in the chat-completions shape (``role``, ``content``, ``tool_calls``,
``tool_call_id``), one SQLite row each, under PASSEPARTOUT_HOME.  Jobs without a session
(cron, hooks) get an in-memory conversation that is not kept.
"""

from __future__ import annotations

import collections
import json
import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from passepartout.llm.translate import Message, history_plists
from passepartout.sqlitefile import open_database

log = logging.getLogger(__name__)

SESSIONS_FILE = "sessions.sqlite"
EPHEMERAL_KEEP = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ts REAL NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
"""


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    # WAL with NORMAL survives a crash of the process; only a power cut can lose the
    # last messages (a full fsync per message cost ~3 ms a turn here).
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(_SCHEMA)


class SessionStore:
    """Every session's messages; ``agent.services["sessions"]``."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._cache: dict[str, list[Message]] = {}
        self._ephemeral: collections.OrderedDict[str, list[Message]] = collections.OrderedDict()
        self._conn: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = open_database(path, _setup, "chat sessions",
                                       check_same_thread=False, isolation_level=None)

    @classmethod
    def in_home(cls, home: Path) -> SessionStore:
        return cls(home / SESSIONS_FILE)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- reading --------------------------------------------------------------------

    def messages(self, session: str, *, persistent: bool = True) -> list[Message]:
        """The session's messages (a copy of the list; the dicts are shared)."""
        with self._lock:
            return list(self._load(session, persistent))

    def history(self, session: str) -> list[dict[str, Any]]:
        """The session's history as plists for Emacs: ``(:role :user :content "...")``."""
        return history_plists(self.messages(session))

    def sessions(self) -> list[tuple[str, int, float]]:
        """Each persisted session: id, message count, time of its last message."""
        with self._lock:
            if self._conn is None:
                return []
            rows = self._conn.execute(
                "SELECT session, COUNT(*), MAX(ts) FROM messages GROUP BY session"
                " ORDER BY MAX(ts) DESC"
            ).fetchall()
        return [(str(r[0]), int(r[1]), float(r[2])) for r in rows]

    def since(self, ts: float) -> list[tuple[str, float, Message]]:
        """Every persisted message written after ``ts`` (epoch seconds): its session,
        its time and the message, oldest first (the scribe's new material)."""
        with self._lock:
            if self._conn is None:
                return []
            rows = self._conn.execute(
                "SELECT session, ts, message FROM messages WHERE ts > ? ORDER BY ts, seq",
                (ts,)).fetchall()
        found: list[tuple[str, float, Message]] = []
        for session, when, raw in rows:
            try:
                found.append((str(session), float(when), json.loads(raw)))
            except json.JSONDecodeError:
                log.warning("session %s: skipped an unreadable message", session)
        return found

    def _load(self, session: str, persistent: bool) -> list[Message]:
        if not persistent:
            found = self._ephemeral.setdefault(session, [])
            self._ephemeral.move_to_end(session)
            while len(self._ephemeral) > EPHEMERAL_KEEP:
                self._ephemeral.popitem(last=False)
            return found
        if session in self._cache:
            return self._cache[session]
        loaded: list[Message] = []
        if self._conn is not None:
            rows = self._conn.execute(
                "SELECT message FROM messages WHERE session = ? ORDER BY seq", (session,)
            ).fetchall()
            for (raw,) in rows:
                try:
                    loaded.append(json.loads(raw))
                except json.JSONDecodeError:
                    log.warning("session %s: skipped an unreadable message", session)
        self._cache[session] = loaded
        return loaded

    # -- writing --------------------------------------------------------------------

    def append(self, session: str, *messages: Message, persistent: bool = True) -> None:
        """Add messages to the session (written before the call returns)."""
        with self._lock:
            current = self._load(session, persistent)
            if persistent and self._conn is not None:
                now = time.time()
                rows = [(session, len(current) + i, now, json.dumps(m, ensure_ascii=False))
                        for i, m in enumerate(messages)]
                self._conn.executemany(
                    "INSERT INTO messages (session, seq, ts, message) VALUES (?, ?, ?, ?)", rows
                )
            current.extend(messages)

    def clear(self, session: str) -> None:
        with self._lock:
            self._cache.pop(session, None)
            self._ephemeral.pop(session, None)
            if self._conn is not None:
                self._conn.execute("DELETE FROM messages WHERE session = ?", (session,))
