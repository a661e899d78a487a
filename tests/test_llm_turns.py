"""Multi-step turns through the whole loop: tool calls, gates, actuators, tool output,
the model again; sessions that survive a restart."""

from __future__ import annotations

import json
from pathlib import Path

from fakellm import FakeLLM
from llm_agent import Recorder, make_agent, make_config, user_signal

from passepartout.agent import Agent
from passepartout.loop.actions import Action

pytest_plugins = ["llm_agent"]


def test_two_step_tool_turn(agent_setup: tuple[Agent, Recorder, FakeLLM], tmp_path: Path) -> None:
    agent, rec, fake = agent_setup
    (tmp_path / "memex" / "notes.org").write_text("* Groceries\nmilk, eggs\n")
    fake.tool_call("read-file", {"path": "notes.org"}, call_id="call_a")
    fake.reply("You need milk and eggs.")
    done = agent.loop.process(user_signal("what is on my grocery list?"))

    # tool call -> gates (policy, dispatcher allow a read) -> actuator -> :tool-output -> model
    assert [a.target for a in done] == ["tool", "chat"]
    assert done[0] == Action("tool", "read-file", {"path": "notes.org"}, call_id="call_a")
    # Chunks that arrive while the last is being shown go on together: 1 to 5 events.
    kinds = rec.kinds()
    assert kinds[:2] == ["tool", "tool-result"] and kinds[-2:] == ["reply", "done"]
    assert set(kinds[2:-2]) == {"chunk"} and 1 <= len(kinds[2:-2]) <= 5
    assert "".join(c["text"] for c in rec.of("chunk")) == "You need milk and eggs."
    assert rec.of("tool-result")[0]["ok"] is True
    assert rec.of("reply")[0]["text"] == "You need milk and eggs."
    assert done[1].args == {"streamed": True}
    second = fake.requests[1].messages
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["tool_calls"][0]["id"] == "call_a"
    assert second[3] == {"role": "tool", "tool_call_id": "call_a", "name": "read-file",
                         "content": "* Groceries\nmilk, eggs\n"}
    assert "read-file" in [t["function"]["name"] for t in fake.requests[0].body["tools"]]
    history = agent.services["sessions"].history("s1")
    assert [str(h["role"]) for h in history] == ["user", "assistant", "tool", "assistant"]


def test_refusal_reaches_the_model_as_tool_results(
    provider_env: FakeLLM, tmp_path: Path
) -> None:
    fake = provider_env
    agent, rec = make_agent(make_config(tmp_path), Recorder(answer=False))
    try:
        fake.tool_call("write-file", {"path": "x.org", "content": "hi"}, call_id="call_w")
        fake.reply("I was not allowed to write x.org.")
        agent.loop.process(user_signal("write hi to x.org"))
    finally:
        agent.shutdown()
    assert len(rec.asked) == 1  # the dispatcher asked the person, who said no
    assert rec.of("denied")
    assert not (tmp_path / "memex" / "x.org").exists()
    retry = fake.requests[1].messages
    assert retry[-1]["role"] == "tool" and retry[-1]["tool_call_id"] == "call_w"
    assert retry[-1]["content"].startswith("refused by policy (")
    assert rec.of("reply")[0]["text"] == "I was not allowed to write x.org."


def test_malformed_arguments_are_sent_back(agent_setup: tuple[Agent, Recorder, FakeLLM]) -> None:
    agent, rec, fake = agent_setup
    fake.tool_call("read-file", '{"path": "a', call_id="call_bad")
    fake.reply("Sorry, never mind.")
    agent.loop.process(user_signal("read a"))
    assert "tool" not in rec.kinds()  # nothing ran
    fix = fake.requests[1].messages[-1]
    assert fix["tool_call_id"] == "call_bad" and "not a JSON object" in fix["content"]
    assert rec.of("reply")[0]["text"] == "Sorry, never mind."


def test_session_resumes_after_a_restart(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    config = make_config(tmp_path)
    agent, _ = make_agent(config)
    fake.reply("Nice to meet you, Ada.")
    agent.loop.process(user_signal("my name is Ada", session="chat-7"))
    agent.shutdown()

    again, _ = make_agent(config)  # a new server process on the same home
    try:
        fake.reply("Your name is Ada.")
        again.loop.process(user_signal("what is my name?", session="chat-7"))
        history = again.services["sessions"].history("chat-7")
    finally:
        again.shutdown()
    sent = fake.requests[1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "my name is Ada"
    assert sent[2]["content"] == "Nice to meet you, Ada."
    assert [h["content"] for h in history][-1] == "Your name is Ada."
    assert len(history) == 4


def test_depth_limit_stops_an_endless_tool_loop(
    agent_setup: tuple[Agent, Recorder, FakeLLM], tmp_path: Path
) -> None:
    agent, rec, fake = agent_setup
    (tmp_path / "memex" / "a.txt").write_text("again")
    for _ in range(11):
        fake.tool_call("read-file", {"path": "a.txt"})
    agent.loop.process(user_signal("loop forever"))
    assert any(d["code"] == "depth-limit" for d in rec.of("error"))
    assert fake.request_count == 11  # depth 0..10
    # the history stays well-formed for the next turn
    fake.reply("ok")
    agent.loop.process(user_signal("stop"))
    sent = fake.requests[-1].messages
    calls = [c["id"] for m in sent for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert len(calls) == 11 and calls == answered


def test_tools_schemas_are_derived(agent_setup: tuple[Agent, Recorder, FakeLLM]) -> None:
    agent, _, fake = agent_setup
    fake.reply("hi")
    agent.loop.process(user_signal("hi"))
    tools = {t["function"]["name"]: t["function"] for t in fake.requests[0].body["tools"]}
    assert {"read-file", "write-file", "grep-search", "memory-search", "schedule", "eval",
            "emacs-eval"} <= set(tools)
    schedule = tools["schedule"]["parameters"]
    assert schedule["required"] == ["name", "timestamp", "prompt"]
    assert "org timestamp" in schedule["properties"]["timestamp"]["description"]
    assert json.dumps(tools)  # plain JSON all through
    system = fake.requests[0].messages[0]["content"]
    assert "Tools you can call:" in system and "- read-file" in system
