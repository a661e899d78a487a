"""Subtrees tagged @personal never reach a model through memory: not in the context's
fovea or periphery, not in related notes, not in memory-search results."""

from __future__ import annotations

from pathlib import Path

from passepartout.context import Focus, peripheral_sections
from passepartout.memory import MemoryNode, MemoryStore


def store_with_secrets(tmp_path: Path) -> MemoryStore:
    store = MemoryStore.open(tmp_path / "memory.sqlite3")
    store.put(MemoryNode(id="file", title="life.org"))
    store.put(MemoryNode(id="work", title="Garden project", parent="file",
                         body="Tomatoes need sun"))
    store.put(MemoryNode(id="diary", title="Diary", parent="file", tags=("@personal",)))
    store.put(MemoryNode(id="entry", title="Garden thoughts and my health", parent="diary",
                         body="Tomatoes remind me of the clinic"))
    return store


def text_of(sections: list) -> str:  # type: ignore[type-arg]
    return "\n".join(s.text for s in sections)


def test_the_periphery_and_related_notes_leave_private_subtrees_out(tmp_path: Path) -> None:
    store = store_with_secrets(tmp_path)
    shown = text_of(peripheral_sections(store, Focus(id="work"), "tomatoes garden"))
    assert "Garden project" in shown
    assert "Diary" not in shown and "clinic" not in shown and "health" not in shown
    store.close()


def test_a_private_focus_is_not_rendered(tmp_path: Path) -> None:
    store = store_with_secrets(tmp_path)
    shown = text_of(peripheral_sections(store, Focus(id="entry"), "tomatoes"))
    assert "clinic" not in shown and "Garden thoughts" not in shown
    assert "private heading" in shown
    store.close()


def test_the_tag_is_configurable(tmp_path: Path) -> None:
    store = store_with_secrets(tmp_path)
    shown = text_of(peripheral_sections(store, Focus(id="work"), "tomatoes",
                                        private_tag="@secret"))
    assert "Diary" in shown  # with another tag, @personal is an ordinary tag
    store.close()
