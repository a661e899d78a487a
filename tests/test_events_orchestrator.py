"""The orchestrator over a memex fixture: bootstrap, rescans, the watcher, Emacs edits,
and dispatch by tier on the heartbeat."""

from __future__ import annotations

from pathlib import Path

import events_memex
import pytest
from agents import wait_for
from events_memex import UTC, Clock, at

from passepartout.errors import ProtocolError
from passepartout.events.jobs import Job
from passepartout.events.orchestrator import Orchestrator
from passepartout.loop.events import Done, Reply
from passepartout.signals import Signal


class Injected:
    def __init__(self) -> None:
        self.signals: list[Signal] = []

    def __call__(self, signal: Signal) -> bool:
        self.signals.append(signal)
        return True


@pytest.fixture
def clock() -> Clock:
    return Clock("2026-05-03 12:00")


@pytest.fixture
def injected() -> Injected:
    return Injected()


@pytest.fixture
def orch(tmp_path: Path, clock: Clock, injected: Injected) -> Orchestrator:
    memex = events_memex.build(tmp_path)
    return Orchestrator(home=tmp_path / "home", memex_dir=memex, clock=clock, tz=UTC,
                        inject=injected, watch_delay=0.05)


def headings(orch: Orchestrator) -> list[str]:
    return sorted(j["heading"] for j in orch.jobs())


def test_bootstrap_loads_the_scan_dirs_and_reports_bad_files(orch: Orchestrator) -> None:
    report = orch.bootstrap()
    assert report.files == 5  # the lock file and the directory outside the scan dirs are not
    assert headings(orch) == ["Architecture", "Good job", "Integrity", "Weekly summary"]
    problems = "\n".join(report.problems)
    assert "latin1.org" in problems and "UTF-8" in problems
    assert "broken.org: Bad job: :CRON: no such date 2026-13-45" in problems
    assert orch.ready.is_set()


def test_scan_dirs_are_configurable(tmp_path: Path) -> None:
    memex = events_memex.build(tmp_path)
    o = Orchestrator(home=tmp_path / "h", memex_dir=memex, scan_dirs=["outside"], tz=UTC)
    o.bootstrap()
    assert headings(o) == ["Not scanned"]


def test_rescans_follow_modify_delete_and_move(orch: Orchestrator) -> None:
    orch.bootstrap()
    reports = orch.memex_dir / "projects" / "reports.org"
    reports.write_text(reports.read_text().replace("+1w>", "+2w>"))
    orch.rescan(reports)
    weekly = next(j for j in orch.jobs() if j["heading"] == "Weekly summary")
    assert weekly["timestamp"] == "<2026-05-04 Mon 09:00 +2w>"
    moved = orch.memex_dir / "system" / "reports.org"
    reports.rename(moved)
    orch.rescan(reports)
    orch.rescan(moved)
    assert headings(orch) == ["Architecture", "Good job", "Integrity", "Weekly summary"]
    assert next(j for j in orch.jobs() if j["id"] == "arch-1")["file"] == str(moved)
    moved.unlink()
    orch.rescan(moved)
    assert headings(orch) == ["Good job"]


def test_a_removed_directory_takes_its_jobs_along(orch: Orchestrator) -> None:
    orch.bootstrap()
    for path in (orch.memex_dir / "system").iterdir():
        path.unlink()
    (orch.memex_dir / "system").rmdir()
    orch.rescan(orch.memex_dir / "system")
    assert "Good job" not in headings(orch)


def test_the_watcher_keeps_the_registry_current(orch: Orchestrator) -> None:
    orch.bootstrap()
    assert orch.start_watcher()
    try:
        new = orch.memex_dir / "projects" / "new.org"
        new.write_text("* Fresh\n:PROPERTIES:\n:ID: fresh-1\n:CRON: <2026-05-09 Sat +1d>\n:END:\n")
        wait_for(lambda: "Fresh" in headings(orch))
        new.write_text(new.read_text().replace("+1d", "+3d"))
        wait_for(lambda: orch.job("fresh-1") is not None
                 and orch.job("fresh-1").source.endswith("+3d>"))  # type: ignore[union-attr]
        moved = orch.memex_dir / "system" / "moved.org"
        new.rename(moved)
        wait_for(lambda: orch.job("fresh-1") is not None
                 and orch.job("fresh-1").file == str(moved))  # type: ignore[union-attr]
        moved.unlink()
        wait_for(lambda: "Fresh" not in headings(orch))
    finally:
        orch.stop()
    assert not orch.watching


