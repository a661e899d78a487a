"""The archivist on a scratch memex: old DONE subtrees go to the file's _archive through
the org-archive tool and the gates; young, undated, nested and private ones stay; with
no rule allowing it, the archiving waits as a Flight Plan."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from background_agent import allow_rules, events_text, make_agent, run_job

from passepartout.background.archivist import candidates
from passepartout.background.memex import read_memex

OLD = (dt.date.today() - dt.timedelta(days=60)).strftime("%Y-%m-%d %a")
YOUNG = (dt.date.today() - dt.timedelta(days=5)).strftime("%Y-%m-%d %a")

TASKS = f"""#+TODO: TODO NEXT | DONE CANCELLED
* Projects
** DONE Ship the release
CLOSED: [{OLD} 10:00]
*** DONE Write the notes
CLOSED: [{OLD} 09:00]
** CANCELLED Old idea
CLOSED: [{OLD} 11:00]
** DONE Fresh work
CLOSED: [{YOUNG} 10:00]
** DONE No date
** TODO Still open
* Diary                                                           :@personal:
** DONE Private errand
CLOSED: [{OLD} 08:00]
"""


def headings(text: str) -> list[str]:
    return [line.split(":")[0].strip() for line in text.splitlines() if line.startswith("*")]


def test_old_done_subtrees_are_archived_through_the_org_tool(
        tmp_path: Path, env: dict[str, str]) -> None:
    memex = Path(env["MEMEX_DIR"])
    allow_rules(Path(env["PASSEPARTOUT_CONFIG_DIR"]), memex, "org-archive")
    agent = make_agent(tmp_path, env, {"projects/tasks.org": TASKS})
    try:
        result = run_job(agent, "archivist")
        assert result == "proposed archiving 2 DONE subtree(s)"
        tasks = memex / "projects" / "tasks.org"
        assert headings(tasks.read_text()) == [
            "* Projects", "** DONE Fresh work", "** DONE No date", "** TODO Still open",
            "* Diary", "** DONE Private errand"]
        archive = (memex / "projects" / "tasks.org_archive").read_text()
        assert "* DONE Ship the release" in archive and "** DONE Write the notes" in archive
        assert "* CANCELLED Old idea" in archive and ":ARCHIVE_FILE:" in archive
        assert "Private errand" not in archive
        log = events_text(env)
        assert log.count("org-archive done") == 2
        # Nothing left to do: the next run proposes nothing.
        assert run_job(agent, "archivist") == "nothing to archive"
    finally:
        agent.shutdown()


def test_the_age_is_the_persons_setting(tmp_path: Path, env: dict[str, str]) -> None:
    memex = Path(env["MEMEX_DIR"])
    allow_rules(Path(env["PASSEPARTOUT_CONFIG_DIR"]), memex, "org-archive")
    agent = make_agent(tmp_path, env, {"projects/tasks.org": TASKS})
    try:
        jobs = memex / "system" / "background.org"
        jobs.write_text(jobs.read_text().replace(":ARCHIVE_AFTER: 30", ":ARCHIVE_AFTER: 3"))
        assert run_job(agent, "archivist") == "proposed archiving 3 DONE subtree(s)"
        assert "Fresh work" in (memex / "projects" / "tasks.org_archive").read_text()
        jobs.write_text(jobs.read_text().replace(":ARCHIVE_AFTER: 3", ":ARCHIVE_AFTER: soon"))
        assert run_job(agent, "archivist").startswith("error: ValueError: :ARCHIVE_AFTER: is")
    finally:
        agent.shutdown()


@pytest.mark.attack
def test_without_a_rule_the_archiving_waits_as_a_flight_plan(
        tmp_path: Path, env: dict[str, str]) -> None:
    memex = Path(env["MEMEX_DIR"])
    agent = make_agent(tmp_path, env, {"projects/tasks.org": TASKS})
    try:
        assert run_job(agent, "archivist") == "proposed archiving 2 DONE subtree(s)"
        assert (memex / "projects" / "tasks.org").read_text() == TASKS
        assert not (memex / "projects" / "tasks.org_archive").exists()
        plans = (memex / "system" / "approvals.org").read_text()
        assert plans.count("org-archive") >= 2
        assert events_text(env).count("waits for approval (Flight Plan") == 2
        # Proposed once: the next run does not ask again.
        assert run_job(agent, "archivist") == "nothing to archive"
    finally:
        agent.shutdown()


def test_candidates_skip_archived_tags_and_headings_without_a_unique_name(
        tmp_path: Path) -> None:
    memex = tmp_path / "memex"
    memex.mkdir()
    (memex / "x.org").write_text(
        f"* DONE Twin\nCLOSED: [{OLD} 10:00]\n* DONE Twin\nCLOSED: [{OLD} 10:00]\n"
        f"* DONE Kept in place                                               :ARCHIVE:\n"
        f"CLOSED: [{OLD} 10:00]\n"
        f"* DONE With id\nCLOSED: [{OLD} 10:00]\n:PROPERTIES:\n:ID: w-1\n:END:\n"
        f"* DONE Scheduled too\nSCHEDULED: <{OLD}> CLOSED: [{OLD} 12:30]\n")
    now = dt.datetime.now().astimezone()
    found = candidates(read_memex(memex, "@personal"), now, dt.timedelta(days=30))
    assert [(c.address, c.closed.strftime("%H:%M")) for c in found] == [
        ("id:w-1", "10:00"), ("Scheduled too", "12:30")]
