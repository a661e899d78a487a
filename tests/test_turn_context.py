"""A turn's context is read from its meta once, where the signal is built or enters the
loop, checked there, and shared by every step of the turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakellm import FakeLLM
from llm_agent import make_agent, make_config, user_signal

from passepartout.errors import ProtocolError
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnChoice, TurnContext, TurnState

pytest_plugins = ["llm_agent"]


def test_the_meta_reads_as_typed_fields_and_back() -> None:
    meta = {"source": Keyword("emacs"), "origin": Keyword("chat"), "session-id": "s1",
            "turn-id": "t1", "heading": "node-1", "tier": Keyword("reasoning"),
            "model": "openai/m", "tools": ["read-file"], "budget": 0.5,
            "workspace": "/tmp", "buffer": "*chat*"}
    turn = TurnContext.from_meta(meta)
    assert (turn.face, turn.origin, turn.session_id, turn.turn_id, turn.heading) == (
        "emacs", "chat", "s1", "t1", "node-1")
    assert turn.choice == TurnChoice(model="openai/m", tier="reasoning",
                                     tools=frozenset({"read-file"}), budget=0.5)
    assert turn.extra == {"buffer": "*chat*"}  # a key it does not read travels along
    assert TurnContext.from_meta(turn.to_meta()) == turn
    signal = Signal.from_sexp(Signal(payload={"sensor": Keyword("x")}, meta=meta).to_sexp())
    assert signal.turn == turn


@pytest.mark.parametrize(("meta", "kind", "background"), [
    ({"origin": "notify"}, "notify", False),
    ({"source": "emacs", "session-id": "s1"}, "chat", False),
    ({"source": "cron"}, "cron", True),
    ({"source": "emacs", "origin": "hook"}, "hook", True),
    ({"source": "background"}, "background", True),
    ({}, "background", False),
])
def test_face_and_kind_are_two_fields(meta: dict[str, Any], kind: str,
                                      background: bool) -> None:
    turn = TurnContext.from_meta(meta)
    assert turn.kind == kind and turn.background is background


def test_a_reflex_job_is_no_model_choice() -> None:
    turn = TurnContext.from_meta({"tier": "reflex"})
    assert turn.reflex and turn.choice.tier is None and turn.tier == "reflex"
    assert turn.to_meta() == {"tier": "reflex"}


@pytest.mark.parametrize("meta", [
    {"tier": "huge"}, {"tools": [1, 2]}, {"budget": "lots"}, {"budget": -1},
    {"heading": [Keyword("a")]}, {"turn-id": 1.5}, {"model": 3},
])
def test_a_malformed_field_is_refused_where_the_signal_is_built(meta: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError):
        Signal(payload={"sensor": Keyword("user-input"), "text": "hi"}, meta=meta)
    with pytest.raises(ProtocolError):
        Signal.from_plist({"payload": [Keyword("sensor"), Keyword("user-input")],
                           "meta": [x for k, v in meta.items() for x in (Keyword(k), v)]})


def test_a_malformed_field_never_reaches_the_loop(provider_env: FakeLLM,
                                                 tmp_path: Path) -> None:
    agent, rec = make_agent(make_config(tmp_path))
    try:
        provider_env.reply("never asked")
        done = agent.loop.process('(:type :event :meta (:session-id "s1" :turn-id "t1" '
                                  ':tier :huge) :payload (:sensor :user-input :text "hi"))')
    finally:
        agent.shutdown()
    assert done == [] and provider_env.request_count == 0
    assert not rec.kinds()  # dropped on the way in: no turn ran to report on
    assert agent.loop.reports[-1].kind == "protocol-error"
    assert ":tier" in agent.loop.reports[-1].message


def test_a_turn_reads_its_meta_once(provider_env: FakeLLM, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Not once per model step: the steps of a turn share the context read when its
    signal was built."""
    agent, _rec = make_agent(make_config(tmp_path))
    signal = user_signal("touch it", tools=["read-file"], budget=5.0, model="openai/m")
    reads: list[object] = []
    for cls in (TurnContext, TurnChoice):
        original = cls.from_meta

        def counted(meta: Any, original: Any = original) -> Any:
            reads.append(meta)
            return original(meta)

        monkeypatch.setattr(cls, "from_meta", counted)
    try:
        provider_env.tool_call("read-file", {"path": "x.org"}, call_id="c1")
        provider_env.reply("done")
        agent.loop.process(signal)
    finally:
        agent.shutdown()
    assert provider_env.request_count == 2 and reads == []


def test_the_steps_of_a_turn_share_its_state(provider_env: FakeLLM, tmp_path: Path) -> None:
    agent, _rec = make_agent(make_config(tmp_path))
    signal = user_signal("touch it")
    try:
        provider_env.tool_call("read-file", {"path": "x.org"}, call_id="c1")
        provider_env.reply("done")
        agent.loop.process(signal)
    finally:
        agent.shutdown()
    state = signal.turn.state
    assert isinstance(state, TurnState)
    assert len(state.models) == 2 and state.spent > 0  # both steps, one record
