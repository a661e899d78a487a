"""The loop: stages, gates, self-correction, the depth limit and the recoveries."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from agents import wait_for

from passepartout.engine import Registry, Skill
from passepartout.loop import (
    AbortCycle,
    Action,
    Loop,
    SkipSignal,
    Stimuli,
    Thought,
    UseFallback,
    Verdict,
)
from passepartout.loop.events import Event, fields
from passepartout.signals import Keyword, Signal


def user_input(text: str = "hi", **meta: Any) -> Signal:
    return Signal(payload={"sensor": Keyword("user-input"), "text": text}, meta=meta)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, signal: Signal, event: Event) -> None:
        self.events.append((event.kind, fields(event)))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.events]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, d in self.events if k == kind]


def make_loop(*skills: Skill, think: Any = None) -> tuple[Loop, Recorder]:
    registry = Registry()
    for skill in skills:
        registry.add(skill)
    recorder = Recorder()
    return Loop(registry, think=think, emit=recorder), recorder


def chat_skill(**kwargs: Any) -> Skill:
    defaults: dict[str, Any] = {
        "name": "chat",
        "trigger": lambda s: s.sensor == "user-input",
        "prompt": lambda s: str(s.payload["text"]),
    }
    return Skill(**{**defaults, **kwargs})


def echo_think(thought: Thought) -> list[Action]:
    return [Action("chat", text=f"echo: {thought.prompt.text}")]


def test_a_signal_runs_through_perceive_reason_act() -> None:
    loop, rec = make_loop(chat_skill(), think=echo_think)
    done = loop.process(user_input("hello"))
    assert [a.text for a in done] == ["echo: hello"]
    assert rec.of("reply") == [{"text": "echo: hello", "streamed": False}]


def test_raw_sexp_input_is_perceived() -> None:
    loop, rec = make_loop(chat_skill(), think=echo_think)
    loop.process('(:type :event :payload (:sensor :user-input :text "from the wire"))')
    assert rec.of("reply") == [{"text": "echo: from the wire", "streamed": False}]


def test_malformed_input_is_logged_and_the_loop_goes_on() -> None:
    loop, rec = make_loop(chat_skill(), think=echo_think)
    assert loop.process("(:type :event :payload (:sensor") == []
    assert loop.reports[-1].kind == "protocol-error"
    loop.process(user_input("still here"))
    assert rec.of("reply") == [{"text": "echo: still here", "streamed": False}]


@pytest.mark.parametrize("stage", ["trigger", "prompt", "gate"])
def test_a_skill_that_raises_does_not_crash_the_loop(stage: str) -> None:
    def boom(*_: Any) -> Any:
        raise RuntimeError("CRITICAL BRAIN FAILURE")

    evil = chat_skill(name="evil", priority=100, **{stage: boom})
    loop, rec = make_loop(evil, chat_skill(name="good"), think=echo_think)
    loop.process(user_input("x"))
    reported = " ".join(r.message for r in loop.reports) + str(rec.events)
    assert "CRITICAL BRAIN FAILURE" in reported
    loop.process(user_input("next"))  # the loop is still alive
    if stage == "trigger":  # a broken trigger leaves the signal to the next skill
        assert {"text": "echo: next", "streamed": False} in rec.of("reply")


def test_a_crashing_gate_denies() -> None:
    def crash(action: Action, signal: Signal) -> Verdict:
        raise ValueError("cannot decide")

    loop, rec = make_loop(chat_skill(), Skill("guard", gate=crash), think=echo_think)
    assert loop.process(user_input()) == []
    assert rec.of("reply") == []
    assert "the gate failed" in rec.of("denied")[0]["reason"]


def test_a_gate_that_gives_no_verdict_denies() -> None:
    loop, rec = make_loop(chat_skill(), Skill("vague", gate=lambda a, s: None), think=echo_think)  # type: ignore[arg-type,return-value]
    assert loop.process(user_input()) == []
    assert "no verdict" in rec.of("denied")[0]["reason"]


def test_depth_11_yields_nothing() -> None:
    loop, rec = make_loop(chat_skill(), think=echo_think)
    deep = Signal(payload={"sensor": Keyword("user-input"), "text": "x"}, depth=11)
    assert loop.process(deep) == []
    assert rec.of("reply") == []
    assert rec.of("error")[0]["code"] == "depth-limit"  # said, not silent


def test_feedback_loops_until_the_depth_limit() -> None:
    def again(action: Action, signal: Signal) -> Signal:
        return signal.child({"sensor": Keyword("user-input"), "text": "again"})

    loop, rec = make_loop(chat_skill(), think=lambda t: [Action("again")])
    loop.register_actuator("again", again)
    done = loop.process(user_input())
    assert len(done) == 11  # depths 0..10 act, depth 11 stops
    assert "depth limit (10)" in rec.of("error")[-1]["message"]


def test_a_refusal_is_fed_back_for_self_correction() -> None:
    seen_traces: list[list[str]] = []

    def think(thought: Thought) -> list[Action]:
        seen_traces.append(thought.gate_trace)
        bad = len(thought.gate_trace) == 0
        return [Action("chat", text="rm -rf /" if bad else "a safe answer")]

    def guard(action: Action, signal: Signal) -> Verdict:
        return Verdict.deny("destructive") if "rm -rf" in action.text else Verdict.allow()

    loop, rec = make_loop(chat_skill(), Skill("guard", gate=guard), think=think)
    loop.process(user_input())
    assert rec.of("reply") == [{"text": "a safe answer", "streamed": False}]
    assert "guard: destructive" in seen_traces[1][0]


def test_at_most_three_retries_then_a_gate_error() -> None:
    calls = []

    def think(thought: Thought) -> list[Action]:
        calls.append(1)
        return [Action("chat", text="no")]

    loop, rec = make_loop(
        chat_skill(), Skill("guard", gate=lambda a, s: Verdict.deny("never")), think=think
    )
    assert loop.process(user_input()) == []
    assert len(calls) == 4  # the proposal and 3 retries
    assert rec.of("error")[-1]["code"] == "gate-error"


def test_ask_goes_to_the_approver_and_no_answer_is_no() -> None:
    loop, _rec = make_loop(
        chat_skill(reflex=lambda s: Action("chat", text="risky")),
        Skill("asker", gate=lambda a, s: Verdict.ask("needs a person")),
    )
    assert loop.process(user_input()) == []  # no approver: denied
    loop.approver = lambda request: True
    assert [a.text for a in loop.process(user_input())] == ["risky"]

    def broken(request: Any) -> bool:
        raise TimeoutError

    loop.approver = broken
    assert loop.process(user_input()) == []


def test_a_critical_error_rolls_memory_back_and_retries_as_loop_error() -> None:
    rollbacks: list[int] = []
    loop, rec = make_loop(chat_skill(reflex=lambda s: Action("explode")))
    loop.rollback = lambda: rollbacks.append(1)

    def explode(action: Action, signal: Signal) -> None:
        raise KeyError("undefined")

    loop.register_actuator("explode", explode)
    loop.process(user_input())
    assert rollbacks == [1]
    assert rec.of("error")[0]["code"] == "internal-error"


def test_recoveries_skip_fallback_abort() -> None:
    def fail(thought: Thought) -> list[Action]:
        raise RuntimeError("model down")

    loop, rec = make_loop(chat_skill(), think=fail)
    loop.error_handlers.append(lambda err, sig: UseFallback("sorry, try later"))
    loop.process(user_input())
    assert rec.of("reply") == [{"text": "sorry, try later", "streamed": False}]

    loop.error_handlers[:] = [lambda err, sig: SkipSignal()]
    loop.process(user_input())
    assert rec.of("error") == []

    loop.error_handlers[:] = [lambda err, sig: AbortCycle()]
    assert loop.process(user_input()) == []


def test_done_is_emitted_for_turns_and_cancel_stops_a_turn() -> None:
    started = threading.Event()

    def slow_think(thought: Thought) -> list[Action]:
        started.set()
        for _ in range(200):
            if thought.cancel.is_set():
                return [Action("chat", text="too late")]
            time.sleep(0.01)
        return [Action("chat", text="finished")]

    loop, rec = make_loop(chat_skill(), think=slow_think)
    worker = threading.Thread(
        target=loop.process, args=(user_input(**{"session-id": "s", "turn-id": "t1"}),)
    )
    worker.start()
    started.wait(2)
    loop.cancel("s", "t1")
    worker.join(5)
    assert rec.of("reply") == []
    assert rec.of("done") == [{"cancelled": True}]


def test_a_turn_cancelled_before_it_starts_never_runs() -> None:
    loop, rec = make_loop(chat_skill(), think=echo_think)
    loop.cancel("s", "t9")
    loop.process(user_input(**{"session-id": "s", "turn-id": "t9"}))
    assert rec.of("reply") == []


def test_stimuli_keep_each_session_in_order_and_beat() -> None:
    loop, rec = make_loop(chat_skill(), think=echo_think)
    beats: list[int] = []
    loop.registry.add(
        Skill(
            "pulse",
            trigger=lambda s: s.sensor == "heartbeat",
            reflex=lambda s: beats.append(1) or [],
        )
    )
    stimuli = Stimuli(loop, heartbeat_interval=0.05)
    stimuli.start()
    for i in range(20):
        stimuli.inject(user_input(str(i), **{"session-id": "a"}))
    assert stimuli.inject("(:broken") is False
    assert stimuli.wait_idle(5)
    wait_for(lambda: len(beats) >= 2, 5, "two heartbeats between the prompts")
    stimuli.stop()
    assert [d["text"] for d in rec.of("reply")] == [f"echo: {i}" for i in range(20)]
