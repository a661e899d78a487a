"""The agenda tool: SCHEDULED and DEADLINE lines of the memex, private subtrees left out."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from passepartout.errors import PipelineError
from passepartout.events.agenda import agenda_text, agenda_tool

MONDAY = dt.date(2026, 11, 23)

TASKS = """\
#+TITLE: Tasks
* TODO Water the plants
SCHEDULED: <2026-11-16 Mon 09:00 +1w>
* TODO Pay the rent
DEADLINE: <2026-11-25 Wed>
* DONE Old errand
SCHEDULED: <2026-11-23 Mon>
* TODO File the taxes
SCHEDULED: <2026-11-20 Fri>
* TODO Return the book
DEADLINE: <2026-11-21 Sat>
* Team meeting :work:
SCHEDULED: <2026-11-23 Mon 14:00-15:00>
* TODO Far away
DEADLINE: <2027-03-01 Mon>
* Diary :@personal:
** TODO See the doctor
SCHEDULED: <2026-11-23 Mon 11:00>
"""


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    root = tmp_path / "memex"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "tasks.org").write_text(TASKS, encoding="utf-8")
    (root / "private.org").write_text(
        "#+FILETAGS: :@personal:\n* TODO Secret\nSCHEDULED: <2026-11-23 Mon>\n", encoding="utf-8")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.org").write_text("* TODO Hidden\nSCHEDULED: <2026-11-23 Mon>\n")
    outside = tmp_path / "outside.org"
    outside.write_text("* TODO Outside\nSCHEDULED: <2026-11-23 Mon>\n", encoding="utf-8")
    os.symlink(outside, root / "link.org")
    return root


def test_today_shows_what_org_shows(memex: Path) -> None:
    text = agenda_text(memex, "today", today=MONDAY)
    lines = text.splitlines()
    assert lines[0] == "Monday 2026-11-23"
    assert "- 09:00 Scheduled: TODO Water the plants (sub/tasks.org)" in lines  # repeated
    assert "- 14:00 Scheduled: Team meeting (sub/tasks.org)" in lines
    assert "- Sched. 3x: TODO File the taxes (sub/tasks.org)" in lines
    assert "- 2 d. ago: TODO Return the book (sub/tasks.org)" in lines
    assert "- In 2 d.: TODO Pay the rent (sub/tasks.org)" in lines
    for absent in ("Old errand", "Far away", "doctor", "Secret", "Hidden", "Outside"):
        assert absent not in text


def test_tomorrow_and_the_week(memex: Path) -> None:
    assert agenda_text(memex, "tomorrow", today=MONDAY) == "Tuesday 2026-11-24\n- nothing due"
    week = agenda_text(memex, "week", today=MONDAY)
    assert "Wednesday 2026-11-25\n- Deadline: TODO Pay the rent (sub/tasks.org)" in week
    assert week.count("Water the plants") == 1  # next Monday is outside the seven days
    assert agenda_text(memex, "2026-11-30", today=MONDAY).count("Water the plants") == 1


def test_the_tool_refuses_a_bad_day_clearly(memex: Path) -> None:
    tool = agenda_tool(lambda: memex)
    assert tool.name == "agenda" and "day" in tool.parameters["properties"]
    with pytest.raises(PipelineError, match="today, tomorrow, week or a date"):
        tool.run({"day": "someday"})
    assert tool.run({}).startswith(f"{dt.date.today():%A %Y-%m-%d}")


def test_no_memex_is_nothing_due(tmp_path: Path) -> None:
    assert agenda_text(tmp_path / "absent", today=MONDAY) == "Monday 2026-11-23\n- nothing due"
