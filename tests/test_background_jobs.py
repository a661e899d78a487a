"""The background jobs' cron headings: made once at the first start, visible and
editable in org, never made again once the person deleted or disabled one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from background_agent import JOB_IDS, make_agent

from passepartout.background.archivist import SPEC as ARCHIVIST
from passepartout.background.jobs import JobHeadings
from passepartout.events.scan import scan_file


def test_the_three_jobs_are_made_once_and_stay_as_the_person_left_them(
        tmp_path: Path, env: dict[str, str]) -> None:
    agent = make_agent(tmp_path, env, {})
    path = Path(env["MEMEX_DIR"]) / "system" / "background.org"
    try:
        orch = agent.services["orchestrator"]
        assert sorted(n.id for n in scan_file(path).nodes) == sorted(JOB_IDS)
        now = dt.datetime.now().astimezone()
        for job_id in JOB_IDS:
            job = orch.job(job_id)
            assert job.tier == "reflex" and job.reflex == job_id.split("-", 1)[1]
            assert job.next_run > now and job.last_run is None  # not run at the start
        text = path.read_text()
        assert ":ARCHIVE_AFTER: 30" in text and ":NOTES_FILE: notes/scribe.org" in text
    finally:
        agent.shutdown()
    # The person turns the gardener off (deletes it) and the archivist (drops :CRON:).
    text = path.read_text()
    start = text.index("* Gardener")
    end = text.index("* ", start + 2)
    text = text[:start] + text[end:]
    text = "\n".join(line for line in text.split("\n")
                     if not (line.startswith(":CRON:") and "+1w" in line))
    path.write_text(text)
    (tmp_path / "skills").rename(tmp_path / "skills-1")
    again = make_agent(tmp_path, env, {})
    try:
        assert path.read_text() == text  # nothing made again, nothing changed
        jobs = [j["id"] for j in again.services["orchestrator"].jobs()]
        assert jobs == ["passepartout-scribe"]
    finally:
        again.shutdown()


def test_a_heading_the_person_wrote_is_kept_and_an_unreadable_record_makes_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "memex" / "system" / "background.org"
    path.parent.mkdir(parents=True)
    own = ("* My archivist\n:PROPERTIES:\n:ID: passepartout-archivist\n"
           ":CRON: <2026-01-04 Sun 06:00 +1w>\n:END:\n")
    path.write_text(own)
    headings = JobHeadings(tmp_path / "state", path)
    now = dt.datetime(2026, 11, 23, 12, 0).astimezone()
    assert headings.ensure(ARCHIVIST, now) == "already in the memex"
    assert path.read_text() == own
    (tmp_path / "state" / "jobs.json").write_text("{not json")
    other = JobHeadings(tmp_path / "state", tmp_path / "memex" / "other.org")
    assert other.ensure(ARCHIVIST, now).startswith("made before")
    assert not (tmp_path / "memex" / "other.org").exists()


def test_the_first_run_is_the_next_time_of_day() -> None:
    before = dt.datetime(2026, 11, 23, 4, 59).astimezone()
    after = dt.datetime(2026, 11, 23, 5, 0).astimezone()
    assert ARCHIVIST.stamp(before) == "<2026-11-23 Mon 05:00 +1w>"
    assert ARCHIVIST.stamp(after) == "<2026-11-24 Tue 05:00 +1w>"
