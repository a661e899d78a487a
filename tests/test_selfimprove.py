"""Self-improvement through the gates: a skill proposed by the model is vetted and its
own tests run in a sandboxed scratch copy before the person is asked; only their yes to
that exact content writes, trusts and loads it; a version that does not load is put
back and the previous one goes on serving; shipped skills are never rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from security_agent import Channel, Script, call, make_agent, user

from passepartout.agent import Agent
from passepartout.engine.loader import SHIPPED_SKILLS_DIR, Status
from passepartout.engine.pinned import sha256_of

GREETER = """#+TITLE: Greeter
* Code
#+begin_src python
from passepartout.api import defskill, make_tool


def greeter_hello(name: str) -> str:
    \"\"\"Greet someone.

    Args:
        name: who
    \"\"\"
    return "GREETING " + name


defskill("greeter", tools=[make_tool(greeter_hello, name="greeter-hello")])
#+end_src
* Tests
#+begin_src python :test
def test_hello():
    assert greeter_hello("Ada") == "GREETING Ada"
#+end_src
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    (tmp_path / "userhome").mkdir()
    return tmp_path / "userhome"


def make(tmp_path: Path, script: Script, answer: bool) -> tuple[Agent, Channel, Path]:
    mine = tmp_path / "myskills"
    mine.mkdir()
    agent, channel = make_agent(tmp_path, script, "selfimprove.py", SKILLS_DIR=str(mine))
    channel.answer = answer
    return agent, channel, mine


def outputs(channel: Channel) -> list[str]:
    return [str(d.get("output")) for d in channel.of("tool-result")]


@pytest.mark.attack
def test_a_tested_skill_is_asked_with_its_diff_and_installed_only_on_yes(
        tmp_path: Path, home: Path) -> None:
    turns = [[call("skill-test", file_name="greeter.org", content=GREETER)],
             [call("propose-skill", file_name="greeter.org", content=GREETER,
                   reason="greet people")]]
    agent, chan, mine = make(tmp_path, Script([list(t) for t in turns]), answer=False)
    agent.loop.process(user())
    assert "1 test(s) pass in a scratch copy" in outputs(chan)[0]
    assert len(chan.asked) == 1
    asked = "; ".join(chan.asked[0].reasons)
    assert "a new skill greeter" in asked and "+def greeter_hello" in asked
    assert not (mine / "greeter.org").exists()  # no answer is a no
    assert "greeter" not in agent.loader.catalog

    chan.answer = True
    agent.loop.think = Script([turns[1]])
    agent.loop.process(user())
    assert (mine / "greeter.org").read_text() == GREETER
    entry = agent.loader.catalog["greeter"]
    assert entry.status is Status.READY and entry.sha256 == sha256_of(GREETER.encode())
    assert agent.loader.trust is not None
    assert agent.loader.trust.is_trusted("greeter", entry.sha256)
    assert "greeter is ready" in outputs(chan)[-1]


@pytest.mark.attack
def test_a_proposal_whose_tests_were_not_run_or_fail_is_refused(
        tmp_path: Path, home: Path) -> None:
    failing = GREETER.replace('== "GREETING Ada"', '== "hi"')
    agent, chan, mine = make(tmp_path, Script([
        [call("propose-skill", file_name="greeter.org", content=GREETER, reason="r")],
        [call("skill-test", file_name="greeter.org", content=failing)],
        [call("propose-skill", file_name="greeter.org", content=failing, reason="r")],
    ]), answer=True)
    agent.loop.process(user())
    denied = [str(d.get("reason")) for d in chan.of("denied")]
    assert any("skill-test first" in r for r in denied)
    assert "1 of 1 test(s) fail" in outputs(chan)[0]
    assert any("tests do not pass" in r for r in denied)
    assert chan.asked == [] and not (mine / "greeter.org").exists()


@pytest.mark.attack
def test_shipped_skills_and_vetting_failures_are_never_proposed(
        tmp_path: Path, home: Path) -> None:
    policy = (SHIPPED_SKILLS_DIR / "policy.py").read_text()
    escape = GREETER.replace("from passepartout.api", "import os\nfrom passepartout.api")
    agent, chan, mine = make(tmp_path, Script([
        [call("skill-test", file_name="policy.py", content=policy + "\n# looser\n")],
        [call("skill-test", file_name="greeter.org", content=escape)],
        [call("propose-skill", file_name="../skills/files.py", content="x = 1\n", reason="r")],
    ]), answer=True)
    agent.loop.process(user())
    errors = [str(d.get("message", d)) for d in chan.of("error")] + outputs(chan)
    text = " ".join(errors + [str(d.get("reason")) for d in chan.of("denied")])
    assert "shipped skills are never rewritten" in text
    assert "import of os is not allowed" in text
    assert "plain file name" in text
    assert chan.asked == [] and list(mine.iterdir()) == []


def test_a_version_that_does_not_load_is_put_back_and_the_old_one_serves(
        tmp_path: Path, home: Path) -> None:
    # It loads in the scratch copy (no host there) and fails in the agent.
    broken = GREETER.replace('defskill("greeter"',
                             'if host() is not None:\n    raise RuntimeError("boom")\n'
                             'defskill("greeter"').replace("import defskill,",
                                                           "import defskill, host,")
    agent, chan, mine = make(tmp_path, Script([
        [call("skill-test", file_name="greeter.org", content=GREETER)],
        [call("propose-skill", file_name="greeter.org", content=GREETER, reason="r")],
        [call("skill-test", file_name="greeter.org", content=broken)],
        [call("propose-skill", file_name="greeter.org", content=broken, reason="r")],
    ]), answer=True)
    agent.loop.process(user())
    assert "a change to your skill greeter" in "; ".join(chan.asked[-1].reasons)
    assert "boom" in outputs(chan)[-1] and "goes on serving" in outputs(chan)[-1]
    assert (mine / "greeter.org").read_text() == GREETER
    entry = agent.loader.catalog["greeter"]
    assert entry.status is Status.READY and entry.sha256 == sha256_of(GREETER.encode())
    assert agent.tool("greeter-hello") is not None
