"""Flush before truncation: trimmed turns become memory nodes, deterministically."""

from __future__ import annotations

from pathlib import Path

from passepartout.memory import CONVERSATION_LOG_ID, MemoryStore, Turn, flush_turns


def test_each_trimmed_turn_becomes_a_node(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path)
    turns = [
        {"role": "user", "content": "My server is https://example.org/x, logs in /var/log/app.log"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
        {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "shell"}}]},
        {"role": "user", "content": "   "},
    ]
    nodes = flush_turns(store, turns, session_id="s1")
    assert len(nodes) == 3
    session = store.children(CONVERSATION_LOG_ID)
    assert [s.id for s in session] == [f"{CONVERSATION_LOG_ID}/s1"]
    stored = store.children(session[0].id)
    assert [n.properties["ROLE"] for n in stored] == ["user", "assistant", "assistant"]
    assert stored[0].body.startswith("My server")
    assert stored[0].properties["LINKS"] == "https://example.org/x"
    assert stored[0].properties["PATHS"] == "/var/log/app.log"
    assert "tool calls" in stored[2].body
    assert store.search("server")[0].id == stored[0].id
    store.close()


def test_flushing_twice_adds_nothing(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path)
    turns = [Turn("user", "hello", index=0), Turn("assistant", "hi", index=1)]
    flush_turns(store, turns)
    root = store.root_hash()
    assert flush_turns(store, turns) == []
    assert store.root_hash() == root
    # the same words at another place in the conversation are another turn
    assert len(flush_turns(store, [Turn("user", "hello", index=2)])) == 1
    store.close()
