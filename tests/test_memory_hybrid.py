"""Hybrid memory search: full text and vectors fused by standard scores, with snippets and files,
through the store, `passepartout memory search` and the memory-search tool."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

import pytest

from passepartout.llm.builtin_tools import builtin_tools
from passepartout.memory import Embedder, EmbeddingIndex, MemoryStore, cli
from passepartout.memory.search import SearchHit, fts_query, fuse, snippet
from passepartout.services import Services

MEMEX = {
    "garden.org": "* Tomato watering\nTomatoes want deep watering twice a week in July.\n"
                  "* Compost heap\nTurn the heap every three weeks.\n",
    "money.org": "* Invoice 2041\nSent to Halvorsen Ltd for the May consulting days.\n"
                 "* Tax return\nThe self-assessment return is due on 31 January.\n",
    "pets.org": "* Cat food\nMiso eats wet food twice a day, 85 g pouches.\n"
                "* Diary\n:PROPERTIES:\n:ID: diary\n:END:\n"
                "** Private thoughts :@personal:\nThe vet bill is still not paid, I worry.\n",
}


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    e = Embedder()
    assert e.load(), e.error
    return e


@pytest.fixture
def store(tmp_path: Path, embedder: Embedder) -> MemoryStore:
    memex = tmp_path / "memex"
    memex.mkdir()
    for name, text in MEMEX.items():
        (memex / name).write_text(text)
    s = MemoryStore.open(tmp_path / "memory.sqlite3")
    s.import_memex(memex)
    return s


def titles(hits: list[SearchHit]) -> list[str]:
    return [h.title for h in hits]


def test_a_keyword_match_and_a_meaning_match_both_rank(
    store: MemoryStore, embedder: Embedder
) -> None:
    # Full text alone finds the rare word, and misses the paraphrase entirely.
    assert titles(store.text_search("Halvorsen", 3))[0] == "Invoice 2041"
    assert store.text_search("what do I owe the government", 3) == []
    assert EmbeddingIndex(store, embedder).attach()
    # Hybrid: the keyword-only match is first for the word...
    word = store.search("Halvorsen", 3)
    assert word[0].title == "Invoice 2041" and word[0].method.startswith("fts")
    # ...and the meaning-only match is first for the paraphrase.
    meaning = store.search("what do I owe the government", 3)
    assert meaning[0].title == "Tax return" and meaning[0].method == "embedding"
    # A note found both ways is marked so.
    both = store.search("tomato watering", 3)
    assert both[0].title == "Tomato watering" and both[0].method == "fts+embedding"
    store.close()


def test_hits_carry_a_snippet_and_their_file(store: MemoryStore, embedder: Embedder) -> None:
    assert EmbeddingIndex(store, embedder).attach()
    hit = store.search("Halvorsen invoice", 1)[0]
    assert hit.file == "money.org"
    assert "Halvorsen Ltd" in hit.snippet and "\n" not in hit.snippet
    sub = store.search("what do I owe the government", 1)[0]  # found by its vector only
    assert sub.file == "money.org" and sub.snippet.startswith("The self-assessment return")
    store.close()


def test_fusion_keeps_both_sides() -> None:
    text = [SearchHit("a", "A", 9.0, "fts", "a text"), SearchHit("b", "B", 1.0, "fts")]
    vec = [SearchHit("c", "C", 0.9, "embedding"), SearchHit("a", "A", 0.5, "embedding")]
    fused = fuse(text, vec, 3)
    assert [h.id for h in fused] == ["a", "c", "b"]
    assert fused[0].method == "fts+embedding" and fused[0].snippet == "a text"
    assert fused[0].score > fused[1].score > fused[2].score
    assert len(fuse(text, vec, 1)) == 1
    assert fuse([], [], 3) == [] and [h.id for h in fuse(text, [], 3)] == ["a", "b"]


def test_fusion_weighs_how_far_a_hit_stands_out() -> None:
    # The vector side's first hit stands far above the rest; "x" is second on both
    # sides, each time among near-equals. A fusion of ranks puts "x" first (two
    # second places beat one first); the clear match comes first here.
    text = [SearchHit(i, i, s, "fts") for i, s in
            [("t", 3.1), ("x", 3.0), *((f"t{n}", 2.9 - n / 100) for n in range(10))]]
    vec = [SearchHit(i, i, s, "embedding") for i, s in
           [("v", 0.9), ("x", 0.42), *((f"v{n}", 0.41 - n / 1000) for n in range(10))]]
    fused = fuse(text, vec, 3)
    assert fused[0].id == "v" and "x" in {h.id for h in fused}


def test_a_word_only_one_note_has_stands_out() -> None:
    # One note matches the rare word, the vectors never propose it: standardised
    # alone it would be average (0); taken against the nodes full text did not score,
    # it is first, before the best of fifty vector hits.
    text = [SearchHit("rare", "Rare", 2.5, "fts")]
    vec = [SearchHit(f"a{n:02}", "A", 0.8 - n / 100, "embedding") for n in range(50)]
    fused = fuse(text, vec, 10)
    assert fused[0].id == "rare" and fused[0].method == "fts"


def test_a_threshold_cuts_vector_hits_after_they_are_standardised() -> None:
    # One vector hit clears the cut, far above the pool's others: standardised over
    # the pool it stands out and is first; the hits under the cut are left out.
    text = [SearchHit(f"t{n}", "T", 3.0 - n / 10, "fts") for n in range(12)]
    vec = [SearchHit("v", "V", 0.9, "embedding"),
           *(SearchHit(f"w{n:02}", "W", 0.4 - n / 1000, "embedding") for n in range(49))]
    fused = fuse(text, vec, 5, threshold=0.75)
    assert fused[0].id == "v" and not any(h.id.startswith("w") for h in fused)
    assert [h.id for h in fuse(text, vec, 3, threshold=0.95)] == ["t0", "t1", "t2"]


def test_queries_are_words_only() -> None:
    assert fts_query('"unbalanced NOT (x*') == '"unbalanced" OR "NOT" OR "x"'
    assert fts_query("what is the tax") == '"tax"'  # stopwords rank noise first
    assert fts_query("what is it") == '"what" OR "is" OR "it"'  # unless nothing else
    assert fts_query("  ?! ") is None
    assert snippet("a\x1b[31m\n b\tc", 80) == "a [31m b c"
    assert snippet("word " * 50, 20).endswith("…") and len(snippet("word " * 50, 20)) <= 21


def run_cli(db: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="passepartout")
    cli.add_parser(parser.add_subparsers(dest="command"))
    return cli.run(parser.parse_args(["memory", "--db", str(db), *argv]))


def test_the_cli_shows_snippet_and_file(
    store: MemoryStore, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = store.path
    store.close()
    monkeypatch.setenv("PASSEPARTOUT_EMBEDDINGS", "off")
    assert run_cli(db, "search", "Halvorsen") == 0
    out = capsys.readouterr().out
    assert "Invoice 2041  [fts]" in out and "money.org  id " in out
    assert "Sent to Halvorsen Ltd" in out
    assert "full text only" in out
    monkeypatch.setenv("PASSEPARTOUT_EMBEDDINGS", "bert")
    assert run_cli(db, "search", "Halvorsen") == 2
    assert "must be off, on or one of" in capsys.readouterr().out
    monkeypatch.delenv("PASSEPARTOUT_EMBEDDINGS")  # the default model indexes it first
    assert run_cli(db, "search", "what do I owe the government", "-k", "2") == 0
    out = capsys.readouterr().out
    first = out.splitlines()[:3]
    assert "Tax return  [embedding]" in first[0]
    assert first[1].strip().startswith("money.org  id ")
    assert first[2].strip().startswith("The self-assessment return")
    assert "full text only" not in out
    s = MemoryStore.open(db)
    assert s.embedder_name() == "wordllama" and s.stats().embedded == len(s)
    s.close()
    assert run_cli(db, "search", "x", "-k", "0") == 2
    assert "-k must be at least 1" in capsys.readouterr().out


def test_the_tool_shows_snippet_and_file_and_leaves_private_notes_out(
    store: MemoryStore, embedder: Embedder
) -> None:
    assert EmbeddingIndex(store, embedder).attach()
    agent = SimpleNamespace(services=Services(memory=store), config=SimpleNamespace(extra={}))
    tool = next(t for t in builtin_tools(agent) if t.name == "memory-search")
    query = "Halvorsen invoice not paid"
    out = tool.run({"query": query})
    assert "Invoice 2041 (id " in out and "money.org" in out and "Sent to Halvorsen Ltd" in out
    assert "Private thoughts" not in out and "vet bill" not in out
    assert "Private thoughts" in titles(store.search(query, 5))  # the store holds it
    store.close()
