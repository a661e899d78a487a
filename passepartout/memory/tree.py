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
from dataclasses import dataclass, replace
from typing import Any

from passepartout.memory.merkle import (
    content_key,
    iter_tree,
    map_diff,
    map_update,
    node_object,
    root_object,
)
from passepartout.memory.nodes import ROOT_ID, MemoryNode, content_fields, node_from_fields
from passepartout.memory.schema import ObjectTable

Pending = dict[str, dict[str, str | None]]
ROW_COLUMNS = "rowid, id, parent, pos, hash"


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

    def next_pos(self, parent: str) -> int:
        r = self.conn.execute("SELECT max(pos) FROM idx WHERE parent = ?", (parent,)).fetchone()
        return 0 if r[0] is None else int(r[0]) + 1

    def fts_set(self, rowid: int, node: MemoryNode, new: bool = False) -> None:
        if not new:
            self.conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        self.conn.execute(
            "INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)", (rowid, node.title, node.body)
        )

    def depth(self, node_id: str, cache: dict[str, int]) -> int:
        if node_id == ROOT_ID:
            return 0
        if node_id not in cache:
            row = self.row(node_id)
            cache[node_id] = 1 + (self.depth(row.parent, cache) if row else 0)
        return cache[node_id]

    def propagate(self, pending: Pending) -> None:
        """Rewrite the changed maps and their ancestors, deepest first, up to the root."""
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
            self.conn.execute("DELETE FROM fts WHERE rowid = ?", (r.rowid,))
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
                self.conn.execute("DELETE FROM fts WHERE rowid = ?", (row.rowid,))
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
