"""Memory benchmark: snapshot and rollback cost as the store grows, memex import,
and the memory and time embeddings take.

    python bench/memory.py            # 1k, 10k, 100k nodes and a 50 MB memex
    python bench/memory.py --quick    # 1k, 10k nodes and a 5 MB memex
    python bench/memory.py --embed    # embedding a 7.5 MB (worg) and a 50 MB memex
    python bench/memory.py --embed 2  # ... a 2 MB one (any sizes, in MB)

``--embed`` generates a worg-like memex (bench/memexgen.py, with worg's long
pages) and, in a fresh process for each size and each setting (embeddings off,
the default model), does what the daemon does at its start: import the memex,
start the embedding index, search once at once, then wait until every node has
its vector. It prints the peak resident memory of that process (from the
kernel's own accounting of the child, ``wait4``), the import time, the first
search's time and its methods, a search's time when half the memex is embedded
(median of 3), the median and slowest of searches made every 2 s while it is
embedded, and the time to fully embed. The first
``passepartout memory search`` from a shell after an import is timed too.

(bench/memex.py times the import of a worg-like memex against the import as it
was, and opening a large store against re-hashing it.)

For each size the store holds a near-flat org-like tree (files, headings,
subheadings). Each repetition changes one node, then times: ``snapshot()``,
``rollback(0)`` back over that change, and a rollback over 10 changes. The
baseline, measured in the same run, is a naive snapshot that copies the whole
node table (what a snapshot costs without structural sharing). Figures are
medians of the repetitions.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from passepartout.memory import MemoryNode, MemoryStore
from passepartout.memory.cleanmark import mark_path
from passepartout.memory.orgimport import org_files, parse_org_file

REPS = 15


def tree(n: int) -> list[MemoryNode]:
    """``n`` nodes: files of 10 headings with 9 subheadings each."""
    nodes: list[MemoryNode] = []
    f = 0
    while len(nodes) < n:
        fid = f"file:{f}.org"
        nodes.append(MemoryNode(fid, f"file {f}", created=1, updated=1, source=f"{f}.org"))
        for h in range(10):
            hid = f"{fid}/{h}"
            nodes.append(
                MemoryNode(hid, f"heading {h}", fid, body="text " * 20, created=1, updated=1)
            )
            for s in range(9):
                if len(nodes) >= n:
                    break
                sid = f"{hid}/{s}"
                nodes.append(
                    MemoryNode(sid, f"sub {s}", hid, body="note " * 30, created=1, updated=1)
                )
        f += 1
    return nodes[:n]


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:8.2f} ms"


def naive_snapshot(store: MemoryStore) -> None:
    """The baseline: a snapshot that copies every current node's row."""
    conn = store._conn
    conn.execute("DROP TABLE IF EXISTS naive_copy")
    conn.execute("CREATE TABLE naive_copy AS SELECT o.* FROM idx JOIN objects o USING (hash)")


def bench_size(n: int, base: Path) -> dict[str, float]:
    (base / f"s{n}").mkdir()
    store = MemoryStore.open(base / f"s{n}", keep_snapshots=20)
    nodes = tree(n)
    build = timed(lambda: store.put_many(nodes))
    leaves = [x for x in nodes if x.parent and x.parent.count("/") == 1]
    rng = random.Random(n)
    put_t, snap_t, rb1_t, rb10_t, naive_t = [], [], [], [], []
    for rep in range(REPS):
        snap_t.append(timed(lambda: store.snapshot("bench")))
        victim = rng.choice(leaves)
        put_t.append(timed(lambda v=victim, r=rep: store.put(MemoryNode(
            v.id, v.title, v.parent, body=f"changed {r}", created=1, updated=1))))
        rb1_t.append(timed(lambda: store.rollback(0)))
        for k in range(10):
            v = rng.choice(leaves)
            store.put(MemoryNode(v.id, v.title, v.parent, body=f"c{rep}.{k}", created=1, updated=1))
        rb10_t.append(timed(lambda: store.rollback(0)))
        naive_t.append(timed(lambda: naive_snapshot(store)))
    store._conn.execute("DROP TABLE IF EXISTS naive_copy")
    verify = timed(store.verify)
    store.close()
    db = base / f"s{n}" / "memory.sqlite3"
    mark_path(db).unlink(missing_ok=True)
    rehash = timed(lambda: MemoryStore.open(base / f"s{n}").close())  # what every open did
    reopen = timed(lambda: MemoryStore.open(base / f"s{n}").close())  # unchanged since close
    print(f"{n:>7} nodes | build {build:6.2f} s | put {ms(put_t)} | snapshot {ms(snap_t)}"
          f" | rollback(1 change) {ms(rb1_t)} | rollback(10 changes) {ms(rb10_t)}"
          f" | naive copy {ms(naive_t)} | verify {verify:5.2f} s | open re-hashing all"
          f" {rehash:5.2f} s | open after a clean close {reopen:5.2f} s")
    return {
        "snap": statistics.median(snap_t),
        "rb1": statistics.median(rb1_t),
        "put": statistics.median(put_t),
        "naive": statistics.median(naive_t),
    }


