"""Context assembly: the foveal-peripheral rendering and the fit to CONTEXT_MAX_TOKENS."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import PRICED_MODEL, agent_memory, make_agent, make_config, user_signal

from passepartout.context import Focus, Section, assemble, peripheral_sections
from passepartout.errors import PipelineError
from passepartout.llm.think import INSTRUCTIONS
from passepartout.llm.tokens import count_tokens, counter, tools_tokens
from passepartout.llm.translate import system_message
from passepartout.memory import CONVERSATION_LOG_ID, MemoryNode, MemoryStore

pytest_plugins = ["llm_agent"]

count = counter(None)
PREFIX = {"role": "system", "content": "You are a careful agent."}


def long_history(turns: int, words: int) -> list[dict[str, str]]:
    out = []
    for i in range(turns):
        out.append({"role": "user", "content": f"question {i} " + "lorem " * words})
        out.append({"role": "assistant", "content": f"answer {i} " + "ipsum " * words})
    return out


def test_200k_token_history_is_trimmed_keeping_prefix_and_input(
    provider_env: FakeLLM, tmp_path: Path
) -> None:
    fake = provider_env
    agent, _ = make_agent(make_config(tmp_path, CONTEXT_MAX_TOKENS="8000"))
    store = agent_memory(agent)
    try:
        sessions = agent.services["sessions"]
        history = long_history(200, 500)
        assert count_tokens(history, PRICED_MODEL) > 200_000
        sessions.append("s1", *history)
        fake.reply("trimmed and answered")
        agent.loop.process(user_signal("the current question, kept whole"))
        sent = fake.requests[0].messages
        assert sent[0]["role"] == "system" and sent[0]["content"].startswith(INSTRUCTIONS)
        assert sent[-1]["role"] == "user"
        assert sent[-1]["content"].endswith("the current question, kept whole")
        tools = fake.requests[0].body["tools"]
        # The schemas counted as the agent counts them (their compact JSON).
        total = count_tokens(sent, PRICED_MODEL) + tools_tokens(tools, PRICED_MODEL)
        assert total <= 8000
        assert len(sent) > 4  # the newest turns are still there
        assert "earlier messages of this conversation were left out" in sent[1]["content"]
        kept = [m["content"] for m in sent if m["role"] == "assistant"]
        assert kept[-1].startswith("answer 199 ")  # the newest turn survived, whole
        # the dropped turns were flushed into memory first
        log = store.children(f"{CONVERSATION_LOG_ID}/s1")
        assert len(log) >= 300
        # the stored session is untouched: trimming is for the request only
        assert len(sessions.messages("s1")) == 402
    finally:
        agent.shutdown()


def test_drop_order_peripheral_then_turns_then_fovea() -> None:
    sections = [
        Section("focus", "FOCUS " + "f " * 100, 4),
        Section("ancestors", "ANCESTORS " + "a " * 100, 3),
        Section("siblings", "SIBLINGS " + "s " * 100, 1),
        Section("related", "RELATED " + "r " * 100, 0),
    ]
    history = [*long_history(3, 100), {"role": "user", "content": "now"}]
    full = assemble(PREFIX, history, sections, max_tokens=100_000, count=count)
    assert not full.dropped and not full.dropped_sections
    budget = full.tokens - 150  # room enough once related and siblings go
    first = assemble(PREFIX, history, sections, max_tokens=budget, count=count)
    assert first.dropped_sections == ["related", "siblings"] and not first.dropped
    tight = assemble(PREFIX, history, sections, max_tokens=first.tokens - 150, count=count)
    assert tight.dropped_sections == ["related", "siblings"]
    assert [m["content"].split()[0] for m in tight.dropped[:2]] == ["question", "answer"]
    bare = assemble(PREFIX, history, sections, max_tokens=120, count=count)
    assert bare.dropped_sections == ["related", "siblings", "ancestors", "focus"]
    assert bare.messages[0] is PREFIX and bare.messages[-1]["content"] == "now"
    assert bare.tokens <= 120
    last = full.messages[-1]["content"]
    assert last.startswith("<context>\nFOCUS") and last.endswith("now")


def test_a_turn_with_tool_calls_is_dropped_whole() -> None:
    history = [
        {"role": "user", "content": "old " * 300},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "result " * 300},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "new"},
    ]
    out = assemble(PREFIX, history, [], max_tokens=200, count=count)
    assert [m.get("role") for m in out.dropped] == ["user", "assistant", "tool", "assistant"]
    assert all(m.get("role") != "tool" for m in out.messages)


def test_current_turn_tool_outputs_are_condensed_last() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    call2 = {**call, "id": "c2"}
    history = [
        {"role": "user", "content": "do it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "big " * 2000},
        {"role": "assistant", "content": None, "tool_calls": [call2]},
        {"role": "tool", "tool_call_id": "c2", "content": "latest"},
    ]
    out = assemble(PREFIX, history, [], max_tokens=400, count=count)
    assert out.condensed > 1500
    assert out.messages[3]["content"].startswith("[output condensed")
    assert out.messages[-1]["content"] == "latest"


def test_input_too_long_for_the_budget_is_a_clear_error() -> None:
    history = [{"role": "user", "content": "word " * 5000}]
    with pytest.raises(PipelineError, match="CONTEXT_MAX_TOKENS=1000"):
        assemble(PREFIX, history, [], max_tokens=1000, count=count)


def test_foveal_peripheral_rendering(tmp_path: Path) -> None:
    store = MemoryStore.open(tmp_path / "m")
    store.put_many([
        MemoryNode("file", "projects.org"),
        MemoryNode("p", "Garden", parent="file", tags=("home",)),
        MemoryNode("a", "Plant tomatoes", parent="p", todo="TODO",
                   properties={"EFFORT": "1h"}, body="Buy seedlings first.\nWater daily."),
        MemoryNode("b", "Fix the fence", parent="p"),
        MemoryNode("a1", "Choose a variety", parent="a"),
        MemoryNode("far", "Tomato sauce recipe", body="tomatoes, basil"),
    ])
    try:
        sections = {s.name: s.text for s in peripheral_sections(
            store, Focus(id="a", file="projects.org"), "tomatoes")}
    finally:
        store.close()
    assert "** TODO Plant tomatoes" in sections["focus"] or "*** TODO Plant" in sections["focus"]
    assert ":EFFORT: 1h" in sections["focus"] and "Water daily." in sections["focus"]
    assert "Choose a variety" in sections["focus"]  # children as headlines
    assert "* projects.org" in sections["ancestors"] and "Garden :home:" in sections["ancestors"]
    assert "Fix the fence" in sections["siblings"]
    assert "Buy seedlings" not in sections["siblings"]
    assert "Tomato sauce recipe" in sections["related"]
    assert "Plant tomatoes" not in sections["related"]  # already in view


def test_focus_without_memory_store() -> None:
    focus = Focus.from_service({"heading": "Write the report", "file": "~/memex/work.org",
                                "outline": "* Work\n** Write the report"})
    assert focus is not None
    (section,) = peripheral_sections(None, focus)
    assert "Write the report" in section.text and "work.org" in section.text
    assert Focus.from_service({"file": None}) is None
    assert Focus.from_service(None) is None
    from passepartout.server.focus import Focus as EmacsFocus
    from passepartout.server.focus import FocusHolder

    holder = FocusHolder()
    assert Focus.from_service(holder) is None
    holder.set(EmacsFocus(file="w.org", id="n1", heading="Report", outline=("Work", "Report")))
    assert Focus.from_service(holder) == Focus("n1", "w.org", "Report", "Work / Report")


def test_prefix_is_marked_for_the_prompt_cache() -> None:
    cached = system_message("stable", cache=True)
    assert cached["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert system_message("stable", cache=False) == {"role": "system", "content": "stable"}
