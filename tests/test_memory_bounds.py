"""Embedding within bounds: bounded batches and texts, search at once after an import,
vectors added in the background and used as they come.

The model is a double that records what it is given and blocks until the test lets
it go, so "before the embeddings are done" is a state the test holds, not a race.
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import sys
import threading
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from passepartout.memory import Embedder, EmbeddingIndex, MemoryNode, MemoryStore, cli, vectors
from passepartout.memory.embeddings import (
    CHUNK_CHARS,
    MAX_BATCH,
    MAX_CHUNKS,
    PAD_RATIO,
    pieces,
    titled_pieces,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from memexgen import make_memex

# The double's "meaning": words of one concept share a vector, so a query can find a
# note by meaning with no word in common (full text cannot).
CONCEPTS = {"tomatoes": "plant", "vegetable": "plant", "watering": "water",
            "irrigation": "water"}
QUERY = "vegetable irrigation"
GARDEN = MemoryNode("garden-note", "Garden", body="Tomatoes need deep watering in summer.")


class GatedEmbedder(Embedder):
    """An embedder double: bag of concepts hashed into 256 dimensions. Every call
    is recorded; a call embedding anything but a query waits for a pass (``allow``)."""

    def __init__(self, queries: Sequence[str] = (QUERY,)) -> None:
        super().__init__("wordllama")
        self.queries = set(queries)
        self.calls: list[list[str]] = []
        self.passes = threading.Semaphore(0)
        self.blocked = threading.Event()  # a call is waiting for a pass
        self.closed = False

    def load(self) -> bool:
        self._encode = self._vectors
        return True

    def allow(self, n: int = 1) -> None:
        for _ in range(n):
            self.passes.release()

    def open_gate(self) -> None:
        self.closed = True
        self.allow(10_000)

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not set(texts) <= self.queries:
            self.calls.append(texts)
            if not self.closed:
                self.blocked.set()
                self.passes.acquire()
                self.blocked.clear()
        out = np.zeros((len(texts), 256), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                word = CONCEPTS.get(word.strip(".,"), word.strip(".,"))
                out[i, zlib.crc32(word.encode()) % 256] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


@pytest.fixture
def gated() -> Iterator[GatedEmbedder]:
    e = GatedEmbedder()
    yield e
    e.open_gate()  # never leave a worker blocked


@pytest.fixture(scope="module")
def memex(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated worg-like memex, large enough that its backlog is the daemon's."""
    d = tmp_path_factory.mktemp("memex")
    make_memex(d, 1.0, seed=3, long_every=10)
    return d


def imported(tmp_path: Path, memex: Path) -> MemoryStore:
    store = MemoryStore.open(tmp_path / "memory.sqlite3")
    store.put(GARDEN)  # first in, so among the first embedded
    store.import_memex(memex)
    assert len(store) > cli.SEARCH_BACKLOG
    return store


def cli_search(db: Path, query: str, gated: GatedEmbedder, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> str:
    """``passepartout memory search QUERY`` with the double as its model; fails when
    it does not answer while the double holds every embedding back."""
    monkeypatch.setattr(cli, "Embedder", lambda name: gated)
    parser = argparse.ArgumentParser(prog="passepartout")
    cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["memory", "--db", str(db), "search", query, "-k", "5"])
    status: list[int] = []
    t = threading.Thread(target=lambda: status.append(cli.run(args)), daemon=True)
    t.start()
    t.join(60)  # not a deadline on speed: without an answer it would wait forever
    assert not t.is_alive(), "memory search waited for the embeddings of the whole memex"
    assert status == [0]
    return capsys.readouterr().out


def test_a_long_text_is_cut_in_bounded_pieces() -> None:
    text = "word " * 10_000 + "\n" + "x" * 3000
    got = pieces(text)
    assert len(got) == MAX_CHUNKS and all(0 < len(p) <= CHUNK_CHARS for p in got)
    assert all(p.split()[0] == "word" for p in got)  # cut at spaces, not inside words
    assert pieces("short note") == ["short note"]
    assert pieces("y" * 2500) == ["y" * 1000, "y" * 1000, "y" * 500]  # no space: cut anyway


def test_a_call_to_the_model_holds_pieces_of_like_length(tmp_path: Path) -> None:
    # The model pads a call to its longest text: titles alone go apart from passages.
    model = GatedEmbedder()
    model.open_gate()
    store = MemoryStore.open(tmp_path)
    texts = [f"Title {i}\n" + "word " * 400 for i in range(20)] + ["Short\nA line."]
    try:
        vecs = EmbeddingIndex(store, model).piece_vectors(texts)
    finally:
        store.close()
    assert model.calls and all(0 < len(call) <= MAX_BATCH for call in model.calls)
    for call in model.calls:
        lengths = [len(t) for t in call]
        assert max(lengths) <= PAD_RATIO * min(lengths), lengths
    for text, got in zip(texts, vecs, strict=True):  # each text's pieces, in order
        assert np.allclose(got, model._vectors(titled_pieces(text)))


