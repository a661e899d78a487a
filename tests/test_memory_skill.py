"""The memory skill in a real agent: the store opens, autosaves, rolls back, remembers."""

from __future__ import annotations

from pathlib import Path

from agents import boot_agent

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.loop import Action
from passepartout.signals import Keyword, Signal


def boot(env: dict[str, str]) -> Agent:
    env = {**env, "PASSEPARTOUT_EMBEDDINGS": "off"}
    agent = boot_agent(Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"])))
    service = agent.registry.exports("memory").memory_SERVICE
    assert service.imported.wait(10), "memory did not open"
    return agent


def test_memory_opens_imports_the_memex_and_survives_a_restart(env: dict[str, str]) -> None:
    note = Path(env["MEMEX_DIR"]) / "projects" / "garden.org"
    note.write_text("* Tomatoes\nWater them every morning.\n", encoding="utf-8")
    agent = boot(env)
    store = agent.services["memory"]
    assert any("Tomatoes" in hit.title for hit in store.search("tomatoes", 5))
    result = agent.tool("remember").run({"title": "Lemon tree", "body": "Repot in spring."})
    assert "remembered" in result
    note_id = result.split("(id ")[1].split(")")[0]
    agent.shutdown()

    again = boot(env)
    try:
        kept = again.services["memory"].get(note_id)
        assert kept is not None and kept.title == "Lemon tree"
        notes = (Path(env["MEMEX_DIR"]) / "agent" / "notes.org").read_text(encoding="utf-8")
        assert "* Lemon tree" in notes and "Repot in spring." in notes
    finally:
        again.shutdown()


def test_a_critical_error_in_the_loop_rolls_memory_back(env: dict[str, str]) -> None:
    agent = boot(env)
    try:
        service = agent.registry.exports("memory").memory_SERVICE
        service.autosave()  # a snapshot of the state before the turn
        before = agent.services["memory"].root_hash()

        def buggy_reflex(signal: Signal) -> Action:
            agent.tool("remember").run({"title": "half-written"})
            raise KeyError("a bug in the middle of a change")

        from passepartout.engine import Skill

        agent.registry.add(
            Skill(
                "buggy",
                priority=500,
                trigger=lambda s: s.sensor == "user-input",
                reflex=buggy_reflex,
            )
        )
        agent.loop.process(Signal(payload={"sensor": Keyword("user-input"), "text": "go"}))
        assert any(r.kind == "pipeline-error" for r in agent.loop.reports)
        assert agent.services["memory"].root_hash() == before
    finally:
        agent.shutdown()
