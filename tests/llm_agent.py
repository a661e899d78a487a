"""Shared set-up for the model-layer tests: an agent whose model is the fake server."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from agents import boot_agent, wait_for
from fakellm import FakeLLM, fake_llm  # noqa: F401

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.loop.actions import ApprovalRequest
from passepartout.loop.events import Done, Event, fields
from passepartout.signals import Keyword, Signal

PRICED_MODEL = "openai/gpt-4o-mini"  # in litellm's cost map, served by the fake


@dataclass
class Recorder:
    """A channel that keeps every event and answers approvals with ``answer``."""

    answer: bool = True
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    asked: list[ApprovalRequest] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def send(self, signal: Signal, event: Event) -> None:
        self.events.append((event.kind, fields(event)))
        if isinstance(event, Done):
            self.done.set()

    def approve(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return self.answer

    def kinds(self) -> list[str]:
        return [k for k, _ in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, d in self.events if k == kind]


def make_config(tmp_path: Path, **env: str) -> Config:
    values = {
        "PASSEPARTOUT_HOME": str(tmp_path / "home"),
        "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
        "MEMEX_DIR": str(tmp_path / "memex"),
        "PASSEPARTOUT_WORKSPACE": str(tmp_path / "memex"),
        "PASSEPARTOUT_MODEL": PRICED_MODEL,
        "PASSEPARTOUT_EMBEDDINGS": "off",
        "PASSEPARTOUT_MEMORY_IMPORT": "off",
        **env,
    }
    (tmp_path / "memex").mkdir(exist_ok=True)
    return Config.from_mapping(values, config_dir=tmp_path / "config")


def make_agent(config: Config, recorder: Recorder | None = None) -> tuple[Agent, Recorder]:
    """An agent with every shipped skill, its model the fake server."""
    rec = recorder or Recorder()
    return boot_agent(config, channel=rec), rec


def agent_memory(agent: Agent, timeout: float = 20.0) -> Any:
    """The memory store the memory skill opens in the background."""
    wait_for(lambda: "memory" in agent.services, timeout, "the memory skill's store")
    return agent.services["memory"]


def user_signal(text: str, session: str | None = "s1", **meta: Any) -> Signal:
    info: dict[str, Any] = {"source": Keyword("emacs"), "turn-id": "t1", **meta}
    if session is not None:
        info["session-id"] = session
    return Signal(payload={"sensor": Keyword("user-input"), "text": text}, meta=info)


@pytest.fixture
def provider_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:  # noqa: F811
    """The providers' own variables pointing litellm at the fake server."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    return fake_llm


@pytest.fixture
def agent_setup(
    provider_env: FakeLLM, tmp_path: Path
) -> Iterator[tuple[Agent, Recorder, FakeLLM]]:
    agent, rec = make_agent(make_config(tmp_path))
    yield agent, rec, provider_env
    agent.shutdown()
