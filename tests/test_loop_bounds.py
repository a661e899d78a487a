"""What the loop keeps is bounded: idle lanes end, cancel state is dropped, and a gate
that hangs is cut off at its deadline (the action refused, not run)."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from passepartout.engine import Registry, Skill
from passepartout.loop import Action, Loop, Stimuli, Verdict
from passepartout.loop.events import Event, fields
from passepartout.signals import Keyword, Signal
from passepartout.turn import Kept, TurnState


def turn(session: str, text: str = "hi", turn_id: str | None = None) -> Signal:
    meta: dict[str, Any] = {"session-id": session}
    if turn_id is not None:
        meta["turn-id"] = turn_id
    return Signal(payload={"sensor": Keyword("user-input"), "text": text}, meta=meta)


def echo_loop(*skills: Skill, **kwargs: Any) -> tuple[Loop, list[Action]]:
    ran: list[Action] = []
    registry = Registry()
    registry.add(Skill("echo", trigger=lambda s: s.sensor == "user-input",
                       reflex=lambda s: Action("system", "echo", {"text": s.payload["text"]})))
    for skill in skills:
        registry.add(skill)
    loop = Loop(registry, **kwargs)
    loop.register_actuator("system", lambda a, s: ran.append(a) or None)
    return loop, ran


def lane_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("lane-bounds-")]


def test_idle_lanes_end_and_are_made_again_on_demand() -> None:
    loop, ran = echo_loop()
    stimuli = Stimuli(loop, lane_idle=0.1)
    try:
        for n in range(40):  # forty cron nodes: forty sessions
            assert stimuli.inject(turn(f"bounds-{n}", f"job {n}"))
        assert stimuli.wait_idle(10)
        assert len(ran) == 40
        deadline = time.monotonic() + 5
        while (stimuli.lanes() or lane_threads()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert stimuli.lanes() == [] and lane_threads() == []
        assert stimuli.inject(turn("bounds-3", "again"))  # a new lane for an old session
        assert stimuli.wait_idle(10)
        assert ran[-1].args == {"text": "again"}
    finally:
        stimuli.stop()


def test_a_busy_lane_does_not_end_while_signals_keep_coming() -> None:
    loop, ran = echo_loop()
    stimuli = Stimuli(loop, lane_idle=0.05)
    try:
        for n in range(30):
            assert stimuli.inject(turn("bounds-steady", f"{n}"))
            time.sleep(0.01)
        assert stimuli.wait_idle(10)
        assert [a.args["text"] for a in ran] == [str(n) for n in range(30)]  # none lost
    finally:
        stimuli.stop()


def test_cancel_state_is_dropped_when_turns_end_and_is_capped() -> None:
    loop, _ = echo_loop()
    for n in range(300):
        loop.process(turn(f"s{n}", turn_id=f"t{n}"))
    assert loop.turns.running() == 0
    for n in range(1000):  # cancels of turns that never come
        loop.cancel("nobody", f"ghost-{n}")
    assert len(loop.turns._cancelled) <= 256
    loop.cancel("s1", "t-late")
    ran = loop.process(turn("s1", turn_id="t-late"))
    assert ran == [] and "t-late" not in loop.turns._cancelled


def test_a_turns_record_is_dropped_once_its_done_is_shown() -> None:
    kept = Kept("test", list)
    seen: list[tuple[str, list[str], bool]] = []

    def record(signal: Signal, event: Event) -> None:
        state = signal.turn.state
        assert state is not None
        state.kept(kept).append(event.kind)
        seen.append((event.kind, list(state.kept(kept)), state.ended))

    loop, ran = echo_loop(emit=record)
    given = TurnState()  # the record a face gives with its prompt
    signal = turn("s", turn_id="t")
    signal.turn = dataclasses.replace(signal.turn, state=given)
    loop.process(signal)
    assert len(ran) == 1 and signal.turn.state is given  # the loop took the face's record
    assert seen == [("done", ["done"], False)]  # the Done still sees what the turn kept
    assert given.ended and given.kept(kept) == [] and loop.turns.running() == 0
    again = turn("s", turn_id="t2")
    again.turn = dataclasses.replace(again.turn, state=given)
    loop.process(again)  # a record that ended is never a new turn's
    assert again.turn.state is not given


def test_a_gate_that_hangs_is_cut_off_and_the_action_refused() -> None:
    release = threading.Event()

    def hang(action: Action, signal: Signal) -> Verdict:
        release.wait(30)
        return Verdict.allow()

    events: list[tuple[str, dict[str, Any]]] = []

    def record(signal: Signal, event: Event) -> None:
        events.append((event.kind, fields(event)))

    loop, ran = echo_loop(Skill("stuck", gate=hang), gate_timeout=0.2, emit=record)
    try:
        assert loop.process(turn("s")) == []
        assert ran == []  # the gate's allow, thirty seconds on, would have run it
        denied = [d for k, d in events if k == "denied"]
        assert denied and "took longer than 0.2 s" in denied[0]["reason"]
    finally:
        release.set()
