"""Embedders for memory search, measured on an org retrieval set (bench/retrieval_set.py).

For each embedder installed here (offline: weights from its package, no hub) and
for full text alone (SQLite FTS5, bm25): recall@10 and MRR (mean reciprocal rank of
the first right note in the top 10), by kind of query, over the 48 queries of the
tuning half and the 45 written with them on the same notes ("notes-2"), and over
Org's ORG-NEWS (bench/retrieval_orgnews.py): 25 more tuning questions on Org 9.x
("tuning-9"), 45 paraphrases of those sections written later ("para-9", tuning too)
and the held-out half, 45 questions on Org 8.3 and older written before search was
tuned and never used to tune it, with the time ORG-NEWS takes to import and embed
and a query takes there; the time to embed
1,000 notes, the model's load time, and recall@10 of hybrid search (full text and
vectors fused, what ``memory search`` does).
Recall is also given by kind of query (word, meaning, mixed), and "top1" is the
share of queries whose first hit is right. Times are the median of BENCH_RUNS runs
(5). The last line times a vector search over 100,000 stored vectors (numpy): this
Python's sqlite3 cannot load extensions, so sqlite-vec is not an option here.
With ``--tuning`` neither the held-out half nor notes-2 is searched or shown: what to
run while changing search.
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench import retrieval_orgnews as orgnews
from bench.retrieval_set import HELDOUT_QUERIES, QUERIES, note_count, texts, write_memex
from passepartout.memory import Embedder, EmbeddingIndex, MemoryStore, SearchHit
from passepartout.memory.embedders import DEFAULT_MODEL, MODELS, installed

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
K = 10
KINDS = ("word", "meaning", "mixed")


def median_time(fn: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


HALVES = {"tuning": QUERIES, "notes-2": HELDOUT_QUERIES}


def recall(search: Callable[[str], list[SearchHit]],
           queries: list[tuple[str, str, tuple[str, ...]]] = QUERIES) -> dict[str, float]:
    """Mean recall@K over the queries, overall and by kind; "top" is the share of
    queries whose first hit is a note they should find, "mrr" the mean reciprocal
    rank of the first right note in the top K (0 when none is)."""
    got: dict[str, list[float]] = {kind: [] for kind in KINDS}
    top, ranks = [], []
    for query, kind, want in queries:
        hits = search(query)
        found = {h.id for h in hits[:K]}
        got[kind].append(len(found & set(want)) / len(want))
        top.append(1.0 if hits and hits[0].id in want else 0.0)
        first = next((i for i, h in enumerate(hits[:K], 1) if h.id in want), 0)
        ranks.append(1.0 / first if first else 0.0)
    out = {kind: statistics.mean(v) if v else math.nan for kind, v in got.items()}
    out["all"] = statistics.mean(x for v in got.values() for x in v)
    out["top"] = statistics.mean(top)
    out["mrr"] = statistics.mean(ranks)
    return out


def halves(search: Callable[[str], list[SearchHit]], label: str,
           sets: dict[str, list[tuple[str, str, tuple[str, ...]]]] = HALVES) -> list[str]:
    """recall@K and MRR of one way of searching on each half of the set, as lines."""
    lines = []
    for half, queries in sets.items():
        r = recall(search, queries)
        lines.append(f"  {label:<26}{half:<9} recall@{K} {r['all']:5.3f}  MRR {r['mrr']:5.3f}  "
                     + "  ".join(f"{k} {r[k]:4.2f}" if r[k] == r[k] else f"{k}    -"
                                 for k in KINDS))
    return lines


def thousand_notes() -> list[str]:
    base = list(texts().values())
    return [f"{base[i % len(base)]} ({i})" for i in range(1000)]


def fts_time(notes: list[str]) -> float:
    """Indexing 1,000 notes for full text: the cost bm25 pays instead of embedding."""

    def index() -> None:
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, body)")
        conn.executemany("INSERT INTO fts VALUES (?, ?)", (n.split("\n", 1) for n in notes))
        conn.commit()
        conn.close()

    return median_time(index)


def fmt(r: dict[str, float]) -> str:
    return f"{r['all']:6.3f}  " + "  ".join(f"{r[k]:5.2f}" for k in (*KINDS, "top"))


def orgnews_halves(held_out: bool = True) -> list[str]:
    """Full text alone and hybrid search over the ORG-NEWS memex, on its questions
    on Org 9.x (tuning, and the paraphrases written later) and on Org 8.3 and older
    (held out; bench/retrieval_orgnews.py), with what import, embedding and a query
    cost there."""
    with tempfile.TemporaryDirectory() as tmp:
        memex = Path(tmp) / "memex"
        orgnews.write_memex(memex)
        store = MemoryStore.open(Path(tmp) / "memory.sqlite3")
        start = time.perf_counter()
        store.import_memex(memex)
        took = {"import": time.perf_counter() - start}
        sets = {"tuning-9": orgnews.resolve(store, orgnews.TUNING),
                "para-9": orgnews.resolve(store, orgnews.PARAPHRASES)}
        if held_out:
            sets["held-out"] = orgnews.resolve(store, orgnews.HELDOUT)
        questions = [q for q, _kind, _want in orgnews.TUNING + orgnews.PARAPHRASES]
        lines = halves(lambda q: store.text_search(q, K), "full text alone (bm25)", sets)
        took["full-text query"] = query_time(lambda q: store.text_search(q, K), questions)
        if installed(DEFAULT_MODEL):
            embedder = Embedder(DEFAULT_MODEL)
            embedder.load()
            start = time.perf_counter()
            index = EmbeddingIndex(store, embedder).start()
            try:
                if index.wait_idle(600):
                    took["embedding"] = time.perf_counter() - start
                    lines += halves(lambda q: store.search(q, K), f"hybrid ({DEFAULT_MODEL})", sets)
                    store.search("warm up", K)  # the vector matrix is read on first use
                    took["hybrid query"] = query_time(lambda q: store.search(q, K), questions)
            finally:
                index.stop()
        store.close()
    lines.append("  ORG-NEWS (235 KB): " + ", ".join(
        f"{name} {t * 1000:.0f} ms" if "query" in name else f"{name} {t:.2f} s"
        for name, t in took.items()) + " (a query: the median over the tuning questions)")
    return lines


def query_time(search: Callable[[str], object], questions: list[str]) -> float:
    """The median time of one search over ``questions``."""
    times = []
    for q in questions:
        start = time.perf_counter()
        search(q)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    held_out = "--tuning" not in argv  # tuning: the held-out halves are neither run nor shown
    sets = HALVES if held_out else {"tuning": QUERIES}
    logging.disable(logging.INFO)  # no model-loading chatter between the lines
    print(f"retrieval set: {note_count()} org notes, {len(QUERIES)} queries; recall@{K}; "
          f"times are medians of {RUNS} runs")
    cols = f"{'word':>5}  {'mean':>5}  {'mixed':>5}  {'top1':>5}"
    print(f"{'embedder':<22}{'recall':>7}  {cols}  {'per 1k notes':>12}  {'load':>7}"
          f"  {'hybrid':>7}  {cols}")
    notes = thousand_notes()
    with tempfile.TemporaryDirectory() as tmp:
        memex = Path(tmp) / "memex"
        write_memex(memex)
        store = MemoryStore.open(Path(tmp) / "memory.sqlite3")
        store.import_memex(memex)
        bm25 = recall(lambda q: store.text_search(q, K))
        summary = halves(lambda q: store.text_search(q, K), "full text alone (bm25)", sets)
        print(f"{'bm25 (fts5)':<22}{fmt(bm25)}  {fts_time(notes) * 1000:9.1f} ms  {'-':>7}")
        for name, spec in MODELS.items():
            label = name + (" (default)" if name == DEFAULT_MODEL else "")
            if not installed(name):
                print(f"{label:<22}not installed (pip install {spec.install})")
                continue
            embedder = Embedder(name)
            start = time.perf_counter()
            if not embedder.load():
                print(f"{label:<22}failed to load: {embedder.error}")
                continue
            load = time.perf_counter() - start
            per_1k = median_time(lambda e=embedder: e.embed(notes))
            index = EmbeddingIndex(store, embedder).start()
            try:
                if not index.wait_idle(600):
                    print(f"{label:<22}did not finish embedding the set")
                    continue
                vec = recall(lambda q, i=index: i.search(q, K, None) or [])
                hybrid = recall(lambda q: store.search(q, K))
                if name == DEFAULT_MODEL:
                    summary += halves(lambda q: store.search(q, K), f"hybrid ({name})", sets)
            finally:
                index.stop()
            print(f"{label:<22}{fmt(vec)}  {per_1k * 1000:9.1f} ms  {load:5.2f} s"
                  f"  {fmt(hybrid)}")
        store.close()
    summary += orgnews_halves(held_out)
    print("both halves (the held-out half, ORG-NEWS of Org 8.3 and older, never tunes search;"
          " notes-2 was written with the tuning half, on its notes):" if held_out else
          "tuning halves only (--tuning: neither ORG-NEWS of Org 8.3 and older nor notes-2):")
    print("\n".join(summary))
    dims = MODELS[DEFAULT_MODEL].dims
    matrix = np.random.default_rng(0).standard_normal((100_000, dims)).astype(np.float32)
    query = matrix[123]
    took = median_time(lambda: np.argsort(-(matrix @ query))[:K])
    print(f"vector search over 100,000 stored {dims}-d vectors (numpy, the default model's"
          f" size): {took * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
