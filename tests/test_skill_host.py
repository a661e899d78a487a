"""The skills' host: a skill file's top level only declares; what it registers applies
when the engine starts it and goes when the engine stops it; a channel name is one
skill's; the calls that wire the agent are the shipped skills'."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_agent import make_config

from passepartout.agent import Agent
from passepartout.engine import Registry, SkillLoader, Status
from passepartout.engine import loader as loader_module
from passepartout.engine.loader import SHIPPED_SKILLS_DIR
from passepartout.engine.pinned import SHIPPED
from passepartout.errors import PassepartoutError
from passepartout.events.orchestrator import Orchestrator
from passepartout.testing.skilltrust import trust_skills


@pytest.mark.parametrize("file", sorted(SHIPPED))
def test_loading_a_shipped_skill_file_only_declares(
    tmp_path: Path, file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Running the file (before any start) opens, installs and starts nothing: no
    service, no channel, no thread, no file in the state directory."""
    agent = Agent(make_config(tmp_path))
    started: list[str] = []
    start = threading.Thread.start

    def recorded(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", recorded)
    loaded = agent.loader.load_module(SHIPPED_SKILLS_DIR / file, Path(file).stem)
    monkeypatch.undo()
    assert loaded.pinned and loaded.skills
    assert list(agent.services) == []
    assert agent.channels == {}
    assert started == [f"skill-load-{Path(file).stem}"]  # the loader's own, joined
    home = agent.config.home
    assert not home.exists() or list(home.iterdir()) == []


MINE = '''
from passepartout.api import defskill, host

DEPENDS_ON = ["events"]
HOST = host()


def mine_on_deploy(event):
    return "seen"


def mine_reflex(job):
    return "ran"


if HOST is not None:
    HOST.register_hook("deploy-check", mine_on_deploy)
    HOST.register_reflex("mine-reflex", mine_reflex)
defskill("mine", trigger=lambda s: False, reflex=lambda s: None)
'''


@pytest.fixture
def agent_with_mine(tmp_path: Path) -> Iterator[Agent]:
    skills = tmp_path / "myskills"
    skills.mkdir()
    (skills / "mine.py").write_text(MINE, encoding="utf-8")
    config = make_config(tmp_path)
    trust_skills(config.home, skills)
    agent = Agent(config, skill_dirs=[SHIPPED_SKILLS_DIR, skills])
    agent.boot(start_threads=False)
    try:
        yield agent
    finally:
        agent.shutdown()


def handlers(orchestrator: Orchestrator, hook: str) -> int:
    return len(orchestrator.hooks._handlers.get(hook, []))


def test_a_skills_hooks_apply_once_and_go_when_it_stops(agent_with_mine: Agent) -> None:
    agent = agent_with_mine
    assert agent.loader.catalog["mine"].status is Status.READY, agent.loader.catalog["mine"]
    orchestrator = agent.services.orchestrator
    assert orchestrator is not None
    assert handlers(orchestrator, "deploy-check") == 1
    assert orchestrator.reflexes.get("mine-reflex") is not None
    for _ in range(2):  # a reload takes back the old version's handler
        assert agent.loader.reload("mine").status is Status.READY
        assert handlers(orchestrator, "deploy-check") == 1
    agent.loader.stop_all()
    assert handlers(orchestrator, "deploy-check") == 0
    assert orchestrator.reflexes.get("mine-reflex") is None


def test_the_events_skill_gives_back_its_channels_when_it_stops(
    agent_with_mine: Agent,
) -> None:
    agent = agent_with_mine
    hook_channel = agent.channels["hook"]
    assert agent.services.hook_replies is hook_channel
    assert agent.loader.reload("events").status is Status.READY
    assert agent.loader.catalog["hooks"].status is Status.READY  # loaded again after it
    assert agent.channels["hook"] is not hook_channel  # the new orchestrator's
    assert agent.channels["hook"] is agent.services.hook_replies
    with pytest.raises(PassepartoutError, match="the channel 'cron' belongs to the skill "
                       "'events'"):
        agent.register_channel("cron", agent.channels["hook"])  # a face cannot take it
    agent.loader.stop_all()
    assert "cron" not in agent.channels and "hook" not in agent.channels
    agent.register_channel("cron", hook_channel)  # free again once the skill stopped
    assert agent.services.orchestrator is None


PAGER = '''
from passepartout.api import defskill, host

HOST = host()


class {name}_Pager:
    def send(self, signal, event):
        return None

    def approve(self, request):
        return False


if HOST is not None:
    HOST.register_channel("pager", {name}_Pager())
defskill("{name}", trigger=lambda s: False, reflex=lambda s: None)
'''


def pager_loader(tmp_path: Path, names: tuple[str, ...]) -> tuple[Agent, SkillLoader]:
    skills = tmp_path / "pagers"
    skills.mkdir()
    for name in names:
        (skills / f"{name}.py").write_text(textwrap.dedent(PAGER.format(name=name)))
    config = make_config(tmp_path)
    agent = Agent(config)
    loader = SkillLoader(Registry(), [skills], host=agent, trust=trust_skills(config.home, skills))
    return agent, loader


@pytest.mark.attack
def test_a_channel_name_registered_twice_is_an_error_the_loader_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = loader_module.is_pinned
    monkeypatch.setattr(loader_module, "is_pinned", lambda file, digest: file in (
        "first.py", "second.py") or shipped(file, digest))
    agent, loader = pager_loader(tmp_path, ("first", "second"))
    catalog = loader.load_all()
    assert catalog["first"].status is Status.READY
    assert catalog["second"].status is Status.FAILED
    assert catalog["second"].error == ("skill 'second': the channel 'pager' is registered "
                                       "already by the skill 'first'; a channel name is one "
                                       "skill's")
    kept = agent.channels["pager"]
    assert type(kept).__name__ == "first_Pager"
    loader.stop_all()
    assert "pager" not in agent.channels


@pytest.mark.attack
def test_a_persons_skill_cannot_register_a_channel(tmp_path: Path) -> None:
    agent, loader = pager_loader(tmp_path, ("mypager",))
    entry = loader.load_all()["mypager"]
    assert entry.status is Status.FAILED
    assert "registering a channel is for the skills that ship" in (entry.error or "")
    assert "Traceback" not in (entry.error or "")
    assert agent.channels == {}


@pytest.mark.attack
def test_a_persons_skill_does_not_get_the_agent(tmp_path: Path) -> None:
    skills = tmp_path / "myskills"
    skills.mkdir()
    (skills / "nosy.py").write_text(
        "from passepartout.api import defskill, host\n"
        "HOST = host()\n"
        "nosy_AGENT = HOST.agent if HOST is not None else None\n"
        "defskill('nosy', trigger=lambda s: False, reflex=lambda s: None)\n")
    config = make_config(tmp_path)
    agent = Agent(config)
    loader = SkillLoader(Registry(), [skills], host=agent, trust=trust_skills(config.home, skills))
    entry = loader.load_all()["nosy"]
    assert entry.status is Status.FAILED
    assert "the agent itself is for the skills that ship" in (entry.error or "")
