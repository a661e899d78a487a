"""Memex at scale: import, re-import, one changed file, and opening a large store.

    python bench/memex.py            # 7.5 MB and 50 MB memexes, a 100k-node store
    python bench/memex.py --quick    # 7.5 MB only, fewer runs
    python bench/memex.py --old-50   # also the node-by-node import of 50 MB (minutes)

The memex is generated (bench/memexgen.py, seeded) to resemble worg: 7.5 MB
in about 290 files. Each figure is a median of several runs and is printed
beside its baseline from the same run:

- parsing with orgparse alone (what any importer built on it costs at least);
- the import as it was before the fast path (``reference_import``: orgparse's
  tree, one put per node, one transaction per file), which tests/test_memory_
  import_same.py also uses to check that both give the same nodes and hashes;
- opening a store by re-hashing its whole tree (what every open did before the
  clean-close mark), against opening it unchanged since its clean close.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memexgen import make_memex

from passepartout.memory import MemoryNode, MemoryStore
from passepartout.memory.cleanmark import mark_path
from passepartout.memory.orgimport import (
    FILE_PREFIX,
    file_node_id,
    import_org_file,
    org_files,
    parse_org_text_orgparse,
)
from passepartout.memory.tree import Pending


def reference_import(store: MemoryStore, directory: Path, only: Path | None = None) -> None:
    """The import before the fast path: orgparse, one put per node, one commit per file."""
    seen: set[str] = set()
    for path in [only] if only is not None else org_files(directory):
        rel = path.relative_to(directory).as_posix()
        seen.add(file_node_id(rel))
        try:
            nodes = parse_org_text_orgparse(path.read_text(encoding="utf-8"), rel)
        except Exception:
            continue
        _replace_node_by_node(store, nodes)
    if only is None:
        for top in store.children(None):
            if top.id.startswith(FILE_PREFIX) and top.id not in seen:
                store.delete(top.id)


def _replace_node_by_node(store: MemoryStore, nodes: list[MemoryNode]) -> None:
    tree = store._tree
    with store._txn():
        before = tree.row(nodes[0].id)
        old_ids = {r.id for r in tree.subtree_rows(before)} if before else set()
        pending: Pending = {}
        now = time.time()
        for node in nodes:
            tree.put_one(node, pending, now, [])
        for stale in old_ids - {n.id for n in nodes}:
            row = tree.row(stale)
            if row is not None:
                tree.remove_rows(tree.subtree_rows(row))
                pending.setdefault(row.parent, {})[stale] = None
        tree.propagate(pending)


class Fig:
    """Median wall-clock and CPU seconds (CPU: what a loaded machine does not inflate)."""

    def __init__(self, wall: list[float], cpu: list[float]) -> None:
        self.wall, self.cpu = statistics.median(wall), statistics.median(cpu)

    def s(self) -> str:
        return f"{self.wall:6.2f} s (cpu {self.cpu:5.2f})"

    def ms(self) -> str:
        return f"{self.wall * 1000:6.1f} ms (cpu {self.cpu * 1000:5.1f})"


def median(fn: Callable[[], object], runs: int, setup: Callable[[], object] | None = None) -> Fig:
    wall, cpu = [], []
    for _ in range(runs):
        if setup is not None:
            setup()
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return Fig(wall, cpu)


def orgparse_only(memex: Path) -> Callable[[], object]:
    import orgparse

    texts = [p.read_text(encoding="utf-8") for p in org_files(memex)]
    return lambda: [orgparse.loads(t) for t in texts]


def fresh(path: Path) -> Callable[[], None]:
    def setup() -> None:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()

    return setup


def into(path: Path, fn: Callable[[MemoryStore], object]) -> Callable[[], None]:
    def run() -> None:
        with MemoryStore.open(path) as store:
            fn(store)

    return run


def bench_import(base: Path, megabytes: float, runs: int, old_runs: int) -> Path:
    memex = base / f"memex{megabytes:g}"
    files, headings = make_memex(memex, megabytes)
    size = sum(p.stat().st_size for p in org_files(memex)) / 1e6
    print(f"== {size:.1f} MB memex: {files} files, {headings} headings ({runs} runs, median)")
    parse = median(orgparse_only(memex), max(1, old_runs) if megabytes > 10 else runs)
    new_store = base / f"new{megabytes:g}"
    new = median(into(new_store, lambda s: s.import_memex(memex)), runs, fresh(new_store))
    line = f"import {new.s()} | orgparse alone {parse.s()} (x{parse.cpu / new.cpu:.2f} by cpu)"
    if old_runs:
        old_store = base / f"old{megabytes:g}"
        old = median(into(old_store, lambda s: reference_import(s, memex)), old_runs,
                     fresh(old_store))
        line += f" | node-by-node import {old.s()} (x{old.cpu / new.cpu:.1f} by cpu)"
    print(line)
    with MemoryStore.open(new_store) as store:
        again = median(lambda: store.import_memex(memex), runs)
    print(f"unchanged re-import {again.ms()} (every file read and hashed, none parsed)")
    return memex


def bench_one_file(base: Path, memex: Path, runs: int) -> None:
    (base / "one").mkdir()
    store = MemoryStore.open(base / "one")
    store.import_memex(memex)
    files = sorted(org_files(memex), key=lambda p: p.stat().st_size)
    path = files[len(files) // 2]
    original = path.read_text()
    state = {"n": 0}

    def edit() -> None:
        state["n"] += 1
        path.write_text(original.replace("\n* ", f"\n* v{state['n']} ", 1))

    new = median(lambda: import_org_file(store, path, memex), runs, edit)
    old = median(lambda: reference_import(store, memex, only=path), runs, edit)
    path.write_text(original)
    store.close()
    print(f"one changed file ({path.stat().st_size // 1000} KB, {original.count(chr(10) + '*')}"
          f" headings) re-imported {new.ms()} | node-by-node with orgparse {old.ms()}")


def bench_open(base: Path, memex: Path, nodes: int, runs: int) -> None:
    path = base / "open"
    path.mkdir()
    with MemoryStore.open(path) as store:
        store.import_memex(memex)
        extra = nodes - len(store)
        if extra > 0:  # top up with small notes to reach the node count
            store.put(MemoryNode("notes", "Notes"))
            store.put_many(
                MemoryNode(f"note-{i}", f"note {i}", "notes", body="a short note " * 8)
                for i in range(extra - 1)
            )
        count = len(store)
    db = path / "memory.sqlite3"
    size = db.stat().st_size / 1e6

    def drop_mark() -> None:
        mark_path(db).unlink(missing_ok=True)

    full = median(lambda: MemoryStore.open(path).close(), runs, drop_mark)
    MemoryStore.open(path).close()  # leaves the mark
    clean = median(lambda: MemoryStore.open(path).close(), runs)
    opened = median(lambda: MemoryStore.open(path)._conn.close(), runs,
                    lambda: MemoryStore.open(path).close())
    with MemoryStore.open(path) as store:
        verify = median(store.verify, max(1, runs // 2))
    print(f"== open a {count}-node store ({size:.0f} MB): ready in {opened.s()} after a clean"
          f" close | re-hash at open (before) {full.s()} | open+close {clean.s()}"
          f" | memory verify (everything) {verify.s()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="7.5 MB only, fewer runs")
    ap.add_argument("--old-50", action="store_true", help="node-by-node import of 50 MB too")
    args = ap.parse_args()
    runs = 3 if args.quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        small = bench_import(base, 7.5, runs, old_runs=1 if args.quick else 3)
        bench_one_file(base, small, 21)
        if not args.quick:
            big = bench_import(base, 50, 3, old_runs=1 if args.old_50 else 0)
            bench_open(base, big, 100_000, 3)


if __name__ == "__main__":
    main()
