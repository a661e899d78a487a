"""Token economics: the ledger's totals against litellm's price map, origins and headings,
persistence, budgets that stop a call before it is sent, and ``passepartout cost``."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import PRICED_MODEL, Recorder, agent_memory, make_agent, make_config, user_signal

from passepartout.agent import Agent
from passepartout.llm import cost_cli
from passepartout.llm.budget import parse_amount
from passepartout.llm.ledger import Call, Ledger
from passepartout.llm.litellm_import import load_litellm
from passepartout.memory import MemoryNode
from passepartout.signals import Keyword, Signal

pytest_plugins = ["llm_agent"]


def map_price(model: str) -> tuple[float, float, float]:
    entry = load_litellm().model_cost[model]
    return (entry["input_cost_per_token"], entry["output_cost_per_token"],
            entry["cache_read_input_token_cost"])


def test_ledger_totals_equal_usage_times_map_prices(
    agent_setup: tuple[Agent, Recorder, FakeLLM],
) -> None:
    agent, _, fake = agent_setup
    fake.reply("one", usage={"prompt_tokens": 1200, "completion_tokens": 300})
    fake.reply("two", usage={"prompt_tokens": 5000, "completion_tokens": 40})
    agent.loop.process(user_signal("first"))
    agent.loop.process(user_signal("second", session="s2"))
    inp, out, _ = map_price("gpt-4o-mini")
    ledger: Ledger = agent.services["ledger"]
    expected = (1200 + 5000) * inp + (300 + 40) * out
    assert ledger.total().cost == pytest.approx(expected, rel=1e-12)
    assert ledger.total().tokens_in == 6200 and ledger.total().tokens_out == 340
    by_session = {t.key: t.cost for t in ledger.totals("session")}
    assert by_session["s1"] == pytest.approx(1200 * inp + 300 * out, rel=1e-12)
    assert by_session["s2"] == pytest.approx(5000 * inp + 40 * out, rel=1e-12)
    assert {t.key for t in ledger.totals("provider")} == {"openai"}
    assert {t.key for t in ledger.totals("origin")} == {"chat"}
    call = ledger.calls()[0]
    assert (call.model, call.tier, call.estimated) == (PRICED_MODEL, "reasoning", False)


def test_cached_tokens_cost_the_cache_price() -> None:
    from passepartout.llm.tokens import token_cost

    inp, out, cached = map_price("gpt-4o-mini")
    cost = token_cost(PRICED_MODEL, 1000, 10, tokens_cached=800)
    assert cost == pytest.approx(200 * inp + 800 * cached + 10 * out, rel=1e-12)
    assert token_cost("openai/not-a-priced-model", 1000, 10) == 0.0


def test_cron_origin_call_is_booked_on_its_heading(
    agent_setup: tuple[Agent, Recorder, FakeLLM],
) -> None:
    agent, _, fake = agent_setup
    fake.reply("weekly summary", usage={"prompt_tokens": 100, "completion_tokens": 20})
    job = Signal(
        payload={"sensor": Keyword("user-input"), "text": "summarize this week"},
        meta={"source": Keyword("cron"), "origin": Keyword("cron"), "heading": "weekly-review",
              "tier": Keyword("cognition")},
    )
    agent.loop.process(job)
    ledger: Ledger = agent.services["ledger"]
    call = ledger.calls()[0]
    assert (call.origin, call.heading, call.tier, call.session) == (
        "cron", "weekly-review", "cognition", None)
    assert {t.key: t.calls for t in ledger.totals("heading")} == {"weekly-review": 1}
    assert {t.key for t in ledger.totals("origin")} == {"cron"}
    assert ledger.headings_total(["weekly-review"]) == pytest.approx(call.cost)


def test_ledger_persists_across_restarts(tmp_path: Path) -> None:
    first = Ledger.in_home(tmp_path)
    first.record(Call("m", "p", 10, 5, cost=0.25, session="a", origin="hook", heading="h1"))
    first.close()
    again = Ledger.in_home(tmp_path)
    assert again.session_total("a") == 0.25
    assert again.totals("origin")[0].key == "hook"
    with pytest.raises(ValueError, match="cannot group"):
        again.totals("nonsense; DROP TABLE calls")


def test_session_budget_stops_the_call_before_it_is_sent(
    provider_env: FakeLLM, tmp_path: Path
) -> None:
    fake = provider_env
    config = make_config(tmp_path, PASSEPARTOUT_BUDGET_USD="0.002")
    agent, rec = make_agent(config)
    try:
        agent.services["ledger"].record(Call(PRICED_MODEL, "openai", 3000, 0, cost=0.0019,
                                             session="s1"))
        agent.loop.process(user_signal("one more question"))
        other = Recorder()
        agent.attach_faces(other)
        fake.reply("fresh session")
        agent.loop.process(user_signal("in another session", session="s9"))
    finally:
        agent.shutdown()
    assert fake.request_count == 1  # only the other session's call reached the server
    errors = rec.of("error")
    assert errors[0]["code"] == "budget-error"
    assert "PASSEPARTOUT_BUDGET_USD" in errors[0]["message"]
    assert "reply" not in rec.kinds()
    assert other.of("reply")[0]["text"] == "fresh session"


def test_org_budget_caps_its_subtree(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    agent, rec = make_agent(make_config(tmp_path))
    store = agent_memory(agent)
    store.put_many([
        MemoryNode("proj", "Project X", properties={"BUDGET": "$0.01"}),
        MemoryNode("task", "A task", parent="proj"),
        MemoryNode("other", "Elsewhere"),
    ])
    try:
        ledger: Ledger = agent.services["ledger"]
        ledger.record(Call(PRICED_MODEL, "openai", 1, 1, cost=0.00999, heading="proj"))
        job = user_signal("work on the task", session=None, heading="task", origin="cron")
        agent.loop.process(job)
        assert fake.request_count == 0
        assert "Project X" in rec.of("error")[0]["message"]
        fake.reply("fine")
        agent.loop.process(user_signal("elsewhere", session=None, heading="other"))
        assert fake.request_count == 1
    finally:
        agent.shutdown()


@pytest.mark.parametrize(("text", "amount"), [("5", 5.0), ("$2.50", 2.5), ("3 USD", 3.0)])
def test_budget_amounts(text: str, amount: float) -> None:
    assert parse_amount(text) == amount
    with pytest.raises(ValueError):
        parse_amount("lots")


def test_cost_command_prints_the_totals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.in_home(tmp_path / "home")
    ledger.record(Call("openai/gpt-4o-mini", "openai", 1000, 100, cost=0.0123, session="s1",
                       origin="chat", heading="h"))
    ledger.record(Call("anthropic/claude-haiku-4-5", "anthropic", 50, 5, cost=0.5,
                       origin="cron"))
    ledger.close()
    monkeypatch.setenv("PASSEPARTOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PASSEPARTOUT_CONFIG_DIR", str(tmp_path / "cfg"))
    parser = argparse.ArgumentParser()
    cost_cli.add_parser(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    assert cost_cli.run(parser.parse_args(["cost"]), out=out) == 0
    text = out.getvalue()
    assert "Total: 2 calls" in text and "$0.5123" in text
    for heading in ("By session", "By provider", "By origin", "By heading"):
        assert heading in text
    assert "anthropic" in text and "cron" in text
    out = io.StringIO()
    assert cost_cli.run(parser.parse_args(["cost", "--by", "model"]), out=out) == 0
    assert "By model" in out.getvalue() and "By session" not in out.getvalue()
