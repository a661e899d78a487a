"""A critical error in the loop rolls memory back to the last snapshot (seed 001)."""

from __future__ import annotations

from pathlib import Path

from passepartout.engine.registry import Registry
from passepartout.engine.skill import Skill
from passepartout.loop.actions import Action, Thought
from passepartout.loop.core import Loop
from passepartout.memory import MemoryNode, MemoryStore


def test_critical_error_restores_the_earlier_root_hash(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path)
    store.put(MemoryNode("facts", "Facts", body="the sky is blue"))
    store.snapshot("before turn")
    before = store.root_hash()

    def think(thought: Thought) -> list[Action]:
        # The turn writes memory, then fails in a way no recovery expects.
        store.put(MemoryNode("facts", "Facts", body="half-written nonsense"))
        store.put(MemoryNode("junk", "Junk", parent="facts"))
        assert store.root_hash() != before
        raise RuntimeError("CRITICAL BRAIN FAILURE")

    registry = Registry()
    registry.add(
        Skill(
            name="writer",
            trigger=lambda s: s.sensor == "user-input",
            prompt=lambda s: "answer",
        )
    )
    loop = Loop(registry, think=think, rollback=lambda: store.rollback(0))
    loop.process("hello")
    assert store.root_hash() == before
    assert store.get("junk") is None
    assert store.get("facts").body == "the sky is blue"  # type: ignore[union-attr]
    assert any("CRITICAL BRAIN FAILURE" in r.message for r in loop.reports)
    assert store.verify().ok
    store.close()
