"""``defskill(start=, stop=)``: the engine starts a skill after loading it and stops it
before a reload, an unload or the agent's stop; reloading memory leaves one store and
one watcher."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from agents import boot_agent
from llm_agent import make_config

from passepartout.agent import Agent
from passepartout.engine import Registry, SkillLoader, Status
from passepartout.events.watcher import MemexWatcher
from passepartout.loop.hooks import ROLLBACK
from passepartout.memory.store import MemoryStore
from passepartout.testing.skilltrust import trust_skills

LIFE = """
from passepartout.api import defskill
life_EVENTS = []
def life_start():
    life_EVENTS.append("start")
    {fail}
def life_stop():
    life_EVENTS.append("stop")
defskill("life", trigger=lambda s: False, reflex=lambda s: None,
         start=life_start, stop=life_stop)
"""


def loader_for(tmp_path: Path, fail: str = "") -> tuple[Registry, SkillLoader, Path]:
    skills = tmp_path / "skills"
    skills.mkdir(exist_ok=True)
    path = skills / "life.py"
    path.write_text(textwrap.dedent(LIFE.format(fail=fail)), encoding="utf-8")
    store = trust_skills(tmp_path / "state", skills)
    registry = Registry()
    loader = SkillLoader(registry, [skills], trust=store)
    loader.load_all()
    return registry, loader, path


def events_of(registry: Registry) -> list[str]:
    exports = registry.exports("life")
    assert exports is not None
    events: list[str] = exports.life_EVENTS
    return events


def test_start_after_load_and_stop_before_reload_and_at_the_end(tmp_path: Path) -> None:
    registry, loader, _ = loader_for(tmp_path)
    first = events_of(registry)
    assert first == ["start"]
    loader.reload("life")
    second = events_of(registry)
    assert first == ["start", "stop"] and second == ["start"]  # the old stopped first
    loader.stop_all()
    assert second == ["start", "stop"]


def test_a_skill_whose_start_fails_does_not_serve(tmp_path: Path) -> None:
    registry, loader, _ = loader_for(tmp_path, fail='raise RuntimeError("no disk")')
    entry = loader.catalog["life"]
    assert entry.status is Status.FAILED and "no disk" in (entry.error or "")
    assert registry.get("life") is None


@pytest.fixture
def tracked(monkeypatch: pytest.MonkeyPatch) -> tuple[list[MemoryStore], list[MemexWatcher]]:
    stores: list[MemoryStore] = []
    watchers: list[MemexWatcher] = []
    opened = MemoryStore.open.__func__  # type: ignore[attr-defined]
    started = MemexWatcher.start

    def open_store(cls: type[MemoryStore], *args: Any, **kwargs: Any) -> MemoryStore:
        store: MemoryStore = opened(cls, *args, **kwargs)
        stores.append(store)
        return store

    def start_watcher(self: MemexWatcher) -> list[Path]:
        watchers.append(self)
        return started(self)

    monkeypatch.setattr(MemoryStore, "open", classmethod(open_store))
    monkeypatch.setattr(MemexWatcher, "start", start_watcher)
    return stores, watchers


def wait_imported(agent: Agent) -> Any:
    exports = agent.registry.exports("memory")
    assert exports is not None
    service = exports.memory_SERVICE
    assert service.imported.wait(20), "the memory skill did not open and import"
    return service


def test_reloading_memory_twice_leaves_one_store_and_one_watcher(
    tmp_path: Path, tracked: tuple[list[MemoryStore], list[MemexWatcher]]
) -> None:
    stores, watchers = tracked
    (tmp_path / "memex" / "projects").mkdir(parents=True)
    (tmp_path / "memex" / "projects" / "a.org").write_text("* A\nbody\n", encoding="utf-8")
    agent = boot_agent(make_config(tmp_path, PASSEPARTOUT_MEMORY_IMPORT="on"))
    try:
        wait_imported(agent)
        for _ in range(2):
            entry = agent.loader.reload("memory")
            assert entry.status is Status.READY, entry.error
            service = wait_imported(agent)
        mine = [w for w in watchers if w.callback.__qualname__.endswith("_import.<locals>.changed")]
        assert len(stores) == 3 and len(mine) == 3  # each start opened its own
        assert [s._closed for s in stores] == [True, True, False]
        assert [w.running for w in mine] == [False, False, True]
        assert agent.services.memory is stores[-1] is service.store
        assert agent.hooks.owners(ROLLBACK) == ["memory"]
    finally:
        agent.shutdown()
    assert all(s._closed for s in stores) and not any(w.running for w in mine)
    assert agent.services.memory is None


def test_an_agent_stops_its_skills_once(tmp_path: Path) -> None:
    agent = boot_agent(make_config(tmp_path))
    service = wait_imported(agent)
    store = service.store
    agent.shutdown()
    assert store._closed and service.store is None and agent.services.memory is None
