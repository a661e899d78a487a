"""The memory store: org nodes in SQLite as a Merkle tree with snapshots.

State lives in three tables: ``objects`` (content-addressed, immutable),
``meta.head`` (the root hash of the current state) and ``idx`` (id -> parent,
position and current hash: a cache of the head tree for fast lookups, kept in
step inside the same transaction). Every public write is one transaction that
is committed with ``synchronous=FULL`` before the call returns: a write is
acknowledged exactly when its call returns.

One ``RLock`` serialises all calls, so the loop worker, the heartbeat and the
EPC threads can share a store. Vectors are written through a connection of their
own, outside that lock: a search never waits for the embedder's commit.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from passepartout.memory import cleanmark
from passepartout.memory.merkle import content_key, iter_tree, root_object
from passepartout.memory.nodes import ROOT_ID, MemoryNode, node_from_fields
from passepartout.memory.schema import (
    DB_NAME,
    BulkObjects,
    CorruptObjectError,
    ObjectTable,
    connect,
    default_path,
)
from passepartout.memory.search import FTS_LAYOUT, POOL, SPAN, SearchHit, fuse, snippet, text_hits
from passepartout.memory.tree import HeadTree, Pending, Row
from passepartout.memory.verify import VerifyReport, check_tree, reachable
from passepartout.sqlparts import in_parts

log = logging.getLogger(__name__)

DEFAULT_KEEP_SNAPSHOTS = 20
BULK_VERIFY = 2000  # nodes above which verify reads the object table in one scan
_MARK = "mark:"  # meta key prefix: a subtree's hash when synced, and its source's fingerprint


@dataclass(frozen=True)
class SnapshotInfo:
    seq: int
    root: str
    label: str
    created: float
    nodes: int


@dataclass(frozen=True)
class StoreStats:
    path: str
    head: str
    nodes: int
    objects: int
    snapshots: int
    embedded: int
    bytes_on_disk: int


# How vectors are stored: a node's bytes are one float32 vector per piece of its
# text, its title alone first (embeddings.py). Older stores kept one averaged vector
# a node, or ("pieces-1") pieces without the title alone: theirs are embedded again.
VECTORS = "pieces-2"


class SemanticSearch(Protocol):
    """What an embedding index offers the store (see ``embeddings.py``)."""

    def search(self, query: str, k: int, threshold: float | None) -> list[SearchHit] | None: ...


class MemoryStore:
    """Open with :meth:`open`; see the module docstring for the guarantees."""

    def __init__(self, conn: sqlite3.Connection, path: Path, keep_snapshots: int) -> None:
        if keep_snapshots < 1:
            raise ValueError("keep_snapshots must be at least 1")
        self.path = path
        self.keep_snapshots = keep_snapshots
        self.load_report: VerifyReport | None = None
        self._conn = conn
        self._io = ObjectTable(conn)
        self._tree = HeadTree(conn, self._io)
        self._lock = threading.RLock()
        self._listeners: list[Callable[[list[tuple[str, str]]], None]] = []
        self._semantic: SemanticSearch | None = None
        self._gc_allowed = True
        self._closed = False
        # The embedder's own connection (on disk) and the lock that guards it.
        self._vec_conn: sqlite3.Connection | None = None
        self._vec_lock = threading.Lock()
        self._vec_closed = False
        # Goes up whenever stored vectors are dropped (another model, a GC): an index
        # holding them in memory reads them again.
        self.vectors_epoch = 0
        # Whether this session may vouch for the file at close (see ``cleanmark``).
        self._vouched = False

    # ---- opening and closing -------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        keep_snapshots: int = DEFAULT_KEEP_SNAPSHOTS,
        verify: bool = True,
    ) -> MemoryStore:
        """Open (creating if needed) the store at ``path`` (a file or a directory).

        With ``verify`` the head state is re-hashed, unless the file is byte
        for byte as the last clean close left it (``cleanmark``); if a row is
        corrupt the store falls back to the newest snapshot that verifies, and
        ``load_report`` says what was found.
        """
        p = Path(path) if path is not None else default_path()
        if p.is_dir():
            p = p / DB_NAME
        on_disk = str(p) != ":memory:"
        clean_head = cleanmark.take(p) if on_disk else None  # used up by any open
        store = cls(connect(p), p, keep_snapshots)
        with store._txn():
            if store._tree.meta("head") is None:
                store._tree.set_meta("head", store._io.save(root_object(None)))
                store._tree.set_meta("count", "0")
                store._tree.set_meta("fts", FTS_LAYOUT)
            elif store._tree.meta("fts") != FTS_LAYOUT:  # indexed before passages
                store._tree.rebuild_fts()
        if verify and clean_head is not None and clean_head == store._tree.head():
            store.load_report = VerifyReport(clean_head, store._tree.node_count(), clean=True)
            store._vouched = True
        elif verify:
            store._recover()
            store._vouched = on_disk and not (store.load_report and store.load_report.lost_state)
        return store

    def save(self) -> None:
        """Make everything durable and compact (autosave and shutdown call this).

        Commits are already durable when each call returns; this checkpoints
        the WAL into the main file and collects unreachable objects when they
        have piled up.
        """
        with self._lock:
            self._check_open()
            if self._gc_allowed and self._io.written > max(1000, self._tree.node_count()):
                self.gc()
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            with self._vec_lock:
                if self._vec_conn is not None:
                    self._vec_conn.close()
                    self._vec_conn = None
                self._vec_closed = True
            self.save()
            head = self._tree.head()
            self._conn.close()
            self._closed = True
            if self._vouched:
                cleanmark.record(self.path, head)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reading ---------------------------------------------------------

    def root_hash(self) -> str:
        with self._lock:
            self._check_open()
            return self._tree.head()

    def get(self, node_id: str) -> MemoryNode | None:
        with self._lock:
            self._check_open()
            row = self._tree.row(node_id)
            return self._tree.node(row) if row else None

    def children(self, node_id: str | None = None) -> list[MemoryNode]:
        """Children of ``node_id`` in order (None: the top-level nodes)."""
        with self._lock:
            self._check_open()
            rows = self._conn.execute(
                "SELECT rowid, id, parent, pos, hash FROM idx WHERE parent = ? ORDER BY pos, id",
                (node_id or ROOT_ID,),
            ).fetchall()
            return [self._tree.node(Row(*r)) for r in rows]

    def top_ids(self) -> list[str]:
        """Ids of the top-level nodes (no node is loaded)."""
        with self._lock:
            self._check_open()
            rows = self._conn.execute("SELECT id FROM idx WHERE parent = ?", (ROOT_ID,))
            return [str(r[0]) for r in rows.fetchall()]

    def ancestors(self, node_id: str) -> list[MemoryNode]:
        """The chain from the top-level node down to ``node_id``'s parent."""
        with self._lock:
            out: list[MemoryNode] = []
            row = self._tree.row(node_id)
            while row is not None and row.parent != ROOT_ID:
                row = self._tree.row(row.parent)
                if row is not None:
                    out.append(self._tree.node(row))
            return out[::-1]

    def __len__(self) -> int:
        with self._lock:
            return self._tree.node_count()

    # ---- writing ---------------------------------------------------------

    def put(self, node: MemoryNode) -> MemoryNode:
        """Insert or replace one node; returns it as stored (position, times set)."""
        return self.put_many([node])[0]

    def put_many(self, nodes: Iterable[MemoryNode]) -> list[MemoryNode]:
        """Insert or replace nodes in one transaction (parents before children)."""
        changed: list[tuple[str, str]] = []
        out: list[MemoryNode] = []
        with self._txn():
            pending: Pending = {}
            now = time.time()
            for node in nodes:
                out.append(self._tree.put_one(node, pending, now, changed))
            self._tree.propagate(pending)
        self._notify(changed)
        return out

    def replace_subtree(self, nodes: list[MemoryNode]) -> int:
        """Make the subtree rooted at ``nodes[0]`` exactly ``nodes`` (one transaction).

        Nodes are put (unchanged ones cost nothing); descendants that are no
        longer listed are deleted. Returns how many nodes were removed.
        """
        if not nodes:
            return 0
        return self.sync_subtrees([nodes])

    def sync_subtrees(
        self,
        trees: list[list[MemoryNode]],
        remove: Iterable[str] = (),
        marks: dict[str, str] | None = None,
    ) -> int:
        """Replace each subtree of ``trees`` and delete each id of ``remove``, in
        one transaction; returns how many nodes went.

        ``marks`` maps a subtree's top id to a fingerprint of its source (an
        org file's digest): :meth:`subtree_mark` returns it for as long as
        that subtree stays exactly as this call leaves it.
        """
        changed: list[tuple[str, str]] = []
        removed = 0
        with self._txn():
            pending: Pending = {}
            now = time.time()
            for nodes in trees:
                if nodes:
                    removed += self._tree.replace_subtree(nodes, pending, now, changed)
            for node_id in remove:
                row = self._tree.row(node_id)
                if row is not None:
                    rows = self._tree.subtree_rows(row)
                    self._tree.remove_rows(rows)
                    removed += len(rows)
                    pending.setdefault(row.parent, {})[node_id] = None
                self._conn.execute("DELETE FROM meta WHERE key = ?", (_MARK + node_id,))
            self._tree.propagate(pending)
            for top, mark in (marks or {}).items():
                row = self._tree.row(top)
                if row is not None:
                    self._tree.set_meta(_MARK + top, f"{row.hash} {mark}")
        self._notify(changed)
        return removed

    def subtree_mark(self, node_id: str) -> str | None:
        """The mark :meth:`sync_subtrees` gave ``node_id``, if its subtree is unchanged since."""
        with self._lock:
            self._check_open()
            value = self._tree.meta(_MARK + node_id)
            row = self._tree.row(node_id)
            if value is None or row is None:
                return None
            h, _, mark = value.partition(" ")
            return mark if h == row.hash else None

    def count_subtree(self, node_id: str) -> int:
        """How many nodes ``node_id`` and its descendants hold (0 if absent)."""
        with self._lock:
            row = self._tree.row(node_id)
            return len(self._tree.subtree_rows(row)) if row else 0

    def delete(self, node_id: str) -> bool:
        """Remove a node and its whole subtree; False when it did not exist."""
        with self._txn():
            row = self._tree.row(node_id)
            if row is None:
                return False
            self._tree.remove_rows(self._tree.subtree_rows(row))
            self._tree.propagate({row.parent: {node_id: None}})
        return True

    # ---- snapshots -------------------------------------------------------

    def snapshot(self, label: str = "") -> SnapshotInfo:
        """Name the current state; only the newest ``keep_snapshots`` are kept."""
        with self._txn():
            head, now, count = self._tree.head(), time.time(), self._tree.node_count()
            cur = self._conn.execute(
                "INSERT INTO snapshots(root, label, created, nodes) VALUES (?, ?, ?, ?)",
                (head, label, now, count),
            )
            self._conn.execute(
                "DELETE FROM snapshots WHERE seq NOT IN"
                " (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)",
                (self.keep_snapshots,),
            )
            return SnapshotInfo(int(cur.lastrowid or 0), head, label, now, count)

    def snapshots(self) -> list[SnapshotInfo]:
        """Kept snapshots, newest first (index n is what ``rollback(n)`` restores)."""
        with self._lock:
            self._check_open()
            rows = self._conn.execute(
                "SELECT seq, root, label, created, nodes FROM snapshots ORDER BY seq DESC"
            ).fetchall()
            return [SnapshotInfo(*r) for r in rows]

    def rollback(self, n: int = 0) -> SnapshotInfo:
        """Restore the n-th newest snapshot exactly (0: the last one)."""
        with self._txn():
            snaps = self.snapshots()
            if not 0 <= n < len(snaps):
                raise ValueError(f"cannot roll back {n}: {len(snaps)} snapshot(s) kept")
            target = snaps[n]
            self._tree.move_head(target.root)
        log.info("memory rolled back to snapshot #%d (%s)", target.seq, target.root[:12])
        return target

    # ---- integrity and housekeeping ----------------------------------------

    def verify(self, snapshots: bool = True) -> VerifyReport:
        """Re-hash the head tree (and every kept snapshot) and check the index."""
        with self._lock:
            self._check_open()
            head = self._tree.head()
            # One table scan beats a query per object once the tree is large.
            io = BulkObjects(self._conn) if self._tree.node_count() > BULK_VERIFY else self._io
            problems, nodes, checked = check_tree(io, head)
            report = VerifyReport(head, len(nodes), checked, problems)
            if not problems:
                report.index_mismatches = self._tree.index_mismatches(nodes)
            if snapshots:
                seen: set[str] = set()
                for s in self.snapshots():
                    bad, _nodes, n = check_tree(io, s.root, seen)
                    report.objects += n
                    if bad:
                        report.snapshots_bad.append(s.seq)
            # Only a store that verifies gets a clean-close mark (see ``cleanmark``).
            self._vouched = report.ok and str(self.path) != ":memory:"
            return report

    def gc(self) -> int:
        """Delete objects no kept state reaches; returns how many went."""
        with self._txn():
            if not self._gc_allowed:
                return 0
            roots = [self._tree.head()] + [s.root for s in self.snapshots()]
            try:
                live = reachable(self._io, roots)
            except CorruptObjectError as e:  # never sweep without a trustworthy live set
                log.error("memory GC skipped, a kept state is damaged: %s", e)
                return 0
            self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS live(hash TEXT PRIMARY KEY)")
            self._conn.execute("DELETE FROM live")
            self._conn.executemany("INSERT INTO live VALUES (?)", ((h,) for h in live))
            cur = self._conn.execute(
                "DELETE FROM objects WHERE hash NOT IN (SELECT hash FROM live)"
            )
            dropped = self._conn.execute(
                "DELETE FROM embeddings WHERE ckey NOT IN (SELECT ckey FROM idx)").rowcount
            if dropped:
                self.vectors_epoch += 1
            self._conn.execute("DELETE FROM live")
            self._io.written = 0
            return int(cur.rowcount)

    def stats(self) -> StoreStats:
        with self._lock:
            self._check_open()
            q = self._conn.execute
            size = sum(
                f.stat().st_size
                for f in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
                if f.exists()
            )
            return StoreStats(
                str(self.path),
                self._tree.head(),
                self._tree.node_count(),
                q("SELECT count(*) FROM objects").fetchone()[0],
                q("SELECT count(*) FROM snapshots").fetchone()[0],
                q("SELECT count(*) FROM idx JOIN embeddings USING (ckey)").fetchone()[0],
                size,
            )

    # ---- search and embeddings hooks -----------------------------------------

    def search(self, query: str, k: int = 5, threshold: float | None = None) -> list[SearchHit]:
        """The ``k`` best nodes for ``query``: full text (FTS5, bm25) and, when an
        embedding index is attached and its model is loaded, vectors too, fused by
        their standard scores (see ``search.py``). ``threshold`` is a cosine cut for
        the vector side only, made after its scores are standardised over the whole
        pool. Every hit carries a snippet and its org file."""
        if k < 1:
            return []
        pool = max(k, POOL)
        text = self.text_search(query, pool)
        semantic = self._semantic
        vector = semantic.search(query, pool, None) if semantic is not None else None
        hits = text[:k] if vector is None else fuse(text, vector, k, threshold)
        return self._described(hits)

    def text_search(self, query: str, k: int = 5) -> list[SearchHit]:
        """Full-text matches alone (any word of ``query``), best bm25 first."""
        with self._lock:
            self._check_open()
            return text_hits(self._conn, query, k)

    def embedder_name(self) -> str | None:
        """The model the stored vectors come from (None before any)."""
        with self._lock:
            self._check_open()
            return self._tree.meta("embedder")

    def use_embedder(self, name: str) -> None:
        """Record which model the stored vectors come from; a different one than
        before, or vectors stored before one per piece (``VECTORS``), drops them
        all (they are recomputed in the background)."""
        with self._txn():
            if self._tree.meta("embedder") != name or self._tree.meta("vectors") != VECTORS:
                self._conn.execute("DELETE FROM embeddings")
                self.vectors_epoch += 1
                self._tree.set_meta("embedder", name)
                self._tree.set_meta("vectors", VECTORS)

    def _described(self, hits: list[SearchHit]) -> list[SearchHit]:
        """Fill in each hit's file, and a snippet for hits full text did not find."""
        out: list[SearchHit] = []
        with self._lock:
            self._check_open()
            for h in hits:
                row = self._tree.row(h.id)
                if row is None:  # deleted since the search
                    continue
                node = self._tree.node(row)
                shown = h.snippet or snippet(node.body or node.title)
                out.append(replace(h, snippet=shown, file=self._file_of(row, node)))
        return out

    def _file_of(self, row: Row, node: MemoryNode) -> str:
        """The org file a node lives in: its own source, else its nearest ancestor's."""
        seen = 0
        while node.source is None and row.parent != ROOT_ID and seen < 1000:
            parent = self._tree.row(row.parent)
            if parent is None:
                break
            row, node, seen = parent, self._tree.node(parent), seen + 1
        return node.source or ""

    def set_semantic(self, semantic: SemanticSearch | None) -> None:
        self._semantic = semantic

    def add_change_listener(self, fn: Callable[[list[tuple[str, str]]], None]) -> None:
        """``fn`` gets (content key, text) of changed nodes after each commit."""
        self._listeners.append(fn)

    def remove_change_listener(self, fn: Callable[[list[tuple[str, str]]], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def texts_without_vectors(self, limit: int = 1000) -> list[tuple[str, str]]:
        return self.backlog(0, limit)[1]

    def backlog(self, after: int, limit: int) -> tuple[int, list[tuple[str, str]]]:
        """Up to ``limit`` (content key, text) of nodes without a vector, in index
        order from past row ``after``, and the row to continue after: a walk over
        the whole backlog reads the index once."""
        with self._lock:
            self._check_open()
            rows = self._conn.execute(
                "SELECT rowid, id, parent, pos, hash FROM idx WHERE rowid > ? AND ckey NOT IN"
                " (SELECT ckey FROM embeddings) ORDER BY rowid LIMIT ?",
                (after, limit),
            ).fetchall()
            nodes = [self._tree.node(Row(*r)) for r in rows]
            last = int(rows[-1][0]) if rows else after
            return last, [(content_key(n), n.text()) for n in nodes]

    def count_without_vectors(self, limit: int) -> int:
        """How many current nodes have no vector yet, counting no further than ``limit``."""
        with self._lock:
            self._check_open()
            row = self._conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM idx WHERE ckey NOT IN"
                " (SELECT ckey FROM embeddings) LIMIT ?)",
                (limit,),
            ).fetchone()
            return int(row[0])

    def store_vectors(self, items: list[tuple[str, bytes]]) -> None:
        """Store (content key, vector bytes) in one transaction of the vectors'
        own connection: the store's lock is not held, so reads and searches go on
        while it commits (WAL lets readers past a writer)."""
        if str(self.path) == ":memory:":  # one connection is the whole database
            with self._txn():
                self._conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", items)
            return
        with self._vec_lock:
            if self._vec_closed:
                raise RuntimeError("memory store is closed")
            if self._vec_conn is None:
                self._vec_conn = sqlite3.connect(str(self.path), isolation_level=None,
                                                 check_same_thread=False, timeout=30)
                # Vectors are recomputed when lost: a power cut may cost the last
                # batches, never the file's consistency (WAL), and no fsync a batch.
                self._vec_conn.execute("PRAGMA synchronous=NORMAL")
            conn = self._vec_conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)", items)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def stored_vectors(self, after: str, limit: int) -> list[tuple[str, bytes]]:
        """Up to ``limit`` (content key, vector bytes) in key order past ``after``:
        a walk over every stored vector, a bounded part at a time."""
        with self._lock:
            self._check_open()
            rows = self._conn.execute(
                "SELECT ckey, vec FROM embeddings WHERE ckey > ? ORDER BY ckey LIMIT ?",
                (after, limit),
            ).fetchall()
            return [(str(r[0]), bytes(r[1])) for r in rows]

    def vectors_of(self, ckeys: list[str]) -> list[tuple[str, bytes]]:
        """(content key, vector bytes) of those of ``ckeys`` that have vectors."""
        out: list[tuple[str, bytes]] = []
        with self._lock:
            self._check_open()
            for part, marks in in_parts(ckeys):
                out += [(str(r[0]), bytes(r[1])) for r in self._conn.execute(
                    f"SELECT ckey, vec FROM embeddings WHERE ckey IN ({marks})", part)]
        return out

    def head_keys(self, part: int = 5000) -> tuple[str, list[tuple[str, str]]]:
        """The head's root hash and (id, content key) of every current node, read
        ``part`` rows at a time so that other calls get the lock in between. When
        the head moved meanwhile, the hash is the one before (no current state)."""
        rows: list[tuple[str, str]] = []
        after = 0
        with self._lock:
            self._check_open()
            root = self._tree.head()
        while True:
            with self._lock:
                self._check_open()
                got = self._conn.execute(
                    "SELECT rowid, id, ckey FROM idx WHERE rowid > ? ORDER BY rowid LIMIT ?",
                    (after, part)).fetchall()
                moved = self._tree.head() != root
            if moved:
                return root, rows  # read again by whoever compares it with the head
            if not got:
                return root, rows
            rows += [(str(r[1]), str(r[2])) for r in got]
            after = int(got[-1][0])

    def titles(self, ids: list[str]) -> dict[str, str]:
        """Id -> title of those of ``ids`` that are current nodes."""
        out: dict[str, str] = {}
        with self._lock:
            self._check_open()
            for part, marks in in_parts(ids):
                out.update(self._conn.execute(
                    "SELECT idx.id, fts.title FROM idx JOIN fts ON fts.rowid = idx.rowid * ?"
                    f" WHERE idx.id IN ({marks})", [SPAN, *part]))
        return out

    def import_memex(self, directory: str | Path) -> Any:
        """Import every org file under ``directory`` (see ``orgimport``)."""
        from passepartout.memory.orgimport import import_memex

        return import_memex(self, Path(directory))

    # ---- internals ----------------------------------------------------------

    @contextmanager
    def _txn(self) -> Iterator[None]:
        with self._lock:
            self._check_open()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                self._tree.count_delta = 0
                self._tree.deferred = []
                raise
            self._conn.execute("COMMIT")

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("memory store is closed")

    def _notify(self, changed: list[tuple[str, str]]) -> None:
        if not changed:
            return
        for fn in list(self._listeners):
            try:
                fn(changed)
            except Exception:  # a listener must never undo an acknowledged write
                log.exception("memory change listener failed")

    def _recover(self) -> None:
        """On open: verify the head; fall back to the newest verified snapshot."""
        report = self.verify(snapshots=False)
        self.load_report = report
        if report.ok:
            return
        with self._txn():
            if report.tree_ok:
                log.warning("memory index disagreed with the tree; rebuilt: %s", report.summary())
                self._tree.rebuild_index(report.root)
                return
            log.error("memory head state is corrupt: %s", report.summary())
            seen: set[str] = set()
            for snap in self.snapshots():
                if snap.root != report.root and not check_tree(self._io, snap.root, seen)[0]:
                    self._tree.rebuild_index(snap.root)
                    report.recovered_from = snap.seq
                    log.warning("memory restored from snapshot #%d", snap.seq)
                    return
            # Nothing verifies: start empty but keep the rows for forensics.
            self._gc_allowed = False
            report.lost_state = True
            self._tree.rebuild_index(self._io.save(root_object(None)))


def node_items(store: MemoryStore, root: str | None = None) -> Iterator[MemoryNode]:
    """Every node of a state (the head by default), parents before children."""
    for parent, _h, obj in iter_tree(store._io, root or store.root_hash()):
        yield node_from_fields(obj, parent or None)

