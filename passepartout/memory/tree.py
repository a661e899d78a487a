"""The head state as tables: the ``idx`` row per node and its FTS5 row.

``idx`` caches the tree named by ``meta.head`` (id -> parent, position, node
hash) so that lookups need no tree walk. Writes go through here: they update
the rows, rewrite the changed path of the Merkle tree up to a new root, and
move the head; a rollback diffs two trees and touches only the rows that
differ. Callers hold the store's lock and an open transaction.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from passepartout.memory.merkle import (
    content_key,
    hash_object,
    iter_tree,
    map_build,
    map_diff,
    map_update,
    node_object,
    root_object,
)
from passepartout.memory.nodes import ROOT_ID, MemoryNode, content_fields, node_from_fields
from passepartout.memory.schema import ObjectTable
from passepartout.memory.search import FTS_LAYOUT, fts_delete, fts_rows, fts_write
from passepartout.sqlparts import in_parts

Pending = dict[str, dict[str, str | None]]
ROW_COLUMNS = "rowid, id, parent, pos, hash"
_SAVE = (
    "INSERT INTO objects(hash, data) VALUES (?, ?) ON CONFLICT(hash) DO UPDATE"
    " SET data = excluded.data WHERE objects.data IS NOT excluded.data"
)


class _Buffered:
    """Objects hashed in memory and written in one ``executemany``."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, bytes]] = []

    def load(self, h: str) -> dict[str, Any]:
        raise KeyError(h)  # a fresh subtree only builds maps, it never reads one

    def save(self, obj: Mapping[str, Any]) -> str:
        h, data = hash_object(obj)
        self.rows.append((h, data))
        return h


@dataclass(frozen=True)
class Row:
    rowid: int
    id: str
    parent: str
    pos: int
    hash: str


