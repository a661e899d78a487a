"""Must show: the heartbeat with the three background skills enabled spends zero model
tokens over an idle hour (simulated clock), shown by the ledger; each job ran in that
hour and said it had nothing to do."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from background_agent import JOB_IDS, SimClock, beat, make_agent, reschedule, stamp
from fakellm import FakeLLM

TIDY = {
    "projects/alpha.org": ("* Alpha\n:PROPERTIES:\n:ID: alpha-1\n:END:\n"
                           "See [[id:beta-1][Beta]].\n** TODO Write the plan\n"),
    "projects/beta.org": "* Beta\n:PROPERTIES:\n:ID: beta-1\n:END:\nBack to [[id:alpha-1]].\n",
}


@pytest.fixture
def model_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    return fake_llm


def test_an_idle_hour_with_the_three_skills_spends_no_token(
        tmp_path: Path, env: dict[str, str], model_env: FakeLLM) -> None:
    start = dt.datetime.now().astimezone().replace(second=0, microsecond=0)
    clock = SimClock(start)
    agent = make_agent(tmp_path, env, TIDY, clock)
    try:
        orch = agent.services["orchestrator"]
        # The scribe last wrote a note at the start of the hour; every job is due
        # within the hour (rescheduled hourly, as the person may).
        agent.services["background"].save("scribe", {"since": start.isoformat()})
        reschedule(agent, {"scribe": stamp(start + dt.timedelta(minutes=10)),
                           "gardener": stamp(start + dt.timedelta(minutes=20)),
                           "archivist": stamp(start + dt.timedelta(minutes=30))})
        before = {p: p.read_text() for p in Path(env["MEMEX_DIR"]).rglob("*.org")}
        for minute in range(1, 61):
            clock.now = start + dt.timedelta(minutes=minute)
            beat(agent, clock.now)
        results = {j: orch.job(j).last_result for j in JOB_IDS}
        assert all(orch.job(j).last_run is not None for j in JOB_IDS), results
        assert results["passepartout-scribe"].startswith("nothing new since")
        assert results["passepartout-archivist"] == "nothing to archive"
        assert results["passepartout-gardener"].startswith("0 fix(es) proposed, 0 broken")
        ledger = agent.services["ledger"]
        total = ledger.total()
        print(f"idle hour: {agent.services['heartbeat'].ticks} ticks, ledger "
              f"{total.calls} calls, {total.tokens_in + total.tokens_out} tokens")
        assert ledger.calls() == [] and total.calls == 0
        assert total.tokens_in + total.tokens_out == 0 and total.cost == 0
        assert model_env.request_count == 0
        after = {p: p.read_text() for p in Path(env["MEMEX_DIR"]).rglob("*.org")}
        assert after == before  # nothing proposed, nothing written
    finally:
        agent.shutdown()
