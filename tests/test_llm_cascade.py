"""The fallback cascade, timeouts and cancel, through litellm's real path to the fake server."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import Recorder, make_agent, make_config, user_signal

from passepartout.agent import Agent
from passepartout.errors import LLMError
from passepartout.llm.provider import Cancelled, Provider

pytest_plugins = ["llm_agent"]

MESSAGES = [{"role": "user", "content": "hello"}]


def test_first_model_500_second_answers(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    config = make_config(tmp_path, PASSEPARTOUT_MODEL="openai/m1",
                         PASSEPARTOUT_FALLBACK_MODELS="openai/m2")
    agent, rec = make_agent(config)
    try:
        fake.for_model("m1").error(500, "m1 is down")
        fake.for_model("m2").reply("m2 answers")
        agent.loop.process(user_signal("hello"))
        booked = agent.services["ledger"].calls()
    finally:
        agent.shutdown()
    assert [r.model for r in fake.requests] == ["m1", "m2"]
    assert rec.of("reply")[0]["text"] == "m2 answers"
    assert any("trying openai/m2" in d["text"] for d in rec.of("notice"))
    assert "error" not in rec.kinds()
    assert [c.model for c in booked] == ["openai/m2"]


def test_all_fail_llmerror_names_the_cascade(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    config = make_config(tmp_path, PASSEPARTOUT_MODEL="openai/m1",
                         PASSEPARTOUT_FALLBACK_MODELS="openai/m2,openai/m3")
    fake.error(500, "first").error(503, "second").error(429, "third")
    provider = Provider()
    with pytest.raises(LLMError) as caught:
        provider.complete(["openai/m1", "openai/m2", "openai/m3"], MESSAGES)
    err = caught.value
    assert err.cascade == ["openai/m1", "openai/m2", "openai/m3"]
    assert err.attempt_count == 3
    assert err.provider == "openai"
    assert "openai/m1" in err.message and "openai/m3" in err.message
    assert "HTTP 429" in err.message

    # and through the loop, the chat says so
    agent, rec = make_agent(config)
    try:
        fake.error(500).error(500).error(500)
        agent.loop.process(user_signal("hello"))
    finally:
        agent.shutdown()
    errors = rec.of("error")
    assert errors and errors[0]["code"] == "llm-error"
    assert "No model answered (3 attempts)" in errors[0]["message"]
    assert "reply" not in rec.kinds()
    assert rec.kinds()[-1] == "done"
    assert fake.request_count == 6  # the runtime did not ask the model to explain its failure


def test_a_client_error_is_not_cascaded(provider_env: FakeLLM) -> None:
    provider_env.error(401, "bad key")
    with pytest.raises(LLMError) as caught:
        Provider().complete(["openai/m1", "openai/m2"], MESSAGES)
    assert caught.value.attempt_count == 1
    assert provider_env.request_count == 1
    assert "not one to retry" in caught.value.message


def test_read_timeout_moves_on(provider_env: FakeLLM) -> None:
    provider_env.for_model("slow").delay(5.0)
    provider_env.for_model("quick").reply("in time")
    result = Provider(read_timeout=0.3).complete(["openai/slow", "openai/quick"], MESSAGES)
    assert result.reply.text == "in time"
    assert result.model == "openai/quick"
    assert "Timeout" in result.attempts[0].error  # not the slow reply, five seconds on


def test_rate_limit_moves_on(provider_env: FakeLLM) -> None:
    provider_env.for_model("a").error(429, "slow down")
    provider_env.for_model("b").reply("b here")
    result = Provider().complete(["openai/a", "openai/b"], MESSAGES, stream=False)
    assert result.reply.text == "b here" and not result.streamed


def test_cancel_while_waiting_for_the_first_byte(provider_env: FakeLLM) -> None:
    provider_env.delay(5.0)
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(Cancelled):
        Provider().complete(["openai/m"], MESSAGES, cancel=cancel)
    assert provider_env.answered == 0  # before the reply, five seconds on, had begun


def test_cancel_mid_stream_stops_the_turn(agent_setup: tuple[Agent, Recorder, FakeLLM]) -> None:
    agent, rec, fake = agent_setup
    fake.slow_stream("one two three four five six seven eight", 0.15)
    send = rec.send

    def cancel_after_two_chunks(signal, event):  # type: ignore[no-untyped-def]
        send(signal, event)
        if len(rec.of("chunk")) == 2:
            agent.cancel("s1")

    rec.send = cancel_after_two_chunks  # type: ignore[method-assign]
    agent.loop.process(user_signal("count"))
    chunks = "".join(d["text"] for d in rec.of("chunk"))
    assert chunks and chunks != "one two three four five six seven eight"
    assert rec.of("done") == [{"cancelled": True}]
    assert "reply" not in rec.kinds()
    history = agent.services["sessions"].messages("s1")
    assert history[-1]["content"].endswith("[cancelled]")
    assert agent.services["ledger"].calls()[0].estimated
