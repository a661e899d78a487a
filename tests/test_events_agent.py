"""The events skill in a real agent, against the fake model server: a quiet heartbeat
and a reflex job make no model call; a cognition job reaches the cognition model and
its cost is booked on its heading."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from agents import boot_agent, skill_folder, wait_for
from fakellm import FakeLLM

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.signals import Keyword, Signal
from passepartout.testing.jobapproval import approve_jobs
from passepartout.testing.skilltrust import trust_skills

JOBS = """* Nightly check
:PROPERTIES:
:ID: check-1
:CRON: <2020-01-01 Wed 03:00 +1d>
:TIER: reflex
:REFLEX: count-notes
:END:
* Digest
:PROPERTIES:
:ID: digest-1
:CRON: <2020-01-06 Mon 08:00 +1w>
:END:
Summarize what changed in my notes this week.
* Later
:PROPERTIES:
:ID: later-1
:CRON: <2099-01-01 Thu 09:00 +1d>
:END:
Plan the next century.
"""

SKILLS = ("policy.py", "dispatcher.py", "events.py", "chat.py", "memory.py")


def make_agent(tmp_path: Path, env: dict[str, str], jobs: str) -> Agent:
    memex = Path(env["MEMEX_DIR"])
    (memex / "projects" / "jobs.org").write_text(jobs, encoding="utf-8")
    approve_jobs(env["PASSEPARTOUT_HOME"], memex)  # as the person would
    env = {**env, "PASSEPARTOUT_MODEL": "openai/gpt-4o",
           "PASSEPARTOUT_MODEL_COGNITION": "openai/gpt-4o-mini",
           "MEMORY_AUTO_SAVE_INTERVAL": "0.01", "PASSEPARTOUT_STREAM": "0",
           "PASSEPARTOUT_EMBEDDINGS": "off"}
    config = Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))
    # The skills this needs, without the others' start-up costs (embeddings and such).
    agent = boot_agent(config, skills=skill_folder(tmp_path / "skills", SKILLS), model=True)
    assert agent.services["orchestrator"].ready.wait(10)
    assert agent.registry.exports("memory").memory_SERVICE.imported.wait(10)
    return agent


@pytest.fixture
def model_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    return fake_llm


def beat(agent: Agent) -> None:
    agent.stimuli.inject(Signal(payload={"sensor": Keyword("heartbeat"),
                                         "unix-time": int(time.time())},
                                meta={"source": Keyword("heartbeat")}))
    assert agent.stimuli.wait_idle(30)


def test_quiet_ticks_spend_nothing_and_autosave_rides_on_them(
    tmp_path: Path, env: dict[str, str], model_env: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env, JOBS.split("* Later")[0].replace("2020", "2099"))
    store = agent.services["memory"]
    saves: list[int] = []
    real_save = store.save
    store.save = lambda: (saves.append(1), real_save())[1]  # count the memory skill's autosaves
    try:
        assert agent.status()["skills"]["events"] == "ready"
        for _ in range(3):
            time.sleep(0.02)
            beat(agent)
        assert model_env.request_count == 0
        runs = {h["name"]: h["runs"] for h in agent.services["heartbeat"].handlers()}
        assert runs["cron"] == 3 and runs["memory-autosave"] >= 2
        assert len(saves) == runs["memory-autosave"]
        assert [j["id"] for j in agent.services["orchestrator"].jobs()] == ["check-1", "digest-1"]
    finally:
        agent.shutdown()


def test_a_reflex_job_runs_without_a_model_and_a_cognition_job_is_booked_on_its_heading(
    tmp_path: Path, env: dict[str, str], model_env: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env, JOBS)
    counted: list[Any] = []
    agent.services["orchestrator"].register_reflex(
        "count-notes", lambda job: counted.append(job.id) or "42 notes")
    model_env.for_model("gpt-4o-mini").reply(
        "Three notes changed.", usage={"prompt_tokens": 1200, "completion_tokens": 300})
    try:
        beat(agent)
        assert agent.stimuli.wait_idle(30)
        assert counted == ["check-1"]
        assert model_env.request_count == 1  # the digest; the reflex job asked nobody
        assert model_env.last_request.model == "gpt-4o-mini"
        orch = agent.services["orchestrator"]
        wait_for(lambda: not orch.job("digest-1").running)
        digest = orch.job("digest-1")
        assert digest.last_result == "Three notes changed."
        assert orch.job("check-1").last_result == "42 notes"
        calls = [c for c in agent.services["ledger"].calls() if c.heading == "digest-1"]
        assert len(calls) == 1
        assert calls[0].origin == "cron" and calls[0].tier == "cognition"
        assert calls[0].cost > 0
        assert agent.services["ledger"].headings_total(["digest-1"]) == pytest.approx(
            calls[0].cost)
        beat(agent)  # both ran: nothing is due now
        assert model_env.request_count == 1 and counted == ["check-1"]
        log = (Path(env["PASSEPARTOUT_HOME"]) / "events.org").read_text()
        assert "reflex count-notes done" in log and "digest-1: done" in log
    finally:
        agent.shutdown()


WATCHER_SKILL = '''"""A skill of the test's own: it registers a hook handler when it loads."""
from passepartout.api import defskill, host

DEPENDS_ON = ["events"]
AGENT = host()
watcher_SEEN = []


def watcher_reflex(signal):
    return None


if AGENT is not None:
    AGENT.register_hook(
        "notify-me", lambda event: watcher_SEEN.append((event.node_id, event.change)))
defskill("watcher", priority=1, depends_on=DEPENDS_ON, trigger=lambda s: False,
         reflex=watcher_reflex)
'''

GUARDED = "* Guarded\n:PROPERTIES:\n:ID: guard-1\n:HOOK: notify-me\n:END:\nKeep it intact.\n"


def test_a_hook_node_edited_while_down_fires_once_the_skills_are_loaded(
    tmp_path: Path, env: dict[str, str], model_env: FakeLLM
) -> None:
    memex = Path(env["MEMEX_DIR"])
    (memex / "projects" / "guarded.org").write_text(GUARDED, encoding="utf-8")
    first = make_agent(tmp_path / "one", env, "")
    first.shutdown()
    (memex / "projects" / "guarded.org").write_text(GUARDED.replace("intact", "whole"))
    (tmp_path / "two" / "skills").mkdir(parents=True)
    (tmp_path / "two" / "skills" / "watcher.py").write_text(WATCHER_SKILL, encoding="utf-8")
    trust_skills(env["PASSEPARTOUT_HOME"], tmp_path / "two" / "skills")  # as the person would
    second = make_agent(tmp_path / "two", env, "")
    try:
        seen = second.registry.exports("watcher").watcher_SEEN
        deadline = time.monotonic() + 10
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seen == [("guard-1", "changed")]
    finally:
        second.shutdown()
