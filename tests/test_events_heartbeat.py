"""The heartbeat bus: handlers on every tick or every so many seconds; failures contained."""

from __future__ import annotations

import pytest

from passepartout.events.heartbeat import HeartbeatBus, Tick


class Monotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_handlers_run_each_tick_or_at_their_interval() -> None:
    clock = Monotonic()
    bus = HeartbeatBus(monotonic=clock)
    ticks: list[int] = []
    saves: list[int] = []
    bus.register(lambda tick: ticks.append(tick.count), name="every")
    bus.register(lambda tick: saves.append(tick.count), name="autosave", every=300)
    for _ in range(3):
        clock.now += 60
        bus.tick()
    assert ticks == [1, 2, 3] and saves == []
    clock.now += 130  # 310 s since registration
    report = bus.tick()
    assert saves == [4] and report.ran == ["every", "autosave"]
    clock.now += 60
    bus.tick()
    assert saves == [4]


def test_a_failing_handler_is_reported_and_the_others_run() -> None:
    bus = HeartbeatBus()
    ran: list[str] = []

    def broken(tick: Tick) -> None:
        raise OSError("disk full")

    bus.register(broken)
    bus.register(lambda tick: ran.append("after"), name="after")
    report = bus.tick()
    assert report.failed == {"broken": "OSError: disk full"} and ran == ["after"]
    info = {h["name"]: h for h in bus.handlers()}
    assert info["broken"]["errors"] == 1 and info["after"]["runs"] == 1


def test_registering_again_replaces_and_bad_intervals_are_refused() -> None:
    bus = HeartbeatBus()
    calls: list[str] = []
    bus.register(lambda tick: calls.append("old"), name="cron")
    bus.register(lambda tick: calls.append("new"), name="cron")
    bus.tick()
    assert calls == ["new"]
    bus.unregister("cron")
    bus.tick()
    assert calls == ["new"]
    with pytest.raises(ValueError, match="every must be positive"):
        bus.register(lambda tick: None, name="x", every=0)