def make_memex(directory: Path, megabytes: float) -> int:
    """Write org files until ``megabytes`` of text; returns the heading count."""
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "notes", "project", "meeting", "idea"]
    words += ["garden", "tax", "emacs", "org"]
    total, headings, f = 0, 0, 0
    while total < megabytes * 1e6:
        lines = [f"#+TITLE: File {f}", ""]
        for h in range(200):
            todo = rng.choice(["", "TODO ", "DONE "])
            lines.append(f"* {todo}Heading {h} {rng.choice(words)} :{rng.choice(words)}:")
            lines.append(":PROPERTIES:\n:CREATED: [2024-01-01]\n:END:")
            lines.append(" ".join(rng.choice(words) for _ in range(40)))
            for s in range(3):
                lines.append(f"** Sub {s}")
                lines.append(" ".join(rng.choice(words) for _ in range(25)))
            headings += 4
        text = "\n".join(lines) + "\n"
        sub = directory / f"d{f % 10}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{f}.org").write_text(text)
        total += len(text.encode())
        f += 1
    return headings


def bench_import(base: Path, megabytes: float) -> None:
    memex = base / "memex"
    memex.mkdir()
    headings = make_memex(memex, megabytes)
    size = sum(p.stat().st_size for p in org_files(memex)) / 1e6
    parse_only = timed(lambda: [parse_org_file(p, p.name) for p in org_files(memex)])
    store = MemoryStore.open(base / "imported")
    report = store.import_memex(memex)
    again = timed(lambda: store.import_memex(memex))
    store.close()
    print(f"import {size:.1f} MB memex ({report.files} files, {headings} headings):"
          f" {report.seconds:.1f} s ({size / report.seconds:.2f} MB/s);"
          f" orgparse alone {parse_only:.1f} s (ratio {report.seconds / parse_only:.2f});"
          f" unchanged re-import {again:.1f} s")


EMBED_QUERY = "how do I export an org table to latex"


