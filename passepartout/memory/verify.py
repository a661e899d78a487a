"""Walking stored trees: verification (hash by hash) and reachability for GC."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from passepartout.memory.merkle import ObjectIO
from passepartout.memory.nodes import ROOT_ID
from passepartout.memory.schema import CorruptObjectError


@dataclass(frozen=True)
class VerifyProblem:
    """One bad object: its hash, the node it belongs to when known, and why."""

    hash: str
    node_id: str | None
    reason: str

    def __str__(self) -> str:
        where = f"node {self.node_id!r}" if self.node_id is not None else "tree structure"
        return f"{where}: object {self.hash[:12]} {self.reason}"


@dataclass
class VerifyReport:
    """What ``MemoryStore.verify`` found; ``ok`` when tree and index agree and hash."""

    root: str
    nodes: int = 0
    objects: int = 0
    problems: list[VerifyProblem] = field(default_factory=list)
    index_mismatches: list[str] = field(default_factory=list)
    snapshots_bad: list[int] = field(default_factory=list)
    recovered_from: int | None = None  # snapshot seq the store fell back to on open
    lost_state: bool = False  # nothing verified: the store started empty
    clean: bool = False  # not re-hashed at open: the file is as its last clean close left it

    @property
    def tree_ok(self) -> bool:
        return not self.problems

    @property
    def ok(self) -> bool:
        return not self.problems and not self.index_mismatches and not self.snapshots_bad

    def summary(self) -> str:
        if self.clean:
            return (
                f"root {self.root[:16]}: {self.nodes} nodes, unchanged since the last clean"
                " close (digest of the file matches; not re-hashed)"
            )
        lines = [
            f"root {self.root[:16]}: {self.nodes} nodes, {self.objects} objects checked",
            "verified: OK" if self.ok else "verified: PROBLEMS FOUND",
        ]
        lines += [f"  corrupt: {p}" for p in self.problems]
        lines += [f"  index: {m}" for m in self.index_mismatches[:20]]
        if len(self.index_mismatches) > 20:
            lines.append(f"  index: ... {len(self.index_mismatches) - 20} more")
        lines += [f"  snapshot #{s} does not verify" for s in self.snapshots_bad]
        if self.recovered_from is not None:
            lines.append(f"  recovered: head moved to snapshot #{self.recovered_from}")
        if self.lost_state:
            lines.append("  recovered: no stored state verified; memory restarted empty")
        return "\n".join(lines)


def check_tree(
    io: ObjectIO, root: str, seen: set[str] | None = None
) -> tuple[list[VerifyProblem], dict[str, tuple[str, str]], int]:
    """Re-hash every object reachable from ``root``.

    Returns the problems, the nodes found (id -> (parent, hash)) and the number
    of objects checked. Objects in ``seen`` are trusted and skipped (used to
    check many snapshots that share most of their objects).
    """
    problems: list[VerifyProblem] = []
    nodes: dict[str, tuple[str, str]] = {}
    checked = 0
    trusted = set() if seen is None else seen
    seen = set(trusted)
    try:
        top = io.load(root)
        checked += 1
        if top.get("k") != "root":
            raise CorruptObjectError(root, "is not a root object")
    except CorruptObjectError as e:
        return [VerifyProblem(root, None, e.reason)], nodes, 1
    stack: list[tuple[str, str | None]] = [(ROOT_ID, top.get("ch"))]
    while stack:
        parent, map_hash = stack.pop()
        for cid, nh in _map_entries(io, map_hash, parent, problems, seen):
            checked += 1
            if nh in seen:
                continue
            try:
                obj = io.load(nh)
                if obj.get("k") != "node" or obj.get("id") != cid:
                    raise CorruptObjectError(nh, "is not the node its parent names")
            except CorruptObjectError as e:
                problems.append(VerifyProblem(nh, cid, e.reason))
                continue
            seen.add(nh)
            if cid in nodes:
                problems.append(VerifyProblem(nh, cid, "appears twice in the tree"))
            nodes[cid] = (parent, nh)
            stack.append((cid, obj.get("ch")))
    if not problems:
        # Only a fully verified tree vouches for its objects in later checks.
        trusted |= seen
    return problems, nodes, checked


def _map_entries(
    io: ObjectIO, h: str | None, parent: str, problems: list[VerifyProblem], seen: set[str]
) -> Iterator[tuple[str, str]]:
    if h is None or h in seen:
        return
    try:
        obj = io.load(h)
    except CorruptObjectError as e:
        problems.append(VerifyProblem(h, parent or None, f"(children map) {e.reason}"))
        return
    seen.add(h)
    if obj.get("k") == "leaf":
        yield from obj["e"]
    elif obj.get("k") == "br":
        for _nib, sub, _n in obj["c"]:
            yield from _map_entries(io, sub, parent, problems, seen)
    else:
        problems.append(VerifyProblem(h, parent or None, "(children map) has an unknown kind"))


def reachable(io: ObjectIO, roots: list[str]) -> set[str]:
    """Every object hash reachable from ``roots`` (the live set for GC)."""
    live: set[str] = set()
    for root in roots:
        if root in live:
            continue
        live.add(root)
        stack: list[str | None] = [io.load(root).get("ch")]
        while stack:
            h = stack.pop()
            if h is None or h in live:
                continue
            live.add(h)
            obj = io.load(h)
            if obj["k"] == "leaf":
                for _cid, nh in obj["e"]:
                    if nh not in live:
                        live.add(nh)
                        stack.append(io.load(nh)["ch"])
            elif obj["k"] == "br":
                stack.extend(sub for _nib, sub, _n in obj["c"])
    return live
