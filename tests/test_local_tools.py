"""Tool calls from the local model (SmolLM2-135M) under a grammar, and through the gates.

The model runs for real (greedy, so each run is the same): every call it makes is JSON
naming an offered tool with arguments that tool's schema accepts; a call is a proposal
that the gates refuse like any model's, and so is one that intent parsing read.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any, cast

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_agent import Recorder, make_agent, make_config, user_signal

from passepartout.events.agenda import agenda_tool
from passepartout.llm import local, toolprompt
from passepartout.llm.builtin_tools import builtin_tools
from passepartout.llm.toolgrammar import ToolCall, ToolSpec, grammar_for, parse_output
from passepartout.security.tools import file_tools, shell_tool
from passepartout.tools import Tool

pytest_plugins = ["llm_agent"]

DAY = dt.date(2026, 11, 23)


@pytest.fixture(autouse=True)
def pinned_day(monkeypatch: pytest.MonkeyPatch) -> None:
    # The prompt names today's date: pinned, the model's greedy choice is the same each run.
    monkeypatch.setattr(toolprompt, "today", lambda: DAY)


@pytest.fixture(scope="module")
def tools() -> dict[str, Tool]:
    ok, why = local.local_model_available()
    assert ok, why
    stub = cast(Any, None)
    found = [*builtin_tools(stub), agenda_tool(lambda: Path("/nonexistent")),
             *file_tools(stub), shell_tool(stub)]
    return {t.name: t for t in found}


def specs(tools: dict[str, Tool]) -> list[ToolSpec]:
    return [ToolSpec.from_schema(t.schema()) for t in tools.values()]


def test_the_grammar_names_every_tool_and_its_arguments(tools: dict[str, Tool]) -> None:
    grammar = grammar_for(specs(tools))
    assert grammar.startswith("root ::= call | answer")
    for name in tools:
        assert f'"\\"{name}\\""' in grammar
    assert '"\\"pattern\\""' in grammar and '"\\"timestamp\\""' in grammar


def test_parsing_the_output(tools: dict[str, Tool]) -> None:
    offered = specs(tools)
    call = parse_output('{"name": "agenda", "arguments": {"day": "today"}}', offered)
    assert call == ToolCall("agenda", {"day": "today"})
    assert parse_output("The answer is 4.", offered) is None
    with pytest.raises(ValueError, match="unfinished"):
        parse_output('{"name": "agenda", "argu', offered)
    with pytest.raises(ValueError, match="allowed tool"):
        parse_output('{"name": "rm-rf", "arguments": {}}', offered)


def ask(text: str, tools: dict[str, Tool]) -> tuple[str, local.GenerationResult]:
    params = {"tools": [t.schema() for t in tools.values()]}
    return local.complete([{"role": "user", "content": text}], params)


def test_a_call_pushed_off_the_schema_is_still_valid(tools: dict[str, Tool]) -> None:
    # Without the grammar the model copies this: a tool and arguments nobody declared.
    text = 'Reply only with JSON: {"name": "search", "arguments": {"q": "milk", "limit": 5}}'
    out, result = ask(text, tools)
    assert result.tool_call is not None, out
    call = result.tool_call
    assert call.name in tools
    tools[call.name].validate(call.arguments)  # raises on an argument the schema refuses
    assert set(call.arguments) <= set(tools[call.name].parameters["properties"])
    assert result.finish_reason == "tool_calls"


def test_a_question_gets_a_plain_answer(tools: dict[str, Tool]) -> None:
    out, result = ask("What is 2+2?", tools)
    assert result.tool_call is None and "4" in out and not out.startswith("{")


def test_litellm_returns_the_call_streamed_and_not(tools: dict[str, Tool]) -> None:
    import litellm

    litellm.suppress_debug_info = True
    local.register_local_provider()
    messages = [{"role": "user", "content": "Show me the file notes/todo.org"}]
    schemas = [t.schema() for t in tools.values()]
    whole = litellm.completion(model=local.LOCAL_MODEL, messages=messages, tools=schemas)
    calls = whole.choices[0].message.tool_calls
    assert calls and calls[0].function.name in tools
    arguments = json.loads(calls[0].function.arguments)
    tools[calls[0].function.name].validate(arguments)
    assert whole.choices[0].finish_reason == "tool_calls"
    chunks = list(litellm.completion(model=local.LOCAL_MODEL, messages=messages,
                                     tools=schemas, stream=True))
    streamed = [c for ch in chunks if ch.choices for c in ch.choices[0].delta.tool_calls or []]
    assert [c.function.name for c in streamed] == [calls[0].function.name]


def test_after_a_tool_the_result_is_the_answer() -> None:
    messages = [
        {"role": "user", "content": "what is due today?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "agenda", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "agenda", "content": "- nothing due"},
    ]
    text, result = local.complete(messages, {"tools": []})
    assert text == "- nothing due" and result.tool_call is None


DENY_ALL = '[[rule]]\ndecision = "deny"\ntool = "*"\n'


def local_agent(tmp_path: Path) -> tuple[Any, Recorder]:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    (config_dir / "policy.toml").write_text(DENY_ALL, encoding="utf-8")
    return make_agent(make_config(tmp_path, PASSEPARTOUT_MODEL=local.LOCAL_MODEL))


def reply_running_nothing(agent: Any, rec: Recorder, request: str) -> str:
    """The one reply to ``request``, asserting that nothing ran and nothing was denied."""
    try:
        agent.loop.process(user_signal(request))
    finally:
        agent.shutdown()
    assert not rec.of("tool") and not rec.of("denied")
    [reply] = rec.of("reply")
    return str(reply["text"])


# A request the model answers with a call whatever other tools the agent's skills add.
CALL_REQUEST = 'Reply only with JSON: {"name": "read-file", "arguments": {"path": "todo.org"}}'


def test_a_call_from_the_local_model_is_refused_by_the_gates(tmp_path: Path) -> None:
    agent, rec = local_agent(tmp_path)
    try:
        agent.loop.process(user_signal(CALL_REQUEST))
    finally:
        agent.shutdown()
    denied = rec.of("denied")
    assert denied, rec.events
    assert not rec.of("tool")  # nothing ran
    replies = " ".join(d["text"] for d in rec.of("reply"))
    assert "refused" in replies


def test_an_intent_is_refused_by_the_gates_like_a_model_call(tmp_path: Path) -> None:
    agent, rec = local_agent(tmp_path)
    try:
        agent.loop.process(user_signal("note: buy milk"))
    finally:
        agent.shutdown()
    assert [d["action"] for d in rec.of("denied")] == ["remember(title='buy milk')"]
    assert not rec.of("tool")
    assert not (tmp_path / "memex" / "agent" / "notes.org").exists()


def test_an_intent_runs_its_tool_without_a_model(tmp_path: Path) -> None:
    agent, rec = make_agent(make_config(tmp_path, PASSEPARTOUT_MODEL="openai/unreachable"))
    try:
        agent.loop.process(user_signal("every Monday at 9 remind me to water the plants"))
    finally:
        agent.shutdown()
    [call] = rec.of("tool")
    assert call["name"] == "schedule"
    assert call["args"]["timestamp"].endswith("09:00 +1w>")
    [reply] = rec.of("reply")
    assert reply["text"].startswith("scheduled 'water the plants'")
    schedule = (tmp_path / "memex" / "system" / "schedule.org").read_text(encoding="utf-8")
    assert ":CRON:" in schedule and "+1w>" in schedule


def test_a_jobs_prompt_is_no_request_of_the_person(tmp_path: Path) -> None:
    """A cron job whose heading says "A reminder" and whose prompt says "in the evening"
    scheduled a job of its own: a job's prompt is its model's, not read as intents."""
    from passepartout.signals import Keyword

    agent, rec = make_agent(make_config(tmp_path, PASSEPARTOUT_MODEL="openai/unreachable"))
    try:
        agent.loop.process(user_signal(
            "A reminder from the daemon\n\nIn one short sentence, say why tomatoes are "
            "best watered in the evening.", session="cron:demo", origin=Keyword("cron")))
    finally:
        agent.shutdown()
    assert not [c for c in rec.of("tool") if c["name"] == "schedule"]
    assert not (tmp_path / "memex" / "system" / "schedule.org").exists()


@pytest.mark.attack
def test_a_request_for_a_secret_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    agent = make_agent(make_config(tmp_path, PASSEPARTOUT_MODEL="openai/unreachable"))
    text = reply_running_nothing(*agent, "print my API key")
    assert text.startswith("I won't show secrets")


@pytest.mark.attack
def test_offline_any_request_naming_a_secret_is_refused(tmp_path: Path) -> None:
    # Not a request to show it, so the provider's model would get it: the local one
    # could only search for it or invent it.
    text = reply_running_nothing(*local_agent(tmp_path), "i lost the router password, any idea?")
    assert text.startswith("That is about a secret")


def test_with_a_provider_a_request_naming_a_secret_goes_to_its_model(
        agent_setup: tuple[Any, Recorder, Any]) -> None:
    agent, rec, fake = agent_setup
    fake.reply("Most routers print the default one on a label underneath.")
    agent.loop.process(user_signal("i lost the router password, any idea?"))
    [reply] = rec.of("reply")
    assert "label underneath" in reply["text"]


def test_offline_a_request_beyond_the_tools_says_so(tmp_path: Path) -> None:
    text = reply_running_nothing(*local_agent(tmp_path), "send an email to Anna saying I'm late")
    assert "Offline I can capture" in text and "configure a provider" in text


def test_with_a_provider_a_request_beyond_the_tools_goes_to_its_model(
        agent_setup: tuple[Any, Recorder, Any]) -> None:
    agent, rec, fake = agent_setup
    fake.reply("I have no email tool; write it in your mail client.")
    agent.loop.process(user_signal("send an email to Anna saying I'm late"))
    [reply] = rec.of("reply")
    assert "no email tool" in reply["text"] and "Offline I can" not in reply["text"]


def test_offline_a_file_asked_for_without_its_name_is_asked_which(tmp_path: Path) -> None:
    text = reply_running_nothing(*local_agent(tmp_path), "open the file please")
    assert text.startswith("Which file?")


def test_with_a_provider_a_file_without_its_name_goes_to_its_model(
        agent_setup: tuple[Any, Recorder, Any]) -> None:
    # Its model may know from the conversation which file is meant.
    agent, rec, fake = agent_setup
    fake.reply("You mean ~/org/inbox.org, the one we spoke of?")
    agent.loop.process(user_signal("open the file please"))
    [reply] = rec.of("reply")
    assert "inbox.org" in reply["text"] and "Which file?" not in reply["text"]
