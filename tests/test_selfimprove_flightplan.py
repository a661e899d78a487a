"""Self-improvement with nobody attached: a skill proposed during a cron job becomes a
Flight Plan in approvals.org with its diff and test results to read; only the person's
APPROVED installs it (written, trusted by its hash, loaded) on the next heartbeat."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents import boot_agent, skill_folder
from security_agent import SCRIPTED_SKILL, SECURITY_SKILLS, Script, call, make_env
from test_flightplan_approvals import cron, heartbeat, set_state
from test_selfimprove import GREETER

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.engine.loader import Status
from passepartout.engine.pinned import sha256_of


def make(tmp_path: Path, script: Script) -> tuple[Agent, Path]:
    """An agent with no client attached: every ask is a Flight Plan."""
    mine = tmp_path / "myskills"
    mine.mkdir()
    env = make_env(tmp_path, SKILLS_DIR=str(mine))
    skills = skill_folder(tmp_path / "skills", (*SECURITY_SKILLS, "selfimprove.py"),
                          home=env["PASSEPARTOUT_HOME"], own={"scripted.py": SCRIPTED_SKILL})
    agent = boot_agent(Config.from_mapping(env, config_dir=tmp_path / "config"),
                       skills=skills, think=script)
    agent.services["flightplans"].inject = lambda signal: None
    return agent, mine


@pytest.mark.attack
def test_a_skill_proposed_in_the_background_waits_as_a_flight_plan_with_its_diff(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    (tmp_path / "userhome").mkdir()
    turns = [[call("skill-test", file_name="greeter.org", content=GREETER)],
             [call("propose-skill", file_name="greeter.org", content=GREETER,
                   reason="greet people")]]
    agent, mine = make(tmp_path, Script([list(t) for t in turns]))
    try:
        agent.loop.process(cron())
        approvals = tmp_path / "memex" / "system" / "approvals.org"
        text = approvals.read_text()
        assert text.count("* TODO propose-skill(") == 1
        # What the person reads before saying yes: the diff and the tests' result.
        assert "+def greeter_hello(name: str) -> str:" in text
        assert "1 test(s) pass in a scratch copy" in text
        assert not (mine / "greeter.org").exists()
        heartbeat(agent)
        assert not (mine / "greeter.org").exists()  # TODO: nothing runs

        set_state(approvals, "TODO", "APPROVED")
        heartbeat(agent)
        assert (mine / "greeter.org").read_text() == GREETER
        entry = agent.loader.catalog["greeter"]
        assert entry.status is Status.READY and entry.sha256 == sha256_of(GREETER.encode())
        assert "* DONE propose-skill(" in approvals.read_text()
    finally:
        agent.shutdown()
