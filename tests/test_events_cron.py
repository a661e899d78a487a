"""Cron: next runs as org computes them, persistence, catch-up, no overlap."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from events_memex import UTC, Clock, at
from passepartout.org.timestamps import parse_timestamp

from passepartout.events.cron import Scheduler, make_job
from passepartout.events.jobs import Job, OrgNode, Tier


def node(cron: str, *, heading: str = "Weekly report", body: str = "Plan the week.",
         node_id: str = "job-1", **props: str) -> OrgNode:
    properties = {"CRON": cron, **{k.upper(): v for k, v in props.items()}}
    return OrgNode(node_id, "/m/a.org", heading, (), 1, body, properties, f"* {heading}")


def job(cron: str, **kw: str) -> Job:
    return make_job(node(cron, **kw))


@pytest.fixture
def clock() -> Clock:
    return Clock("2026-05-03 12:00")


def scheduler(tmp_path: Path, clock: Clock) -> Scheduler:
    return Scheduler(tmp_path / "cron.json", clock=clock, tz=UTC)


def test_the_first_run_is_the_timestamp_and_the_next_one_follows_the_repeater(
    tmp_path: Path, clock: Clock
) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-05-04 Mon 09:00 +1w>"))
    assert j.next_run == at("2026-05-04 09:00")
    assert s.due() == []
    clock.set("2026-05-04 09:00")
    assert [d.id for d in s.due()] == ["job-1"]
    note = s.start_run(j)
    assert "next run 2026-05-11T09:00" in note
    assert j.next_run == at("2026-05-11 09:00") and j.last_run == at("2026-05-04 09:00")


def test_times_survive_a_restart(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-05-03 Sun 10:00 +1d>"))
    s.start_run(j)
    s.finish(j.id, "ok")
    again = scheduler(tmp_path, clock).upsert(job("<2026-05-03 Sun 10:00 +1d>"))
    assert again.next_run == at("2026-05-04 10:00")
    assert again.last_run == at("2026-05-03 12:00") and again.last_result == "ok"


def test_a_job_missed_while_down_runs_once_and_says_so(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-05-03 Sun 13:00 +1d>"))
    assert j.next_run == at("2026-05-03 13:00")
    s.save()  # what stopping the server does
    # Three weeks later the server starts again.
    clock.set("2026-05-24 18:00")
    s2 = scheduler(tmp_path, clock)
    j2 = s2.upsert(job("<2026-05-03 Sun 13:00 +1d>"))
    assert [d.id for d in s2.due()] == [j2.id]
    note = s2.start_run(j2)
    assert "catch-up" in note and "running it once" in note
    assert j2.next_run == at("2026-05-25 13:00")  # the first repeat after now
    s2.finish(j2.id, "done")
    assert s2.due() == []  # once, not once per missed day


def test_a_plus_repeater_far_behind_runs_once_then_the_first_repeat_after_now(
    tmp_path: Path, clock: Clock
) -> None:
    clock.set("2026-05-03 12:00")
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-01-05 Mon 09:00 +1w>"))  # org would show it overdue
    assert [d.id for d in s.due()] == [j.id]
    note = s.start_run(j)
    assert "overdue" in note
    assert j.next_run == at("2026-05-04 09:00")
    s.finish(j.id, None)
    assert s.due() == []


def test_two_runs_of_a_job_never_overlap(tmp_path: Path, clock: Clock) -> None:
    s = Scheduler(tmp_path / "c.json", clock=clock, tz=UTC, max_run_seconds=86400)
    j = s.upsert(job("<2026-05-03 Sun 11:00 +1h>"))
    s.start_run(j)
    clock.set("2026-05-03 14:30")  # due again, but the first run has not finished
    assert s.due() == []
    s.finish(j.id, "slow but done")
    assert [d.id for d in s.due()] == [j.id]
    assert s.job(j.id) is not None and s.job(j.id).last_result == "slow but done"  # type: ignore[union-attr]


def test_a_run_lost_for_longer_than_the_limit_no_longer_blocks(
    tmp_path: Path, clock: Clock
) -> None:
    s = Scheduler(tmp_path / "c.json", clock=clock, tz=UTC, max_run_seconds=60)
    j = s.upsert(job("<2026-05-03 Sun 11:00 +1h>"))
    s.start_run(j)
    clock.set("2026-05-03 13:30")
    assert [d.id for d in s.due()] == [j.id]


def test_an_edited_repeater_starts_again_from_the_file(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-05-04 Mon 09:00 +1w>"))
    assert j.next_run == at("2026-05-04 09:00")
    changed = s.upsert(job("<2026-05-05 Tue 08:00 +2d>"))
    assert changed.next_run == at("2026-05-05 08:00")
    restarted = scheduler(tmp_path, clock).job("job-1")
    assert restarted is None  # jobs come from the files; the state alone runs nothing


def test_a_one_shot_runs_once_even_across_restarts(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-05-03 Sun 11:00>"))
    note = s.start_run(j)
    assert "never (one-shot)" in note and j.next_run is None
    s.finish(j.id, "ok")
    again = scheduler(tmp_path, clock)
    again.upsert(job("<2026-05-03 Sun 11:00>"))
    assert again.due() == []


@pytest.mark.parametrize("cron", ["<2026-05-03 Sun 11:00>", "<2026-05-03 Sun 10:00 +1d>"])
def test_a_run_the_agent_never_finished_runs_again_once_after_the_restart(
    tmp_path: Path, clock: Clock, cron: str
) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job(cron))
    s.start_run(j)  # killed here: no finish, no close
    clock.set("2026-05-03 12:30")
    again = scheduler(tmp_path, clock)
    j2 = again.upsert(job(cron))
    assert [d.id for d in again.due()] == ["job-1"]
    note = again.start_run(j2)
    assert "interrupted" in note and "2026-05-03 12:00" in note
    # Its schedule is the one the first run had set: not moved on a second time.
    expected = None if "+1d" not in cron else at("2026-05-04 10:00")
    assert j2.next_run == expected
    again.finish(j2.id, "ok")
    third = scheduler(tmp_path, clock)  # finished: not run a third time
    j3 = third.upsert(job(cron))
    assert third.due() == [] and j3.last_result == "ok" and j3.next_run == expected


def test_an_inactive_timestamp_never_runs(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("[2026-05-01 Fri +1d]"))
    assert j.next_run is None and s.due() == []


def test_a_rescan_saves_the_state_a_moment_later(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    s.state.delay = 0.05
    s.upsert(job("<2026-05-04 Mon 09:00 +1w>"))
    deadline = time.monotonic() + 5
    while not (tmp_path / "cron.json").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "2026-05-04T09:00:00+00:00" in (tmp_path / "cron.json").read_text()


def test_a_removed_job_is_gone_but_its_times_wait_a_while(tmp_path: Path, clock: Clock) -> None:
    s = scheduler(tmp_path, clock)
    j = s.upsert(job("<2026-05-03 Sun 10:00 +1d>"))
    s.start_run(j)
    assert s.remove("job-1") is not None
    assert s.jobs() == [] and s.due() == []
    back = s.upsert(job("<2026-05-03 Sun 10:00 +1d>"))  # moved to another file
    assert back.next_run == at("2026-05-04 10:00") and back.last_run == at("2026-05-03 12:00")
    s.remove("job-1")
    entry = s.state.get("job-1")
    assert entry is not None
    entry["removed"] = "2020-01-01T00:00:00+00:00"  # long gone
    s.save()
    assert "job-1" not in (tmp_path / "cron.json").read_text()


def test_a_corrupt_state_file_starts_afresh(tmp_path: Path, clock: Clock) -> None:
    (tmp_path / "cron.json").write_text("{not json")
    s = scheduler(tmp_path, clock)
    assert s.upsert(job("<2026-05-04 Mon 09:00 +1w>")).next_run == at("2026-05-04 09:00")
    s.save()
    assert "job-1" in (tmp_path / "cron.json").read_text()


def test_make_job_reads_tier_reflex_and_reports_bad_values() -> None:
    j = job("<2026-05-04 Mon>", heading="Summarize the inbox", body="")
    assert j.tier is Tier.COGNITION
    assert job("<2026-05-04 Mon>", tier=":Reflex", reflex="tidy").tier is Tier.REFLEX
    assert job("<2026-05-04 Mon>", tier="reflex", reflex="tidy").reflex == "tidy"
    with pytest.raises(ValueError, match="tier 'huge' is not one of"):
        job("<2026-05-04 Mon>", tier="huge")
    with pytest.raises(ValueError, match="no such date"):
        job("<2026-02-30 Mon>")
    assert j.timestamp == parse_timestamp("<2026-05-04 Mon>")