def test_batches_and_texts_given_to_the_model_are_bounded(tmp_path: Path, memex: Path,
                                                          gated: GatedEmbedder) -> None:
    gated.open_gate()
    store = imported(tmp_path, memex)
    longest = max(len(t) for _ck, t in store.texts_without_vectors(100_000))
    assert longest > 50 * CHUNK_CHARS  # the memex has worg's long pages
    # A long node whose meaning is past its first pieces is still found by it.
    store.put(MemoryNode("long", "Reference", body="zzz " * 500 + "tomatoes watering " * 200))
    assert EmbeddingIndex(store, gated).attach()
    assert store.stats().embedded == len(store)
    assert max(len(c) for c in gated.calls) <= MAX_BATCH
    assert max(len(t) for c in gated.calls for t in c) <= CHUNK_CHARS
    assert sum(len(c) for c in gated.calls) > len(store)  # long nodes went in pieces
    hits = store.search(QUERY, 3)
    assert {"garden-note", "long"} <= {h.id for h in hits if "embedding" in h.method}
    store.close()


def test_search_answers_from_full_text_right_after_an_import(
    tmp_path: Path, memex: Path, gated: GatedEmbedder, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = imported(tmp_path, memex)
    db = store.path
    index = EmbeddingIndex(store, gated).start()  # the daemon: embeds in the background
    try:
        assert gated.blocked.wait(60)  # its first batch is held back
        hits = store.search("latex export table", 5)
        assert hits and {h.method for h in hits} == {"fts"}
        assert store.stats().embedded == 0
        # `passepartout memory search` in another process: answers too, and says so.
        out = cli_search(db, "latex export table", gated, monkeypatch, capsys)
        assert "[fts]" in out and "no match" not in out
        assert f"meaning covers 0 of {len(store)} notes so far" in out
    finally:
        gated.open_gate()
        index.stop()
        store.close()


def test_vectors_arrive_in_the_background_and_hybrid_search_uses_them(
    tmp_path: Path, memex: Path, gated: GatedEmbedder, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = imported(tmp_path, memex)
    db = store.path
    assert store.search(QUERY, 5) == []  # no word of the query is in any note
    index = EmbeddingIndex(store, gated).start()
    try:
        while store.stats().embedded == 0:  # one batch through, the rest held back
            assert gated.blocked.wait(60)
            calls = len(gated.calls)
            gated.allow(1)  # a batch may take more than one call (titles, then passages)
            deadline = time.monotonic() + 60  # until that call is done: another or stored
            while len(gated.calls) == calls and store.stats().embedded == 0:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        # ... until the next batch is in the model: the first one is written and mapped
        assert gated.blocked.wait(60)
        embedded = store.stats().embedded
        assert 0 < embedded <= MAX_BATCH < len(store)
        # The garden note has its vector: found by meaning while the rest waits.
        hits = store.search(QUERY, 5)
        assert hits and hits[0].id == "garden-note" and hits[0].method == "embedding"
        out = cli_search(db, QUERY, gated, monkeypatch, capsys)
        assert "Garden  [embedding]" in out
        assert f"meaning covers {embedded} of {len(store)} notes so far" in out
        gated.open_gate()
        assert index.wait_idle(120)
        assert store.stats().embedded == len(store)
        assert store.search(QUERY, 5)[0].id == "garden-note"
        out = cli_search(db, QUERY, gated, monkeypatch, capsys)
        assert "Garden  [embedding]" in out and "so far" not in out
    finally:
        gated.open_gate()
        index.stop()
        store.close()


def stored_scores(store: MemoryStore, index: EmbeddingIndex, query: str) -> dict[str, float]:
    """Node id -> its best piece's cosine with ``query``, read from the stored vectors
    (what a search scored before vectors were held in memory)."""
    q = index.vectors([query])[0]
    dims = index.embedder.spec.dims
    return {
        node_id: float((np.frombuffer(vec, dtype=np.float32).reshape(-1, dims) @ q).max())
        for node_id, vec in store._conn.execute(
            "SELECT idx.id, embeddings.vec FROM idx JOIN embeddings USING (ckey)")
    }


def assert_scores_as_stored(store: MemoryStore, index: EmbeddingIndex) -> None:
    expected = stored_scores(store, index, QUERY)
    hits = index.search(QUERY, len(store) + 10, None)
    assert hits is not None
    got = {h.id: h.score for h in hits}
    assert got.keys() == expected.keys()
    assert max(abs(got[i] - expected[i]) for i in got) < 1e-5
    ranked = [expected[h.id] for h in hits]
    assert all(a >= b - 1e-5 for a, b in itertools.pairwise(ranked))
    top = index.search(QUERY, 5, None)
    assert top is not None and [h.id for h in top] == [h.id for h in hits[:5]]


def test_vectors_in_memory_score_as_the_stored_ones(tmp_path: Path, memex: Path,
                                                    gated: GatedEmbedder) -> None:
    gated.open_gate()
    store = imported(tmp_path, memex)
    store.snapshot("import")
    index = EmbeddingIndex(store, gated).start()
    try:
        assert index.wait_idle(120)
        assert store.stats().embedded == len(store)
        assert_scores_as_stored(store, index)  # after an import
        some = store.top_ids()[:3]
        store.put_many([
            MemoryNode("new", "Irrigation", body="Watering vegetable beds at dawn."),
            MemoryNode(GARDEN.id, GARDEN.title, body="Tomatoes: deep irrigation weekly."),
        ])
        store.delete(some[0])
        assert index.wait_idle(120)
        assert_scores_as_stored(store, index)  # after a change and a deletion
        assert index.search(QUERY, 2, None)[0].id in {"new", GARDEN.id}  # type: ignore[index]
        store.rollback(0)
        assert_scores_as_stored(store, index)  # after a rollback
        assert "new" not in {h.id for h in index.search(QUERY, 10, None) or []}
        assert store.gc() > 0  # the changed texts' vectors go with them
        assert_scores_as_stored(store, index)
    finally:
        index.stop()
        store.close()


def test_a_later_index_reads_the_stored_vectors(tmp_path: Path, memex: Path,
                                                gated: GatedEmbedder) -> None:
    # A daemon started again: the vectors of the last run are searched, not re-embedded.
    gated.open_gate()
    store = imported(tmp_path, memex)
    assert EmbeddingIndex(store, gated).attach()
    calls = len(gated.calls)
    index = EmbeddingIndex(store, gated).start()
    try:
        assert index.wait_idle(120)
        assert len(gated.calls) == calls
        assert_scores_as_stored(store, index)
        store.use_embedder("minilm")  # another model: the stored vectors are dropped
        assert index.search(QUERY, 5, None) == []
    finally:
        index.stop()
        store.close()


def test_a_search_does_not_wait_for_a_batch_being_written(
    tmp_path: Path, memex: Path, gated: GatedEmbedder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = imported(tmp_path, memex)
    writing, written = threading.Event(), threading.Event()
    write = store.store_vectors

    def held_write(items: list[tuple[str, bytes]]) -> None:
        writing.set()
        try:
            write(items)
        finally:
            written.set()

    monkeypatch.setattr(store, "store_vectors", held_write)
    # Another process writes to the memory file: the embedder's commit must wait for it.
    other = sqlite3.connect(store.path, isolation_level=None)
    index = EmbeddingIndex(store, gated).start()
    try:
        other.execute("BEGIN IMMEDIATE")
        while not writing.is_set():  # the first batch through the model, one call at a
            assert gated.blocked.wait(60)  # time (titles, then passages) ...
            calls = len(gated.calls)
            gated.allow(1)
            for _ in range(6000):  # until that call is through: a next one, or the write
                if writing.is_set() or len(gated.calls) > calls:
                    break
                time.sleep(0.01)
        assert writing.is_set()  # ... and now being written, behind the other writer
        found: list[list[str]] = []
        t = threading.Thread(target=lambda: found.append(
            [h.id for h in store.search("latex export table", 5)]), daemon=True)
        t.start()
        t.join(60)  # not a deadline on speed: a search that waits would wait 30 s and more
        assert not t.is_alive() and not written.is_set(), "the search waited for the write"
        assert found and found[0]  # answered from full text
        other.execute("ROLLBACK")
        assert written.wait(60)
        assert gated.blocked.wait(60)  # the next batch is in the model: this one is done
        hits = store.search(QUERY, 5)  # ... and searched
        assert hits and hits[0].id == GARDEN.id and hits[0].method == "embedding"
    finally:
        other.close()
        gated.open_gate()
        index.stop()
        store.close()


def test_the_matrix_scores_each_segment_by_its_best_piece_across_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vectors, "BLOCK", 3)  # segments straddle blocks
    rng = np.random.default_rng(5)
    segments = {f"k{i}": rng.standard_normal((n, 8)).astype(np.float32)
                for i, n in enumerate([1, 4, 2, 7, 1, 3])}
    matrix = vectors.PieceMatrix(8)
    assert matrix.add(list(segments.items())[:4]) == 4
    query = rng.standard_normal(8).astype(np.float32)
    blocks, starts, _count = matrix.view()  # what a search holds while rows are added
    assert matrix.add([*list(segments.items())[3:], ("k0", segments["k1"])]) == 2
    assert len(matrix) == 6 and matrix.rows == 18
    expected = [float((v @ query).max()) for v in segments.values()]
    assert np.allclose(matrix.segment_scores(query), expected, atol=1e-5)
    before = np.maximum.reduceat(np.concatenate([b @ query for b in blocks]), starts)
    assert np.allclose(before, expected[:4], atol=1e-5)  # a view taken before stays right
    head = vectors.HeadMap("root", [("a", "k3"), ("b", "k0"), ("c", "k3"), ("d", "gone")])
    head.follow(matrix)
    assert [(i, int(s)) for i, s in zip(head.ids, head.segments, strict=True)] == [
        ("b", 0), ("a", 3), ("c", 3)]