class HeadTree:
    """Row-level operations on the head state (no locking, no transactions)."""

    def __init__(self, conn: sqlite3.Connection, io: ObjectTable) -> None:
        self.conn = conn
        self.io = io
        # Nodes added in the open transaction, written to meta once per batch.
        self.count_delta = 0
        # Objects of fresh subtrees, written sorted in one go before anything reads objects
        # (hash keys are random: sorted inserts keep the B-tree writes local).
        self.deferred: list[tuple[str, bytes]] = []

    def flush_objects(self) -> None:
        if self.deferred:
            self.deferred.sort()
            self.conn.executemany(_SAVE, self.deferred)
            self.io.written += len(self.deferred)
            self.deferred = []

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def head(self) -> str:
        head = self.meta("head")
        if head is None:
            raise RuntimeError("memory store has no head state")
        return head

    def node_count(self) -> int:
        return int(self.meta("count") or 0) + self.count_delta

    def set_count(self, n: int) -> None:
        self.set_meta("count", str(n))
        self.count_delta = 0

    def row(self, node_id: str) -> Row | None:
        r = self.conn.execute(
            f"SELECT {ROW_COLUMNS} FROM idx WHERE id = ?", (node_id,)
        ).fetchone()
        return Row(*r) if r else None

    def node(self, row: Row) -> MemoryNode:
        return node_from_fields(self.io.load(row.hash), row.parent or None)

    def put_one(
        self, node: MemoryNode, pending: Pending, now: float, changed: list[tuple[str, str]]
    ) -> MemoryNode:
        pid = node.parent or ROOT_ID
        if pid != ROOT_ID and pid not in pending and self.row(pid) is None:
            raise KeyError(f"parent {pid!r} of {node.id!r} is not in memory")
        old = self.row(node.id)
        if old is not None and old.parent != pid:
            a = pid
            while a != ROOT_ID:
                if a == node.id:
                    raise ValueError(f"moving {node.id!r} under {pid!r} would make a cycle")
                up = self.row(a)
                a = up.parent if up else ROOT_ID
        old_obj = self.io.load(old.hash) if old else None
        pos = node.position
        if pos is None:
            pos = old.pos if old is not None and old.parent == pid else self.next_pos(pid)
        cand = replace(
            node,
            parent=pid or None,
            position=pos,
            created=node.created or (old_obj["created"] if old_obj else now),
            updated=node.updated or (old_obj["updated"] if old_obj else now),
        )
        if old_obj is not None and old is not None and old.parent == pid:
            same = content_fields(cand) == {k: old_obj[k] for k in old_obj if k not in ("k", "ch")}
            if same:
                return cand
        if not node.updated:
            cand = replace(cand, updated=now)
        h = self.io.save(node_object(cand, old_obj["ch"] if old_obj else None))
        ckey = content_key(cand)
        if old is not None:
            self.conn.execute(
                "UPDATE idx SET parent = ?, pos = ?, hash = ?, ckey = ? WHERE rowid = ?",
                (pid, pos, h, ckey, old.rowid),
            )
            rowid = old.rowid
            if old.parent != pid:
                pending.setdefault(old.parent, {})[node.id] = None
        else:
            cur = self.conn.execute(
                "INSERT INTO idx(id, parent, pos, hash, ckey) VALUES (?, ?, ?, ?, ?)",
                (node.id, pid, pos, h, ckey),
            )
            rowid = int(cur.lastrowid or 0)
            self.count_delta += 1
        self.fts_set(rowid, cand, new=old is None)
        pending.setdefault(pid, {})[node.id] = h
        changed.append((ckey, cand.text()))
        return cand

    def insert_fresh(
        self, nodes: list[MemoryNode], pending: Pending, now: float, changed: list[tuple[str, str]]
    ) -> bool:
        """Insert a subtree none of whose ids is in memory yet, bottom-up in one pass.

        Gives the objects, rows and hashes that ``put_one`` for each node then
        ``propagate`` would (the trie is a function of its entries), without a
        query or a rewritten parent per node. False, with nothing written, when
        the subtree does not qualify (an id already present or repeated, a
        position left to the store, a parent outside the subtree): the caller
        then takes the node-by-node path.
        """
        top = nodes[0]
        pid = top.parent or ROOT_ID
        ids = [n.id for n in nodes]
        inside = set(ids)
        if len(inside) != len(ids) or pid in inside or (pid != ROOT_ID and self.row(pid) is None):
            return False
        if any(n.position is None or (n is not top and n.parent not in inside) for n in nodes):
            return False
        for part, marks in in_parts(ids):
            query = f"SELECT 1 FROM idx WHERE id IN ({marks}) LIMIT 1"
            if self.conn.execute(query, part).fetchone():
                return False
        buf = _Buffered()
        kids: dict[str, dict[str, str]] = {}
        rows: list[tuple[MemoryNode, str, str]] = []
        for node in reversed(nodes):  # children come after their parents in ``nodes``
            parent = pid if node is top else (node.parent or ROOT_ID)
            # The object ``put_one`` would store for ``node`` (no copy of the node made).
            obj = content_fields(node)
            obj["created"] = node.created or now
            obj["updated"] = node.updated or now
            obj["k"] = "node"
            obj["ch"], _n = map_build(buf, kids.pop(node.id, {}))
            h = buf.save(obj)
            kids.setdefault(parent, {})[node.id] = h
            rows.append((node, parent, h))
        self.deferred += buf.rows
        # The transaction holds the write lock: rowids after the largest are free.
        last = int(self.conn.execute("SELECT coalesce(max(rowid), 0) FROM idx").fetchone()[0])
        idx, fts = [], []
        for rowid, (node, parent, h) in enumerate(reversed(rows), last + 1):
            ckey = content_key(node)
            idx.append((rowid, node.id, parent, node.position, h, ckey))
            fts += fts_rows(rowid, node.title, node.body)
            changed.append((ckey, node.text()))
        self.conn.executemany(
            "INSERT INTO idx(rowid, id, parent, pos, hash, ckey) VALUES (?, ?, ?, ?, ?, ?)", idx
        )
        fts_write(self.conn, fts)
        self.count_delta += len(rows)
        pending.setdefault(pid, {})[top.id] = kids[pid][top.id]
        return True

    def replace_subtree(
        self, nodes: list[MemoryNode], pending: Pending, now: float, changed: list[tuple[str, str]]
    ) -> int:
        """Make the subtree at ``nodes[0]`` exactly ``nodes``; returns how many went."""
        before = self.row(nodes[0].id)
        if before is None and self.insert_fresh(nodes, pending, now, changed):
            return 0
        self.flush_objects()
        old_ids = {r.id for r in self.subtree_rows(before)} if before else set()
        for node in nodes:
            self.put_one(node, pending, now, changed)
        removed = 0
        for stale in old_ids - {n.id for n in nodes}:
            row = self.row(stale)
            if row is None:  # already gone with a stale ancestor
                continue
            rows = self.subtree_rows(row)
            self.remove_rows(rows)
            removed += len(rows)
            pending.setdefault(row.parent, {})[stale] = None
        return removed

    def next_pos(self, parent: str) -> int:
        r = self.conn.execute("SELECT max(pos) FROM idx WHERE parent = ?", (parent,)).fetchone()
        return 0 if r[0] is None else int(r[0]) + 1

    def fts_set(self, rowid: int, node: MemoryNode, new: bool = False) -> None:
        if not new:
            fts_delete(self.conn, rowid)
        fts_write(self.conn, fts_rows(rowid, node.title, node.body))

    def rebuild_fts(self) -> None:
        """Index every node's passages again (a store from before ``FTS_LAYOUT``)."""
        self.conn.execute("DELETE FROM fts")
        for row in self.conn.execute(f"SELECT {ROW_COLUMNS} FROM idx").fetchall():
            node = self.node(Row(*row))
            fts_write(self.conn, fts_rows(row[0], node.title, node.body))
        self.set_meta("fts", FTS_LAYOUT)

    def depth(self, node_id: str, cache: dict[str, int]) -> int:
        if node_id == ROOT_ID:
            return 0
        if node_id not in cache:
            row = self.row(node_id)
            cache[node_id] = 1 + (self.depth(row.parent, cache) if row else 0)
        return cache[node_id]

    def propagate(self, pending: Pending) -> None:
        """Rewrite the changed maps and their ancestors, deepest first, up to the root."""
        self.flush_objects()
        if self.count_delta:
            self.set_count(self.node_count())
        cache: dict[str, int] = {}
        heap = [(-self.depth(p, cache), p) for p in pending]
        heapq.heapify(heap)
        queued = set(pending)
        while heap:
            _d, p = heapq.heappop(heap)
            queued.discard(p)
            updates = pending.pop(p)
            if p == ROOT_ID:
                ch, _n = map_update(self.io, self.io.load(self.head())["ch"], updates)
                self.set_meta("head", self.io.save(root_object(ch)))
                continue
            row = self.row(p)
            if row is None:  # deleted earlier in this transaction
                continue
            obj = self.io.load(row.hash)
            obj["ch"], _n = map_update(self.io, obj["ch"], updates)
            h = self.io.save(obj)
            self.conn.execute("UPDATE idx SET hash = ? WHERE rowid = ?", (h, row.rowid))
            pending.setdefault(row.parent, {})[p] = h
            if row.parent not in queued:
                queued.add(row.parent)
                heapq.heappush(heap, (-self.depth(row.parent, cache), row.parent))

    def subtree_rows(self, row: Row) -> list[Row]:
        out, stack = [row], [row.id]
        while stack:
            kids = self.conn.execute(
                f"SELECT {ROW_COLUMNS} FROM idx WHERE parent = ?", (stack.pop(),)
            ).fetchall()
            for k in kids:
                out.append(Row(*k))
                stack.append(k[1])
        return out

    def remove_rows(self, rows: list[Row]) -> None:
        for r in rows:
            fts_delete(self.conn, r.rowid)
            self.conn.execute("DELETE FROM idx WHERE rowid = ?", (r.rowid,))
        self.set_count(self.node_count() - len(rows))

    def move_head(self, target: str) -> None:
        """Point the head at ``target``, updating the index only where trees differ."""
        head = self.head()
        if head == target:
            return
        removes: list[str] = []
        upserts: list[tuple[str, str, str, dict[str, Any]]] = []
        old_top, new_top = self.io.load(head)["ch"], self.io.load(target)["ch"]
        self.diff(ROOT_ID, old_top, new_top, removes, upserts)
        count = self.node_count()
        for node_id in removes:
            row = self.row(node_id)
            if row is not None:
                fts_delete(self.conn, row.rowid)
                self.conn.execute("DELETE FROM idx WHERE rowid = ?", (row.rowid,))
                count -= 1
        for node_id, parent, h, obj in upserts:
            count += self.index_node(node_id, parent, h, obj)
        self.set_count(count)
        self.set_meta("head", target)

    def diff(
        self,
        parent: str,
        a: str | None,
        b: str | None,
        removes: list[str],
        upserts: list[tuple[str, str, str, dict[str, Any]]],
    ) -> None:
        for cid, (old, new) in map_diff(self.io, a, b).items():
            old_obj = self.io.load(old) if old is not None else None
            if new is None:
                removes.append(cid)
                self.diff(cid, old_obj["ch"] if old_obj else None, None, removes, upserts)
                continue
            new_obj = self.io.load(new)
            upserts.append((cid, parent, new, new_obj))
            self.diff(cid, old_obj["ch"] if old_obj else None, new_obj["ch"], removes, upserts)

    def index_node(self, node_id: str, parent: str, h: str, obj: dict[str, Any]) -> int:
        """Write one idx + fts row for a tree node; 1 if it was new, else 0."""
        node = node_from_fields(obj, parent or None)
        row = self.row(node_id)
        if row is not None:
            self.conn.execute(
                "UPDATE idx SET parent = ?, pos = ?, hash = ?, ckey = ? WHERE rowid = ?",
                (parent, obj["pos"], h, content_key(node), row.rowid),
            )
            self.fts_set(row.rowid, node)
            return 0
        cur = self.conn.execute(
            "INSERT INTO idx(id, parent, pos, hash, ckey) VALUES (?, ?, ?, ?, ?)",
            (node_id, parent, obj["pos"], h, content_key(node)),
        )
        self.fts_set(int(cur.lastrowid or 0), node, new=True)
        return 1

    def index_mismatches(self, nodes: dict[str, tuple[str, str]]) -> list[str]:
        rows = {
            r[0]: (r[1], r[2])
            for r in self.conn.execute("SELECT id, parent, hash FROM idx").fetchall()
        }
        out = [f"{i!r} missing from index" for i in nodes if i not in rows]
        out += [f"{i!r} in index but not in tree" for i in rows if i not in nodes]
        out += [f"{i!r} differs from tree" for i in nodes if i in rows and rows[i] != nodes[i]]
        if str(len(nodes)) != self.meta("count"):
            out.append(f"node count {self.meta('count')} but tree holds {len(nodes)}")
        return out

    def rebuild_index(self, root: str) -> None:
        self.conn.execute("DELETE FROM idx")
        self.conn.execute("DELETE FROM fts")
        n = 0
        for parent, h, obj in iter_tree(self.io, root):
            n += self.index_node(obj["id"], parent, h, obj)
        self.set_count(n)
        self.set_meta("head", root)
        self.set_meta("fts", FTS_LAYOUT)
