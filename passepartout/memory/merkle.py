"""Merkle tree of memory nodes over a content-addressed object store.

Three kinds of object, each stored under the SHA-256 of its canonical bytes:

- ``root``: the invisible top; its hash names a memory state.
- ``node``: a node's content fields plus ``ch``, the hash of its children map.
- ``leaf`` / ``br``: a children map (child id -> child node hash) kept as a
  hash array mapped trie, so that a node with 100,000 children still changes in
  O(log n) objects, not one 100,000-entry object. The trie's shape is a pure
  function of its set of entries (a bucket with at most ``LEAF_MAX`` entries is a
  leaf, otherwise it splits on the next hex digit of sha256(child id)), so equal
  trees always have equal hashes, whatever history produced them.

A change therefore rewrites only the path from the node to the root, and a
snapshot is just a root hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Protocol

from passepartout.memory.nodes import MemoryNode, canonical, content_fields

LEAF_MAX = 32
MAX_LEVEL = 63  # a sha256 hex digest has 64 digits


class ObjectIO(Protocol):
    """Where objects live: load by hash (verified), save returning the hash."""

    def load(self, h: str) -> dict[str, Any]: ...

    def save(self, obj: Mapping[str, Any]) -> str: ...


def object_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_object(obj: Mapping[str, Any]) -> tuple[str, bytes]:
    data = canonical(obj)
    return object_hash(data), data


def content_key(node: MemoryNode) -> str:
    """Key of a node's searchable text (embeddings are shared by equal texts)."""
    return hashlib.sha256(node.text().encode()).hexdigest()


def node_object(node: MemoryNode, children: str | None) -> dict[str, Any]:
    obj = content_fields(node)
    obj["k"] = "node"
    obj["ch"] = children
    return obj


def root_object(children: str | None) -> dict[str, Any]:
    return {"k": "root", "ch": children}


@lru_cache(maxsize=65536)
def _digest(child_id: str) -> str:
    return hashlib.sha256(child_id.encode()).hexdigest()


def _nibble(child_id: str, level: int) -> str:
    return _digest(child_id)[level]


# ---- children maps -------------------------------------------------------


def map_build(io: ObjectIO, entries: Mapping[str, str], level: int = 0) -> tuple[str | None, int]:
    """Store the canonical trie of ``entries``; return (hash or None, count)."""
    if not entries:
        return None, 0
    if len(entries) <= LEAF_MAX or level >= MAX_LEVEL:
        return io.save({"k": "leaf", "e": sorted([k, v] for k, v in entries.items())}), len(entries)
    groups: dict[str, dict[str, str]] = {}
    for k, v in entries.items():
        groups.setdefault(_nibble(k, level), {})[k] = v
    kids = []
    for nib in sorted(groups):
        h, n = map_build(io, groups[nib], level + 1)
        kids.append([nib, h, n])
    return io.save({"k": "br", "n": len(entries), "c": kids}), len(entries)


def map_items(io: ObjectIO, h: str | None) -> Iterator[tuple[str, str]]:
    """All (child id, child hash) entries of a map, in no particular order."""
    if h is None:
        return
    obj = io.load(h)
    if obj["k"] == "leaf":
        yield from obj["e"]
    else:
        for _nib, sub, _n in obj["c"]:
            yield from map_items(io, sub)


def map_update(
    io: ObjectIO, h: str | None, updates: Mapping[str, str | None], level: int = 0
) -> tuple[str | None, int]:
    """Apply ``updates`` (hash to set, None to remove) and return the new map."""
    if h is None:
        return map_build(io, {k: v for k, v in updates.items() if v is not None}, level)
    obj = io.load(h)
    if obj["k"] == "leaf":
        entries = dict(obj["e"])
        for k, v in updates.items():
            if v is None:
                entries.pop(k, None)
            else:
                entries[k] = v
        return map_build(io, entries, level)
    kids: dict[str, tuple[str, int]] = {nib: (sub, n) for nib, sub, n in obj["c"]}
    grouped: dict[str, dict[str, str | None]] = {}
    for k, v in updates.items():
        grouped.setdefault(_nibble(k, level), {})[k] = v
    for nib, ups in grouped.items():
        old = kids.get(nib)
        sub, n = map_update(io, old[0] if old else None, ups, level + 1)
        if sub is None:
            kids.pop(nib, None)
        else:
            kids[nib] = (sub, n)
    total = sum(n for _sub, n in kids.values())
    if total <= LEAF_MAX:
        # Collapse back into a leaf so the shape stays canonical.
        merged: dict[str, str] = {}
        for sub, _n in kids.values():
            merged.update(map_items(io, sub))
        return map_build(io, merged, level)
    branch = [[nib, kids[nib][0], kids[nib][1]] for nib in sorted(kids)]
    return io.save({"k": "br", "n": total, "c": branch}), total


def map_diff(
    io: ObjectIO, a: str | None, b: str | None, level: int = 0
) -> dict[str, tuple[str | None, str | None]]:
    """Entries that differ between maps ``a`` and ``b``: id -> (old, new)."""
    if a == b:
        return {}
    oa = io.load(a) if a is not None else None
    ob = io.load(b) if b is not None else None
    if oa is not None and ob is not None and oa["k"] == "br" and ob["k"] == "br":
        ka = {nib: sub for nib, sub, _n in oa["c"]}
        kb = {nib: sub for nib, sub, _n in ob["c"]}
        out: dict[str, tuple[str | None, str | None]] = {}
        for nib in set(ka) | set(kb):
            out.update(map_diff(io, ka.get(nib), kb.get(nib), level + 1))
        return out
    ea = dict(map_items(io, a))
    eb = dict(map_items(io, b))
    return {k: (ea.get(k), eb.get(k)) for k in set(ea) | set(eb) if ea.get(k) != eb.get(k)}


# ---- whole trees -----------------------------------------------------------


def iter_tree(io: ObjectIO, root: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every node of the state named ``root``: (parent id, node hash, node object)."""
    stack: list[tuple[str, str | None]] = [("", io.load(root)["ch"])]
    while stack:
        parent, ch = stack.pop()
        for _cid, nh in map_items(io, ch):
            obj = io.load(nh)
            yield parent, nh, obj
            stack.append((obj["id"], obj["ch"]))
