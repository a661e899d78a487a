"""The cost ledger (seed 000's cost tracker): one row per model call, in SQLite.

Each row says which model and provider answered, the tokens in, out and read from the
prompt cache, the cost in USD from litellm's price map, the tier, the origin (chat,
cron, hook, heartbeat), the session and the org heading the call served.  The file
lives under PASSEPARTOUT_HOME, so totals survive restarts.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.sqlitefile import open_database
from passepartout.sqlparts import in_parts

log = logging.getLogger(__name__)

LEDGER_FILE = "ledger.sqlite"
# Seconds a reader waits for the bookings on their way (a stream litellm is closing).
SETTLE_WAIT = 5.0
GROUPS = ("session", "provider", "model", "origin", "heading", "tier")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    session TEXT,
    model TEXT NOT NULL,
    provider TEXT NOT NULL,
    tier TEXT,
    origin TEXT,
    heading TEXT,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    tokens_cached INTEGER NOT NULL,
    cost REAL NOT NULL,
    estimated INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS calls_session ON calls(session);
CREATE INDEX IF NOT EXISTS calls_heading ON calls(heading);
"""


@dataclass(frozen=True)
class Call:
    """One booked model call."""

    model: str
    provider: str
    tokens_in: int
    tokens_out: int
    tokens_cached: int = 0
    cost: float = 0.0
    tier: str = ""
    origin: str = "chat"
    session: str | None = None
    heading: str | None = None
    estimated: bool = False  # token counts were estimated here, not reported
    ts: float = field(default_factory=time.time)


@dataclass(frozen=True)
class Total:
    """A group's sums."""

    key: str
    calls: int
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    cost: float


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(_SCHEMA)


class Ledger:
    """The ledger file; safe to use from several threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = open_database(path, _setup, "the ledger of model calls",
                                   check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        # Calls whose booking is on its way (a stream shown before litellm closed it).
        self._pending = 0
        self._settled = threading.Condition()

    @classmethod
    def in_home(cls, home: Path) -> Ledger:
        return cls(home / LEDGER_FILE)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def expect(self) -> None:
        """A call will be booked soon: readers wait for it (:meth:`settle` when it is)."""
        with self._settled:
            self._pending += 1

    def settle(self) -> None:
        with self._settled:
            self._pending -= 1
            self._settled.notify_all()

    def wait_settled(self, timeout: float = SETTLE_WAIT) -> bool:
        """Wait until every expected call is booked; False when ``timeout`` ran out."""
        with self._settled:
            return self._settled.wait_for(lambda: self._pending <= 0, timeout)

    def record(self, call: Call) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT INTO calls (ts, session, model, provider, tier, origin, heading,"
                " tokens_in, tokens_out, tokens_cached, cost, estimated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (call.ts, call.session, call.model, call.provider, call.tier, call.origin,
                 call.heading, call.tokens_in, call.tokens_out, call.tokens_cached,
                 call.cost, int(call.estimated)),
            )
        log.debug("booked %s: %d in, %d out, $%.6f", call.model, call.tokens_in,
                  call.tokens_out, call.cost)

    def calls(self, limit: int = 1000) -> list[Call]:
        self.wait_settled()
        with self._lock:
            rows = self._conn.execute(
                "SELECT model, provider, tokens_in, tokens_out, tokens_cached, cost, tier,"
                " origin, session, heading, estimated, ts FROM calls ORDER BY id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [Call(model=r[0], provider=r[1], tokens_in=r[2], tokens_out=r[3], tokens_cached=r[4],
                     cost=r[5], tier=r[6], origin=r[7], session=r[8], heading=r[9],
                     estimated=bool(r[10]), ts=r[11]) for r in rows]

    def totals(self, by: str) -> list[Total]:
        """Sums per ``by`` (one of :data:`GROUPS`), most expensive first."""
        if by not in GROUPS:
            raise ValueError(f"cannot group the ledger by {by!r}; choose one of {GROUPS}")
        self.wait_settled()
        with self._lock:
            rows = self._conn.execute(
                f"SELECT COALESCE({by}, ''), COUNT(*), SUM(tokens_in), SUM(tokens_out),"
                f" SUM(tokens_cached), SUM(cost) FROM calls GROUP BY {by}"
                " ORDER BY SUM(cost) DESC, COUNT(*) DESC"
            ).fetchall()
        return [Total(*r) for r in rows]

    def total(self) -> Total:
        self.wait_settled()
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),"
                " COALESCE(SUM(tokens_cached), 0), COALESCE(SUM(cost), 0.0) FROM calls"
            ).fetchone()
        return Total("all", *row)

    def sums(self, *, session: str | None = None, since: float | None = None) -> Total:
        """Sums of the calls of one session, or since a time (seconds since the epoch)."""
        where: list[str] = []
        params: list[str | float] = []
        if session is not None:
            where.append("session = ?")
            params.append(session)
        if since is not None:
            where.append("ts >= ?")
            params.append(since)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        self.wait_settled()
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),"
                " COALESCE(SUM(tokens_cached), 0), COALESCE(SUM(cost), 0.0) FROM calls"
                + clause, params).fetchone()
        return Total(session or "since", *row)

    def usage(self, session: str | None) -> dict[str, dict[str, Any]]:
        """What the chat's header line shows: this session's sums and today's."""
        midnight = dt.datetime.now().astimezone().replace(
            hour=0, minute=0, second=0, microsecond=0).timestamp()
        parts = {"today": self.sums(since=midnight)}
        if session:
            parts["session"] = self.sums(session=session)
        out: dict[str, dict[str, Any]] = {
            name: {"calls": t.calls, "tokens-in": t.tokens_in, "tokens-out": t.tokens_out,
                   "cost": round(t.cost, 6)} for name, t in parts.items()}
        last = self.last_call(session) if session else None
        if last is not None:  # what the session's context holds now, and for which model
            out["last"] = {"model": last[0], "tokens-in": last[1]}
        return out

    def last_call(self, session: str) -> tuple[str, int] | None:
        """The model and input tokens of the session's latest call."""
        self.wait_settled()
        with self._lock:
            row = self._conn.execute(
                "SELECT model, tokens_in FROM calls WHERE session = ? ORDER BY id DESC LIMIT 1",
                (session,)).fetchone()
        return None if row is None else (str(row[0]), int(row[1]))

    def session_total(self, session: str) -> float:
        """USD spent in one session (seed 000's cost-session-total)."""
        self.wait_settled()
        with self._lock:
            row = self._conn.execute(
                "SELECT COALESCE(SUM(cost), 0.0) FROM calls WHERE session = ?", (session,)
            ).fetchone()
        return float(row[0])

    def headings_total(self, headings: Iterable[str]) -> float:
        """USD spent on calls that served any of these org headings."""
        ids = list(dict.fromkeys(headings))
        self.wait_settled()
        total = 0.0
        with self._lock:
            for part, marks in in_parts(ids):
                row = self._conn.execute(
                    f"SELECT COALESCE(SUM(cost), 0.0) FROM calls WHERE heading IN ({marks})",
                    part,
                ).fetchone()
                total += float(row[0])
        return total
