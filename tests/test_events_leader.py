"""Two agents on one state directory (Emacs's server and the daemon, say): cron jobs
and hooks run in one of them, never in both, and the other takes over when it stops."""

from __future__ import annotations

from pathlib import Path

import events_memex
from events_memex import UTC, Clock

from passepartout.events.orchestrator import Orchestrator


def _agent(tmp_path: Path, clock: Clock, memex: Path) -> tuple[Orchestrator, list[str]]:
    ran: list[str] = []
    orch = Orchestrator(home=tmp_path / "home", memex_dir=memex, clock=clock, tz=UTC,
                        inject=lambda s: True, watch_delay=0.05)
    orch.bootstrap()
    orch.register_reflex("check-integrity", lambda job: ran.append(job.id) or "ok")
    return orch, ran


def test_one_agent_runs_the_jobs_and_fires_the_hooks(tmp_path: Path) -> None:
    clock = Clock("2026-05-03 09:00")
    memex = events_memex.build(tmp_path)
    first, first_ran = _agent(tmp_path, clock, memex)
    second, second_ran = _agent(tmp_path, clock, memex)
    clock.set("2026-05-03 10:30")  # integrity-1 is due at 10:00 daily
    assert second.on_heartbeat() == []
    assert first.on_heartbeat() == ["integrity-1"]
    assert first_ran == ["integrity-1"] and second_ran == []
    fired: list[str] = []
    for orch in (first, second):
        orch.register_hook("notify-me", lambda event, o=orch: fired.append(
            "first" if o is first else "second") or None)
    guarded = memex / "projects" / "deep" / "guarded.org"
    guarded.write_text(guarded.read_text().replace("intact.", "intact, please."))
    second.rescan(guarded)
    first.rescan(guarded)
    assert fired == ["first"]
    # The first stops: the second runs the next day's job.
    first.stop()
    clock.set("2026-05-04 10:30")
    assert "integrity-1" in second.on_heartbeat()
    assert second_ran == ["integrity-1"]
    second.stop()
