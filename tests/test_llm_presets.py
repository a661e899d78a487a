"""A turn's chosen model, tier and preset fields reach the model request: the request's
model, the system text (escaped), the tools offered, and the turn's budget cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import make_agent, make_config, user_signal

from passepartout import protocol
from passepartout.config import Config
from passepartout.errors import ProtocolError
from passepartout.server.methods import METHODS, Bridge, Refusal
from passepartout.turn import TurnChoice

pytest_plugins = ["llm_agent"]


def _names(request_body: dict) -> list[str]:
    return [t["function"]["name"] for t in request_body.get("tools") or []]


def test_a_preset_steers_model_system_and_tools(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    agent, _rec = make_agent(make_config(tmp_path))
    try:
        fake.reply("done")
        agent.loop.process(user_signal(
            "hello", model="openai/chosen-model", tier="cognition",
            system="Answer in French.\n* Injected heading", tools=["read-file"]))
    finally:
        agent.shutdown()
    body = fake.requests[0].body
    assert body["model"] == "chosen-model"
    system = fake.requests[0].messages[0]["content"]
    system = system if isinstance(system, str) else "".join(p["text"] for p in system)
    assert "Answer in French." in system
    assert "\n* Injected heading" not in system  # escaped: no new heading in the prompt
    assert _names(body) == ["read-file"]


def test_a_tool_outside_the_preset_is_not_run(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    agent, rec = make_agent(make_config(tmp_path))
    (tmp_path / "memex" / "notes.org").write_text("* secret\n")
    try:
        fake.tool_call("read-file", {"path": "notes.org"}, call_id="c1")
        fake.reply("I may not read it.")
        done = agent.loop.process(user_signal("read notes", tools=["search-notes"]))
    finally:
        agent.shutdown()
    assert [a.target for a in done] == ["chat"]
    assert not rec.of("tool-result")
    last = fake.requests[1].messages[-1]
    assert last["role"] == "tool" and "preset does not allow" in last["content"]


def test_a_model_insisting_on_a_refused_tool_is_told_so(
    provider_env: FakeLLM, tmp_path: Path
) -> None:
    fake = provider_env
    agent, _rec = make_agent(make_config(tmp_path))
    try:
        for n in range(3):
            fake.tool_call("read-file", {"path": "x.org"}, call_id=f"c{n}")
        done = agent.loop.process(user_signal("read x", tools=[]))
    finally:
        agent.shutdown()
    assert fake.request_count == 3
    assert "tools" not in fake.requests[0].body  # an empty list offers no tool
    assert "preset does not allow" in (done[-1].text or "")


def test_the_turn_budget_stops_a_call(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    agent, rec = make_agent(make_config(tmp_path))
    try:
        fake.reply("never sent")
        agent.loop.process(user_signal("hello", budget=0.0000001))
    finally:
        agent.shutdown()
    assert fake.request_count == 0
    assert any("Budget reached: this turn" in str(d) for _, d in rec.events)


def test_bad_fields_are_refused() -> None:
    with pytest.raises(ProtocolError):
        TurnChoice.from_meta({"tier": "huge"})
    assert TurnChoice.from_meta({"tier": "reflex"}).tier is None  # a reflex job's own
    with pytest.raises(ProtocolError):
        TurnChoice.from_meta({"tools": [1, 2]})
    with pytest.raises(ProtocolError):
        TurnChoice.from_meta({"budget": "lots"})
    assert TurnChoice.from_meta({"budget": "$0.50", "tools": "a b"}) == TurnChoice(
        budget=0.5, tools=frozenset({"a", "b"}))
    bridge = Bridge(Config.from_mapping({"PASSEPARTOUT_MODEL": "openai/a"}))
    with pytest.raises(Refusal, match="tier"):
        METHODS["chat-send"].run(bridge, None,
                                 protocol.ChatSend("s", "t", "hi", {"tier": "huge"}))
    with pytest.raises(Refusal, match="tier"):
        METHODS["chat-send"].run(bridge, None,
                                 protocol.ChatSend("s", "t", "hi", {"tier": "reflex"}))


def test_models_lists_what_is_configured() -> None:
    config = Config.from_mapping({"PASSEPARTOUT_MODEL": "openai/a",
                                  "PASSEPARTOUT_MODEL_COGNITION": "openai/small",
                                  "PASSEPARTOUT_FALLBACK_MODELS": "anthropic/b,openai/a"})
    listed = METHODS["models"].run(Bridge(config), None, protocol.Models())
    assert listed["default"] == "openai/a"
    assert listed["cognition"] == "openai/small" and listed["reasoning"] == "openai/a"
    assert listed["all"] == ["openai/a", "openai/small", "anthropic/b", "local/smollm2"]
