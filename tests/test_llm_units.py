"""The model layer's pure parts: translation, routing, token counts, built-in tools."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from passepartout.org.timestamps import find_timestamps

from passepartout.config import Config
from passepartout.errors import ConfigError, PipelineError
from passepartout.llm import models
from passepartout.llm.builtin_tools import builtin_tools, grep, run_python, schedule_job
from passepartout.llm.sessions import SessionStore
from passepartout.llm.tokens import count_tokens, encoding_name
from passepartout.llm.translate import (
    StreamAccumulator,
    refusal_messages,
    repair_tool_pairs,
    reply_from_response,
    result_messages,
    tool_actions,
)
from passepartout.loop.actions import Action
from passepartout.services import Services
from passepartout.signals import Keyword, dumps


def delta(content: str | None = None, calls: list[dict] | None = None,
          finish: str | None = None) -> dict:
    d: dict = {}
    if content is not None:
        d["content"] = content
    if calls is not None:
        d["tool_calls"] = calls
    return {"choices": [{"index": 0, "delta": d, "finish_reason": finish}]}


def test_stream_deltas_rebuild_text_and_tool_calls() -> None:
    acc = StreamAccumulator()
    pieces = [
        delta("Let me "), delta("look."),
        delta(calls=[{"index": 0, "id": "c1", "function": {"name": "read-file", "arguments": ""}}]),
        delta(calls=[{"index": 0, "function": {"arguments": '{"pa'}}]),
        delta(calls=[{"index": 1, "id": "c2", "function": {"name": "grep-search",
                                                           "arguments": '{"pattern": "x"}'}}]),
        delta(calls=[{"index": 0, "function": {"arguments": 'th": "a.org"}'}}]),
        delta(finish="tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 7,
                                  "prompt_tokens_details": {"cached_tokens": 8}}},
    ]
    texts = [acc.add(p) for p in pieces]
    assert "".join(texts) == "Let me look."
    reply = acc.reply()
    assert [(c.id, c.name, c.parsed()) for c in reply.tool_calls] == [
        ("c1", "read-file", {"path": "a.org"}), ("c2", "grep-search", {"pattern": "x"})]
    assert (reply.usage.prompt_tokens, reply.usage.cached_tokens, reply.usage.reported) == (
        12, 8, True)
    assert reply.finish_reason == "tool_calls"
    actions, bad = tool_actions(reply)
    assert actions[0] == Action("tool", "read-file", {"path": "a.org"}, call_id="c1")
    assert not bad


def test_whole_response_and_bad_arguments() -> None:
    response = SimpleNamespace(
        choices=[SimpleNamespace(finish_reason="tool_calls", message=SimpleNamespace(
            content=None, tool_calls=[SimpleNamespace(id="c9", function=SimpleNamespace(
                name="eval", arguments="[1, 2]"))]))],
        usage=None,
    )
    reply = reply_from_response(response)
    assert reply.text == "" and not reply.usage.reported
    good, bad = tool_actions(reply)
    assert not good and bad[0].id == "c9"  # a list is not an arguments object


def test_refusals_and_results_become_tool_messages() -> None:
    pending = [Action("tool", "write-file", {"path": "x"}, call_id="w"),
               Action("tool", "grep-search", {"pattern": "y"}, call_id="g")]
    trace = [f"{pending[0].describe()} was refused (deny): protected file"]
    msgs = refusal_messages(pending, trace)
    assert msgs[0]["content"] == "refused by policy (deny): protected file"
    assert msgs[1]["content"].startswith("not run:")
    results = [[Keyword("call-id"), "a", Keyword("tool"), "t", Keyword("ok"), None,
                Keyword("output"), "boom"],
               {"call-id": "b", "tool": "t", "ok": True, "output": "fine"}]
    assert [m["content"] for m in result_messages(results)] == ["error: boom", "fine"]


def test_repair_tool_pairs() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    broken = [{"role": "user", "content": "hi"},
              {"role": "assistant", "content": None, "tool_calls": [call]},
              {"role": "user", "content": "again"},
              {"role": "tool", "tool_call_id": "zz", "content": "orphan"}]
    fixed = repair_tool_pairs(broken)
    assert [m["role"] for m in fixed] == ["user", "assistant", "tool", "user"]
    assert fixed[2]["tool_call_id"] == "c1" and "interrupted" in fixed[2]["content"]


def test_history_plists_for_emacs(tmp_path: Path) -> None:
    store = SessionStore.in_home(tmp_path)
    store.append("s", {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"})
    store.close()
    again = SessionStore.in_home(tmp_path)
    history = again.history("s")
    assert dumps(history) == '((:role :user :content "hi") (:role :assistant :content "yo"))'
    assert again.sessions()[0][:2] == ("s", 2)
    again.append("job", {"role": "user", "content": "x"}, persistent=False)
    assert again.messages("job", persistent=False) and not again.messages("job")


def config(**env: str) -> Config:
    return Config.from_mapping(env)


def test_tier_routing_and_cascade() -> None:
    cfg = config(PASSEPARTOUT_MODEL="openai/big", PASSEPARTOUT_MODEL_COGNITION="openai/small",
                 PASSEPARTOUT_FALLBACK_MODELS="openai/backup,openai/big")
    assert models.route(cfg, "cognition").models == ("openai/small", "openai/backup", "openai/big")
    assert models.route(cfg, "reasoning").models == ("openai/big", "openai/backup")
    with pytest.raises(PipelineError, match="without a model"):
        models.route(cfg, "reflex")
    assert models.classify_tier("Summarize my week") == "cognition"
    assert models.classify_tier("Plan the migration") == "reasoning"


def test_default_model_without_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert models.default_model(config(), {"ANTHROPIC_API_KEY": "k"}).startswith("anthropic/")
    monkeypatch.setattr(models, "local_installed", lambda: True)
    assert models.default_model(config(), {}) == models.LOCAL_MODEL
    monkeypatch.setattr(models, "local_installed", lambda: False)
    with pytest.raises(ConfigError, match="PASSEPARTOUT_MODEL"):
        models.default_model(config(), {})


def test_token_counts_per_model() -> None:
    assert encoding_name("openai/gpt-4o-mini") == "o200k_base"
    assert encoding_name("gpt-4") == "cl100k_base"
    assert encoding_name("anthropic/claude-haiku-4-5") == "claude"
    assert count_tokens("hello world", "gpt-4o") == 2
    assert count_tokens("hello world", "claude-haiku-4-5") > 0
    one = count_tokens([{"role": "user", "content": "hello world"}], "gpt-4o")
    assert one == 2 + 4 + 3  # text, per-message overhead, reply priming


def test_grep_and_schedule_and_eval(tmp_path: Path) -> None:
    (tmp_path / "a.org").write_text("* TODO call Bob\n* DONE pay rent\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x").write_text("TODO hidden\n")
    (tmp_path / "bin").write_bytes(b"TODO\x00\x01")
    assert grep("TODO", tmp_path) == "a.org:1: * TODO call Bob"
    assert grep("(", tmp_path) == "no matches"  # a bad regex searches literally
    with pytest.raises(PipelineError):
        grep("x", tmp_path / "missing")

    target = tmp_path / "system" / "schedule.org"
    summary = schedule_job(target, "Weekly review", "2026-05-02 Sat 09:00 +1w",
                           "Summarize the week")
    text = target.read_text()
    assert ":CRON: <2026-05-02 Sat 09:00 +1w>" in text and "* Weekly review" in text
    assert "Summarize the week" in text and "scheduled" in summary
    assert find_timestamps(text)[0].repeats
    with pytest.raises(PipelineError, match="not an org timestamp"):
        schedule_job(target, "x", "next tuesday", "y")

    assert run_python("x = 2\nprint('hi')\nx * 21") == "hi\n42"
    with pytest.raises(PipelineError, match="syntax error"):
        run_python("def (")


def test_builtin_tools_belt(tmp_path: Path) -> None:
    agent = SimpleNamespace(
        config=config(MEMEX_DIR=str(tmp_path), PASSEPARTOUT_WORKSPACE=str(tmp_path)),
        services=Services(),
    )
    tools = {t.name: t for t in builtin_tools(agent)}
    assert set(tools) == {"grep-search", "memory-search", "schedule", "eval", "emacs-eval"}
    assert tools["eval"].impact == "high" and tools["emacs-eval"].impact == "high"
    with pytest.raises(PipelineError, match="no Emacs"):
        tools["emacs-eval"].run({"code": "(+ 1 2)"})
    agent.services["emacs-eval"] = lambda code: 3
    assert tools["emacs-eval"].run({"code": "(+ 1 2)"}) == "3"
    with pytest.raises(PipelineError, match="memory is not available"):
        tools["memory-search"].run({"query": "x"})
    (tmp_path / "n.txt").write_text("needle\n")
    assert tools["grep-search"].run({"pattern": "needle"}) == "n.txt:1: needle"


def test_importing_the_model_layer_stays_offline_and_light() -> None:
    import subprocess
    import sys

    code = ("import sys, passepartout.llm, passepartout.llm.think, passepartout.context; "
            "import passepartout.llm.provider as p; "
            "assert 'litellm' not in sys.modules, 'litellm imported at import'; "
            "lit = p.load_litellm(); import os; "
            "assert os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] == 'True'; "
            "assert lit.model_cost['gpt-4o-mini']['input_cost_per_token'] > 0")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_a_model_chosen_for_the_turn_leads_the_cascade() -> None:
    from passepartout.config import Config
    from passepartout.llm import models

    config = Config.from_mapping({"PASSEPARTOUT_MODEL": "openai/a",
                                  "PASSEPARTOUT_FALLBACK_MODELS": "openai/b"})
    assert models.route(config, "reasoning").models == ("openai/a", "openai/b")
    chosen = models.route(config, "reasoning", preferred="anthropic/c")
    assert chosen.models == ("anthropic/c", "openai/b")
