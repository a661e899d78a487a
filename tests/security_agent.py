"""Shared set-up for the security tests: an agent with the shipped security skills and
a scripted ``think`` instead of a model, and a channel that records what it is shown."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents import boot_agent, skill_folder

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.loop.actions import Action, ApprovalRequest, Thought
from passepartout.loop.events import Event, fields
from passepartout.signals import Keyword, Signal

SECURITY_SKILLS = ("policy.py", "dispatcher.py", "files.py", "shell.py", "flightplans.py")
SCRIPTED_SKILL = '''
from passepartout.api import Prompt, defskill

defskill(
    "scripted",
    priority=50,
    trigger=lambda s: s.sensor in ("user-input", "tool-output", "cron"),
    prompt=lambda s: Prompt(str(s.payload.get("text", ""))),
)
'''


@dataclass
class Channel:
    """Records events; answers approvals with ``answer`` (or calls it)."""

    answer: bool | Callable[[ApprovalRequest], bool] = False
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)

    def send(self, signal: Signal, event: Event) -> None:
        self.events.append((event.kind, fields(event)))

    def approve(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return self.answer(request) if callable(self.answer) else self.answer

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, d in self.events if k == kind]


@dataclass
class Script:
    """The proposals ``think`` returns, one list per call; then nothing."""

    turns: list[list[Action]] = field(default_factory=list)
    seen: list[Thought] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, thought: Thought) -> list[Action]:
        with self.lock:
            self.seen.append(thought)
            return self.turns.pop(0) if self.turns else []


def make_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    for name in ("state", "config", "memex/system", "work", "skills"):
        (tmp_path / name).mkdir(parents=True, exist_ok=True)
    return {
        "PASSEPARTOUT_HOME": str(tmp_path / "state"),
        "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
        "MEMEX_DIR": str(tmp_path / "memex"),
        "HEARTBEAT_INTERVAL": "3600",
        "PASSEPARTOUT_WORKSPACE": str(tmp_path / "work"),
        **extra,
    }


def make_agent(tmp_path: Path, script: Script, *extra_skills: str,
               **extra: str) -> tuple[Agent, Channel]:
    """An agent with the security skills, ``extra_skills`` (shipped file names) and a
    scripted model."""
    env = make_env(tmp_path, **extra)
    skills = skill_folder(tmp_path / "skills", (*SECURITY_SKILLS, *extra_skills),
                          home=env["PASSEPARTOUT_HOME"], own={"scripted.py": SCRIPTED_SKILL})
    config = Config.from_mapping(env, config_dir=tmp_path / "config")
    channel = Channel()
    return boot_agent(config, skills=skills, think=script, channel=channel), channel


def user(text: str = "go", *, source: str = "emacs", **meta: Any) -> Signal:
    info: dict[str, Any] = {"source": Keyword(source), "session-id": "s1", **meta}
    return Signal(payload={"sensor": Keyword("user-input"), "text": text}, meta=info)


def call(name: str, **args: Any) -> Action:
    return Action("tool", name, args, call_id=f"c-{name}-{time.monotonic_ns()}")


def jobs_agent(tmp_path: Path, script: Script, *extra_skills: str,
               **env_extra: str) -> tuple[Agent, Channel]:
    """An agent with the security skills, the events skill and the chat skill (the
    ``schedule`` tool), ``extra_skills`` (shipped file names) and a scripted model."""
    env = make_env(tmp_path, PASSEPARTOUT_EMBEDDINGS="off", **env_extra)
    skills = skill_folder(tmp_path / "skills", (*SECURITY_SKILLS, "events.py", "chat.py",
                                                *extra_skills),
                          home=env["PASSEPARTOUT_HOME"], own={"scripted.py": SCRIPTED_SKILL})
    config = Config.from_mapping(env, config_dir=tmp_path / "config")
    agent = boot_agent(config, skills=skills, think=script)
    agent.loop.think = script  # the chat skill installs the model layer; a script instead
    assert agent.services["orchestrator"].ready.wait(10)
    channel = Channel()
    agent.attach_faces(channel)
    return agent, channel
