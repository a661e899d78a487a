"""Org files <-> memory: import with orgparse, re-sync, atomic write-back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from passepartout.memory import MemoryNode, MemoryStore, import_org_file, render_file, write_back
from passepartout.memory.orgimport import file_node_id

NOTES = """#+TITLE: Notes A
Preamble text.

* TODO [#A] Buy milk :shop:errand:
SCHEDULED: <2024-01-01 Mon>
:PROPERTIES:
:ID: milk-1
:Effort: 1:00
:END:

Whole milk.

** Child heading
   indented child body
** Child heading
second of same name
* DONE Finished thing
CLOSED: [2024-01-02 Tue 10:00]
* Plain
"""


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    d = tmp_path / "memex"
    (d / "sub").mkdir(parents=True)
    (d / "a.org").write_text(NOTES)
    (d / "sub" / "b.org").write_text("* Heading B\ntext b\n")
    (d / ".git").mkdir()
    (d / ".git" / "hidden.org").write_text("* hidden\n")
    return d


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore.open(tmp_path / "state")
    yield s
    s.close()


def test_import_reads_the_outline(store: MemoryStore, memex: Path) -> None:
    report = store.import_memex(memex)
    assert report.files == 2 and not report.skipped
    milk = store.get("milk-1")
    assert milk is not None
    assert (milk.todo, milk.title, milk.tags) == ("TODO", "[#A] Buy milk", ("shop", "errand"))
    assert milk.properties == {"ID": "milk-1", "Effort": "1:00"}
    assert milk.planning == "SCHEDULED: <2024-01-01 Mon>"
    assert milk.parent == file_node_id("a.org") and milk.source == "a.org"
    kids = store.children("milk-1")
    assert [k.title for k in kids] == ["Child heading", "Child heading"]
    assert kids[0].id != kids[1].id
    assert store.get(file_node_id("a.org")).title == "Notes A"  # type: ignore[union-attr]
    assert store.get(file_node_id(".git/hidden.org")) is None


def test_render_gives_back_the_file(store: MemoryStore, memex: Path) -> None:
    store.import_memex(memex)
    assert render_file(store, file_node_id("a.org")) == NOTES


def test_reimport_is_a_no_op_then_follows_edits(store: MemoryStore, memex: Path) -> None:
    store.import_memex(memex)
    root = store.root_hash()
    store.import_memex(memex)
    assert store.root_hash() == root
    (memex / "a.org").write_text(NOTES.replace("* Plain\n", ""))
    (memex / "sub" / "b.org").unlink()
    report = store.import_memex(memex)
    assert report.removed >= 2
    assert [n.title for n in store.children(file_node_id("a.org"))] == [
        "[#A] Buy milk",
        "Finished thing",
    ]
    assert store.get(file_node_id("sub/b.org")) is None
    assert store.verify().ok


def test_unparseable_file_is_named_and_skipped(store: MemoryStore, memex: Path) -> None:
    (memex / "broken.org").write_bytes(b"* Bad\n\xff\xfe not utf-8\n")
    report = store.import_memex(memex)
    assert report.files == 2
    assert report.skipped[0][0] == "broken.org" and "UnicodeDecodeError" in report.skipped[0][1]
    assert "skipped broken.org" in report.summary()
    with pytest.raises(ValueError, match=r"broken\.org"):
        import_org_file(store, memex / "broken.org", memex)


def test_watcher_entry_point_resyncs_one_file(store: MemoryStore, memex: Path) -> None:
    store.import_memex(memex)
    (memex / "sub" / "b.org").write_text("* Heading B\nnew text\n* Another\n")
    assert import_org_file(store, memex / "sub" / "b.org", memex) == 3
    assert [n.title for n in store.children(file_node_id("sub/b.org"))] == ["Heading B", "Another"]
    (memex / "sub" / "b.org").unlink()
    assert import_org_file(store, memex / "sub" / "b.org", memex) == 0
    assert store.get(file_node_id("sub/b.org")) is None


def test_write_back_is_atomic_and_survives_reimport(store: MemoryStore, memex: Path) -> None:
    store.import_memex(memex)
    store.put(MemoryNode("agent-note", "Remember the cat", parent="milk-1", body="feed her"))
    inode_before = os.stat(memex / "a.org").st_ino
    path = write_back(store, "agent-note", memex)
    assert path == (memex / "a.org").resolve()
    text = path.read_text()
    assert "\n** Remember the cat\n:PROPERTIES:\n:ID: agent-note\n:END:\nfeed her\n" in text
    assert os.stat(path).st_ino != inode_before  # replaced by rename, not rewritten in place
    assert not [p for p in memex.iterdir() if p.name.startswith(".a.org")]  # no temp left
    store.import_memex(memex)  # what the watcher does when it sees the change
    assert store.get("agent-note").body == "feed her"  # type: ignore[union-attr]
    assert store.get("agent-note").parent == "milk-1"  # type: ignore[union-attr]


def test_write_back_of_a_node_in_no_file(store: MemoryStore, memex: Path) -> None:
    store.put(MemoryNode("loose", "Loose"))
    assert write_back(store, "loose", memex) is None
    store.put(MemoryNode(file_node_id("../evil.org"), "x", source="../evil.org"))
    with pytest.raises(ValueError, match="outside"):
        write_back(store, file_node_id("../evil.org"), memex)
