"""A new memex: the scan directory projects/ is made after the agent started, and a
hooked heading written there still fires its hook; a directory made in the memex is
imported into memory (its org files), never read as a file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agents import wait_for
from fakellm import FakeLLM
from hooks_agent import Client, edit, make_agent

from passepartout.memory import MemoryStore
from passepartout.memory.orgimport import import_org_file

HOOKED = "* Project\n** Watched\n:PROPERTIES:\n:ID: n-1\n:HOOK: notify\n:END:\nDraft.\n"


def test_a_hook_fires_in_a_projects_directory_made_after_the_start(
    tmp_path: Path, env: dict[str, str], fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    projects = Path(env["MEMEX_DIR"]) / "projects"
    shutil.rmtree(projects)  # a new memex has none
    agent = make_agent(tmp_path, env, {})
    emacs = Client()
    agent.attach_faces(emacs)
    try:
        projects.mkdir()
        (projects / "p.org").write_text(HOOKED, encoding="utf-8")
        orchestrator = agent.services["orchestrator"]
        wait_for(lambda: orchestrator.registry.node("n-1"), what="the new heading")
        edit(projects / "p.org", "Draft.", "Final.", env=env)
        told = ("info", "hook: notify: 'Watched' changed (disk)")
        wait_for(lambda: told in emacs.notes, what="the notification")
        # Outside the scan directories nothing fires.
        (Path(env["MEMEX_DIR"]) / "other").mkdir()
        (Path(env["MEMEX_DIR"]) / "other" / "q.org").write_text(
            HOOKED.replace("n-1", "n-2"), encoding="utf-8")
        wait_for(lambda: agent.services["memory"].get("n-2"), what="memory's copy")
        assert orchestrator.registry.node("n-2") is None
    finally:
        agent.shutdown()


def test_a_directory_is_imported_as_its_org_files(tmp_path: Path) -> None:
    memex = tmp_path / "memex"
    (memex / "new" / "deep").mkdir(parents=True)
    (memex / "new" / "a.org").write_text("* A\n", encoding="utf-8")
    (memex / "new" / "deep" / "b.org").write_text("* B\n** C\n", encoding="utf-8")
    store = MemoryStore.open(tmp_path / "memory.sqlite3")
    try:
        assert import_org_file(store, memex / "new", memex) == 5  # two files, three headings
        assert store.get("file:new/deep/b.org") is not None
    finally:
        store.close()