def test_an_emacs_edit_of_a_file_not_on_disk_uses_the_sent_texts(orch: Orchestrator) -> None:
    file = str(orch.memex_dir / "unsaved.org")
    text = "** Daily\n:PROPERTIES:\n:CRON: <2026-05-04 Mon 07:00 +1d>\n:END:\nSummarize mail.\n"
    orch.apply_edit({"file": file, "action": "added", "outline": ["Top"], "new": text})
    assert headings(orch) == ["Daily"]
    job = orch.jobs()[0]
    orch.apply_edit({"file": file, "action": "changed", "outline": ["Top"], "old": text,
                     "new": text.replace("+1d", "+2d")})
    assert [j["timestamp"] for j in orch.jobs()] == ["<2026-05-04 Mon 07:00 +2d>"]
    assert orch.jobs()[0]["id"] == job["id"]
    orch.apply_edit({"file": file, "action": "removed", "heading": "Daily", "outline": ["Top"]})
    assert orch.jobs() == []


def test_an_org_edit_without_a_file_is_a_clear_error(orch: Orchestrator) -> None:
    with pytest.raises(ProtocolError, match="needs :file"):
        orch.apply_edit({"action": "changed"})


def test_a_reflex_job_runs_its_registered_function(
    orch: Orchestrator, clock: Clock, injected: Injected
) -> None:
    orch.bootstrap()
    ran: list[Job] = []
    orch.register_reflex("check-integrity", lambda job: ran.append(job) or "all good")
    clock.set("2026-05-03 10:30")  # integrity-1 is due at 10:00 daily
    assert orch.on_heartbeat() == ["integrity-1"]
    assert [j.id for j in ran] == ["integrity-1"] and injected.signals == []
    job = orch.job("integrity-1")
    assert job is not None and job.last_result == "all good" and not job.running
    assert job.next_run == at("2026-05-04 10:00")
    assert "reflex check-integrity done" in orch.events.path.read_text()


def test_a_reflex_that_is_not_registered_is_reported(orch: Orchestrator, clock: Clock) -> None:
    orch.bootstrap()
    clock.set("2026-05-03 10:30")
    orch.on_heartbeat()
    job = orch.job("integrity-1")
    assert job is not None and job.last_result is not None
    assert "no reflex named 'check-integrity'" in job.last_result
    assert "failed" in orch.events.path.read_text()


def test_model_tiers_are_injected_tagged_with_their_heading(
    orch: Orchestrator, clock: Clock, injected: Injected
) -> None:
    orch.bootstrap()
    orch.register_reflex("check-integrity", lambda job: None)
    clock.set("2026-05-05 07:45")  # Weekly summary (cognition), Good job (cognition) due
    started = orch.on_heartbeat()
    assert "arch-1" not in started and "integrity-1" in started
    by_heading = {s.turn.heading: s for s in injected.signals}
    good = by_heading["good-1"]
    assert good.payload == {"sensor": "user-input",
                            "text": "Good job\n\nFind the list of open tasks."}
    assert good.turn.origin == "cron" and good.turn.face == "cron"
    assert good.turn.tier == "cognition" and good.session_id == "cron:good-1"
    # The loop's events come back through the background channel and end the run.
    assert orch.on_heartbeat() == []  # still running: not started again
    orch.channel.send(good, Reply("3 open tasks"))
    orch.channel.send(good, Done(False))
    job = orch.job("good-1")
    assert job is not None and not job.running and job.last_result == "3 open tasks"
    assert "good-1: done" in orch.events.path.read_text()


def test_a_hook_node_that_asks_for_a_tier_prompts_the_model(
    orch: Orchestrator, injected: Injected
) -> None:
    orch.bootstrap()
    path = orch.memex_dir / "projects" / "deep" / "guarded.org"
    path.write_text(path.read_text().replace(":ID: guard-1", ":ID: guard-1\n:TIER: cognition"))
    orch.rescan(path)
    assert [(s.turn.origin, s.turn.heading) for s in injected.signals] == [
        ("hook", "guard-1")]


def test_a_quiet_heartbeat_starts_nothing(
    orch: Orchestrator, clock: Clock, injected: Injected
) -> None:
    clock.set("2026-05-03 09:00")  # before every job's first run
    orch.bootstrap()
    assert orch.on_heartbeat() == [] and injected.signals == []
