"""Full-text search by passage: long nodes are found by the passage that matches,
titles and outline paths count, results are per node, and a store indexed before
passages is indexed again on open."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from passepartout.memory import MemoryNode, MemoryStore
from passepartout.memory.search import PASSAGE_CHARS, SPAN, passages

FILLER = "The committee met again and read the minutes of the previous meeting aloud. "


def long_body(needle: str, at: int, paragraphs: int = 40) -> str:
    """A body of ``paragraphs`` paragraphs of filler, ``needle`` in paragraph ``at``."""
    paras = [FILLER * 3 for _ in range(paragraphs)]
    paras[at] = paras[at] + needle
    return "\n\n".join(paras)


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore.open(tmp_path / "memory.sqlite3")
    yield s
    s.close()


def ids(hits: list) -> list[str]:
    return [h.id for h in hits]


def test_passages_cut_at_paragraphs_and_keep_all_text() -> None:
    body = long_body("Quokka sighting at the ferry.", 20)
    parts = passages(body)
    assert len(parts) > 5
    assert all(len(p) <= PASSAGE_CHARS for p in parts)
    assert " ".join(" ".join(parts).split()) == " ".join(body.split())
    assert passages("") == [""]
    # More passages than a node may have: the last one keeps the rest.
    most = passages(body, size=100, most=3)
    assert len(most) == 3 and most[-1].endswith("meeting aloud.")


def test_a_long_node_is_found_by_its_passage_with_that_snippet(store: MemoryStore) -> None:
    store.put(MemoryNode("minutes", "Committee minutes", body=long_body(
        "Someone saw a quokka near the ferry terminal.", 30)))
    store.put(MemoryNode("short", "Ferry timetable", body="Ferries leave every hour."))
    hits = store.text_search("quokka ferry", 5)
    assert ids(hits)[0] == "minutes"
    assert "quokka" in hits[0].snippet  # the passage that matched, not the first one
    assert len(ids(hits)) == len(set(ids(hits)))  # one hit per node, however many passages


def test_a_long_node_is_not_drowned_by_its_length(store: MemoryStore) -> None:
    # A long log names the word twice in one paragraph; a dozen shorter notes name it
    # once each. Scored whole, the log's length sinks it below them all.
    store.put(MemoryNode("long", "Expedition log", body=long_body(
        "The steel crampons broke on the glacier; new crampons from the hut.", 5,
        paragraphs=60)))
    for i in range(12):
        store.put(MemoryNode(f"s{i}", f"Meeting {i}", body=long_body(
            f"Someone mentioned crampons, item {i}.", 2, paragraphs=6)))
    assert ids(store.text_search("crampons", 3))[0] == "long"


def test_the_title_counts_more_than_the_body(store: MemoryStore) -> None:
    store.put(MemoryNode("body", "Garden jobs", body="Turn the compost. Sow the beans."))
    store.put(MemoryNode("title", "Compost", body="Turn it. Sow the beans, weed the beds."))
    assert ids(store.text_search("compost", 2))[0] == "title"


def test_the_outline_path_counts(store: MemoryStore) -> None:
    for version in ("9.5", "9.4", "9.3"):
        top = f"v{version}"
        store.put(MemoryNode(top, f"Version {version}"))
        store.put(MemoryNode(f"{top}-misc", "Miscellaneous", parent=top,
                             body="Small fixes to the exporters and the agenda."))
    found = ids(store.text_search("miscellaneous changes in version 9.4", 6))
    misc = [i for i in found if i.endswith("-misc")]
    assert misc[0] == "v9.4-misc", found  # the same title and text: the path decides


def test_changing_or_deleting_a_long_node_drops_all_its_passages(store: MemoryStore) -> None:
    store.put(MemoryNode("n", "Notes", body=long_body("Zeppelin over the harbour.", 25)))
    assert ids(store.text_search("zeppelin", 3)) == ["n"]
    store.put(MemoryNode("n", "Notes", body=long_body("Airship over the harbour.", 25)))
    assert store.text_search("zeppelin", 3) == []
    assert ids(store.text_search("airship", 3)) == ["n"]
    store.delete("n")
    assert store.text_search("airship", 3) == []
    assert store.text_search("committee", 3) == []


def test_a_store_indexed_whole_is_indexed_by_passage_on_open(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    s = MemoryStore.open(path)
    s.put(MemoryNode("a", "Boiler", body="The boiler service is due in September."))
    s.put(MemoryNode("b", "Minutes", body=long_body("Quokka at the ferry.", 12)))
    s.close()
    # The layout before passages: one row per node, keyed by the node's index rowid.
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM fts")
    conn.execute("INSERT INTO fts(rowid, title, body) SELECT idx.rowid, 'x', 'x' FROM idx")
    conn.execute("DELETE FROM meta WHERE key = 'fts'")
    conn.commit()
    conn.close()
    s = MemoryStore.open(path)
    try:
        assert ids(s.text_search("boiler", 3)) == ["a"]
        assert ids(s.text_search("quokka", 3)) == ["b"]
        rows = s._conn.execute("SELECT rowid FROM fts").fetchall()
        assert {r[0] // SPAN for r in rows} == {
            r[0] for r in s._conn.execute("SELECT rowid FROM idx").fetchall()}
    finally:
        s.close()
