"""Reloading a skill loads the skills that depend on it again, after it: the events
skill's new orchestrator used to start with none of the hook handlers and cron
reflexes the other skills had given the old one, so every :HOOK: stopped working."""

from __future__ import annotations

from pathlib import Path

from agents import wait_for
from fakellm import FakeLLM
from hooks_agent import Client, edit, events_text, make_agent

pytest_plugins = ["llm_agent"]  # provider_env: the fake model as the providers' settings

HEADING = "* Project\n** Watched\n:PROPERTIES:\n:ID: n-1\n:HOOK: notify\n:END:\nDraft.\n"


def test_hooks_and_memory_work_after_the_events_skill_reloads(
    tmp_path: Path, env: dict[str, str], provider_env: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env, {"projects/p.org": HEADING})
    try:
        before = agent.services["orchestrator"]
        reloads = {e.name: e.reloads for e in agent.loader.report()}
        entry = agent.loader.reload("events")
        assert entry.status == "ready" and entry.error is None
        orchestrator = agent.services["orchestrator"]
        assert orchestrator is not before and not before.watching
        after = {e.name: e.reloads for e in agent.loader.report()}
        # events, and what uses it (hooks, memory); not what it does not touch
        assert {n for n in after if after[n] != reloads[n]} == {"events", "hooks", "memory"}
        assert "notify" in orchestrator.hooks.names()
        # As at a start: the memex scanned, memory imported (an edit during the scan
        # is news of a file not yet known, so it would fire as "added").
        assert orchestrator.ready.wait(30)
        wait_for(lambda: orchestrator.watching, what="the new watcher")
        memory_skill = agent.registry.exports("memory")
        assert memory_skill is not None and memory_skill.memory_SERVICE.imported.wait(30)
        client = Client()
        agent.attach_faces(client)
        memory = wait_for(lambda: agent.services.memory, what="memory open again")
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "Draft.", "Final.", env=env)
        told = ("info", "hook: notify: 'Watched' changed (disk)")
        wait_for(lambda: told in client.notes, what="the hook's notification")
        assert "hook: notify: 'Watched' changed (disk)" in events_text(env)
        assert memory.snapshots()  # the reopened store answers
    finally:
        agent.shutdown()
