"""A streamed reply is whole at its finish: the turn goes on while litellm closes the
stream (usage, cost, its own logs), and the call is booked once the usage is in."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakellm import FakeLLM
from llm_agent import PRICED_MODEL, Recorder, user_signal

import passepartout.llm.provider as provider_module
from passepartout.agent import Agent
from passepartout.llm.ledger import Call, Ledger
from passepartout.llm.litellm_import import load_litellm
from passepartout.llm.provider import Provider

pytest_plugins = ["llm_agent"]


class _HeldLitellm:
    """litellm whose streams hold their end (what litellm does after the provider's
    last chunk) until ``release`` is set."""

    def __init__(self) -> None:
        self.real = load_litellm()
        self.release = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def completion(self, **kwargs: Any) -> Any:
        response = self.real.completion(**kwargs)
        if not kwargs.get("stream"):
            return response

        def held() -> Iterator[Any]:
            yield from response
            self.release.wait(30)

        return held()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[_HeldLitellm]:
    lit = _HeldLitellm()
    monkeypatch.setattr(provider_module, "load_litellm", lambda: lit)
    yield lit
    lit.release.set()


def test_a_stream_returns_at_its_finish_and_settles_later(
    provider_env: FakeLLM, held: _HeldLitellm
) -> None:
    provider_env.reply("one two three", usage={"prompt_tokens": 11, "completion_tokens": 3})
    shown: list[str] = []
    result = Provider().complete([PRICED_MODEL], [{"role": "user", "content": "count"}],
                                 on_text=shown.append)
    assert result.reply.text == "one two three" == "".join(shown)
    assert result.settled is not None and not result.settled.done()
    held.release.set()
    final = result.settled.result(timeout=30)
    assert final.text == "one two three"
    assert (final.usage.reported, final.usage.prompt_tokens, final.usage.completion_tokens) \
        == (True, 11, 3)


def test_tool_calls_are_whole_at_the_finish(provider_env: FakeLLM, held: _HeldLitellm) -> None:
    provider_env.tool_call("read-file", {"path": "a.org"}, call_id="call_1")
    result = Provider().complete([PRICED_MODEL], [{"role": "user", "content": "read a"}])
    assert [(c.id, c.name, c.arguments) for c in result.reply.tool_calls] == [
        ("call_1", "read-file", '{"path": "a.org"}')]
    held.release.set()
    assert result.settled is not None
    assert [c.name for c in result.settled.result(timeout=30).tool_calls] == ["read-file"]


def test_the_turn_ends_before_its_booking_and_readers_wait_for_it(
    agent_setup: tuple[Agent, Recorder, FakeLLM], held: _HeldLitellm
) -> None:
    agent, rec, fake = agent_setup
    fake.reply("a short answer", usage={"prompt_tokens": 1200, "completion_tokens": 300})
    agent.loop.process(user_signal("question"))
    assert rec.kinds()[-2:] == ["reply", "done"]  # while litellm still holds the stream
    ledger: Ledger = agent.services["ledger"]
    assert not ledger.wait_settled(timeout=0.05)
    threading.Timer(0.2, held.release.set).start()
    started = time.monotonic()
    call = ledger.calls()[0]  # waits for the booking
    assert time.monotonic() - started >= 0.1
    assert (call.tokens_in, call.tokens_out, call.estimated) == (1200, 300, False)
    assert ledger.wait_settled(timeout=0)


def test_a_booking_that_never_comes_holds_readers_only_so_long(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.expect()
    assert not ledger.wait_settled(timeout=0.05)
    ledger.record(Call(model="m", provider="p", tokens_in=1, tokens_out=1, cost=0.5))
    ledger.settle()
    assert ledger.wait_settled(timeout=0)
    assert ledger.total().cost == 0.5
    ledger.close()