def embed_child(memex: Path, db: Path, mode: str) -> None:
    """One measured run (in its own process): ``off``, ``daemon`` or ``cli``."""
    import json
    import logging

    from passepartout.memory.embeddings import Embedder, EmbeddingIndex

    logging.disable(logging.INFO)  # no model-loading chatter between the lines
    out: dict[str, object] = {}
    store = MemoryStore.open(db)
    out["import"] = timed(lambda: store.import_memex(memex))
    store.snapshot("memex import")
    out["nodes"] = len(store)
    if mode == "cli":  # what `passepartout memory search` does in a fresh process
        from passepartout.memory import cli

        start = time.perf_counter()
        cli._semantic(store)
        hits = store.search(EMBED_QUERY, 10)
        out["first"] = time.perf_counter() - start
    elif mode == "daemon":  # what the memory skill does at the daemon's start
        index = EmbeddingIndex(store, Embedder())
        start = time.perf_counter()
        index.start()
        while not index.embedder.loaded and index.embedder.error is None:
            time.sleep(0.005)  # the first search once the model is there
        t = time.perf_counter()
        hits = store.search(EMBED_QUERY, 10)
        out["first"] = time.perf_counter() - t
        during: list[float] = []  # a search every 2 s while the memex is embedded
        while not index.wait_idle(2.0):
            if time.perf_counter() - start > 3600:
                raise SystemExit("embedding did not finish within an hour")
            during.append(timed(lambda: store.search(EMBED_QUERY, 10)))
            if "halfway" not in out and store.stats().embedded >= len(store) // 2:
                # half of the memex has its vectors, the other half is being embedded
                out["halfway"] = statistics.median(
                    timed(lambda: store.search(EMBED_QUERY, 10)) for _ in range(3))
        out["during"] = [statistics.median(during), max(during), len(during)] if during else []
        out["embedded_in"] = time.perf_counter() - start
        out["embedded"] = store.stats().embedded
        index.stop()
    else:
        t = time.perf_counter()
        hits = store.search(EMBED_QUERY, 10)
        out["first"] = time.perf_counter() - t
    out["methods"] = sorted({h.method for h in hits})
    store.close()
    print(json.dumps(out))


def run_child(memex: Path, db: Path, mode: str) -> tuple[dict[str, object], float]:
    """Run ``embed_child`` in a fresh interpreter: its result and peak RSS in MB."""
    import json
    import os
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", str(memex), str(db), mode],
        stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    output = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"the {mode} run failed ({proc.returncode})")
    return json.loads(output.strip().splitlines()[-1]), usage.ru_maxrss / 1024  # KB on Linux


def bench_embed(base: Path, sizes: list[float]) -> None:
    from memexgen import make_memex as worg_like

    for mb in sizes:
        memex = base / f"worg{mb}"
        files, _heads = worg_like(memex, mb, long_every=50)
        size = sum(p.stat().st_size for p in org_files(memex)) / 1e6
        print(f"{size:.1f} MB memex, {files} files:")
        for mode, label in (("off", "embeddings off"), ("daemon", "embeddings on (daemon)"),
                            ("cli", "`memory search` from a shell")):
            db = base / f"db-{mb}-{mode}"
            db.mkdir()
            r, peak = run_child(memex, db, mode)
            line = (f"  {label:<30} peak {peak:7.0f} MB | import {r['import']:6.1f} s"
                    f" | {r['nodes']} nodes | first search {r['first']:7.3f} s"
                    f" ({'+'.join(r['methods']) or 'no hit'})")  # type: ignore[arg-type]
            if "embedded_in" in r:
                if "halfway" in r:
                    line += f" | search half-way {r['halfway']:6.3f} s"
                if r["during"]:
                    med, most, n = r["during"]  # type: ignore[misc]
                    line += (f" | searches while embedding: median {med:6.3f} s,"
                             f" max {most:6.3f} s ({n})")
                line += f" | fully embedded {r['embedded_in']:6.1f} s after the import"
            print(line, flush=True)


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        embed_child(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--embed", nargs="*", type=float, metavar="MB",
                    help="embedding runs on memexes of these sizes (7.5 and 50 MB by default)")
    args = ap.parse_args()
    if args.embed is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        with tempfile.TemporaryDirectory() as tmp:
            bench_embed(Path(tmp), args.embed or [7.5, 50])
        return
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        results = {n: bench_size(n, base) for n in sizes}
        small, large = results[sizes[0]], results[sizes[-1]]
        print(f"growth {sizes[0]} -> {sizes[-1]} nodes ({sizes[-1] // sizes[0]}x):"
              f" snapshot x{large['snap'] / small['snap']:.2f},"
              f" rollback x{large['rb1'] / small['rb1']:.2f},"
              f" put x{large['put'] / small['put']:.2f},"
              f" naive full copy x{large['naive'] / small['naive']:.1f}")
        print(f"at {sizes[-1]} nodes a snapshot is {large['naive'] / large['snap']:.0f}x"
              " cheaper than a full copy")
        bench_import(base, 5 if args.quick else 50)


if __name__ == "__main__":
    main()
