"""Child process of the memory crash test: writes until it is killed.

Usage: python memory_crash_child.py DB SEED KEEP

Before each operation it prints ``B <n> <json>`` (the operation), and right
after the call returns ``A <n> <root hash>`` (acknowledged), or ``R <n>`` when
the store refused it. Lines are flushed at once, so the parent knows exactly
which operations were acknowledged when the SIGKILL came. Timestamps are
explicit, so replaying the same operations elsewhere gives the same hashes.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from passepartout.memory.nodes import MemoryNode
from passepartout.memory.store import MemoryStore

IDS = [f"n{i}" for i in range(40)]


def apply(store: MemoryStore, op: dict[str, Any]) -> None:
    """Carry out one logged operation (the parent replays with this too)."""
    kind = op["op"]
    if kind == "put":
        store.put_many([MemoryNode(**n) for n in op["nodes"]])
    elif kind == "delete":
        store.delete(op["id"])
    elif kind == "snapshot":
        store.snapshot(op["label"])
    elif kind == "rollback":
        store.rollback(op["n"])
    elif kind == "gc":
        store.gc()
    elif kind == "save":
        store.save()
    else:
        raise ValueError(f"unknown op {kind!r}")


def next_op(store: MemoryStore, rng: random.Random, n: int) -> dict[str, Any]:
    present = [i for i in IDS if store.get(i) is not None]
    r = rng.random()
    if r < 0.45 or not present:
        nodes = []
        for k in range(rng.choice([1, 1, 1, 5, 30])):
            parent = rng.choice([None, *present]) if present else None
            nid = rng.choice(IDS) if k == 0 else f"b{n}-{k}"
            if parent == nid:
                parent = None
            nodes.append(
                {
                    "id": nid,
                    "parent": parent if k == 0 else nodes[0]["id"],
                    "title": f"title {n}.{k}",
                    "body": "x" * rng.randint(0, 400),
                    "created": float(n),
                    "updated": float(n),
                }
            )
        return {"op": "put", "nodes": nodes}
    if r < 0.6:
        return {"op": "delete", "id": rng.choice(present)}
    if r < 0.78:
        return {"op": "snapshot", "label": f"s{n}"}
    if r < 0.93:
        count = len(store.snapshots())
        return {"op": "rollback", "n": rng.randrange(count) if count else 0}
    return {"op": rng.choice(["gc", "save"])}


def main() -> None:
    db, seed, keep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    store = MemoryStore.open(db, keep_snapshots=keep)
    out = sys.stdout
    out.write(f"S {store.root_hash()}\n")
    out.flush()
    n = 0
    while True:
        n += 1
        op = next_op(store, rng, seed * 100000 + n)
        out.write(f"B {n} {json.dumps(op)}\n")
        out.flush()
        try:
            apply(store, op)
        except (ValueError, KeyError):  # a cycle, an empty snapshot list
            out.write(f"R {n}\n")
        else:
            out.write(f"A {n} {store.root_hash()}\n")
        out.flush()


if __name__ == "__main__":
    main()
