"""The org edits on their own: addressing, clear errors, escaping of every text they
write, and files written whole (the destination first when an edit writes two)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from passepartout.org.edit_files import OrgFiles
from passepartout.org.edits import NewHeading
from passepartout.org.outline import OrgEditError, Outline

from passepartout.org import edits

NOW = dt.datetime(2026, 11, 23, 18, 0, tzinfo=ZoneInfo("Europe/Berlin"))
TEXT = """\
#+FILETAGS: :proj:
* Projects :work:
** Alpha
:PROPERTIES:
:ID:       alpha
:END:
*** TODO [#A] Write report                                           :urgent:
* Twin
* Twin
"""


def test_headings_are_found_by_id_and_by_outline_path() -> None:
    outline = Outline(TEXT)
    assert outline.find("id:alpha").title == "Alpha"
    assert outline.find("alpha").title == "Alpha"
    found = outline.find("Projects/Alpha/Write report")
    assert (found.keyword, found.tags, found.text) == ("TODO", ("urgent",), "[#A] Write report")
    with pytest.raises(OrgEditError, match="no heading at 'Projects/Beta'"):
        outline.find("Projects/Beta/Gamma")
    with pytest.raises(OrgEditError, match="2 headings"):
        outline.find("Twin")
    with pytest.raises(OrgEditError, match="on 2 headings"):
        Outline(TEXT.replace("* Twin\n", "* Twin\n:PROPERTIES:\n:ID: alpha\n:END:\n", 1)).find(
            "id:alpha")


def test_no_text_becomes_structure() -> None:
    new = NewHeading(title="Plan\n* injected :x:y", body="* not a heading\n:END:\n#+begin_src",
                     properties={"NOTE": "one\n:END:\ntwo"})
    text = edits.add_heading(TEXT, "id:alpha", new)
    outline = Outline(text)
    assert len(outline.headings) == len(Outline(TEXT).headings) + 1
    added = outline.find("Projects/Alpha/Plan * injected :x:y")
    assert outline.property(added, "NOTE") == "one : END: two"
    assert "\n,* not a heading\n,:END:\n,#+begin_src\n" in text
    note = edits.add_note(TEXT, "id:alpha", "line\n* heading?\r:PROPERTIES:", NOW)
    assert "\n  ,* heading?\n  ,:PROPERTIES:\n" in note
    assert len(Outline(note).headings) == len(Outline(TEXT).headings)


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(OrgEditError, match="ends like org tags"):
        edits.add_heading(TEXT, None, NewHeading(title="Meeting :work:"))
    with pytest.raises(OrgEditError, match="not an org tag"):
        edits.add_heading(TEXT, None, NewHeading(title="T", tags=("two words",)))
    with pytest.raises(OrgEditError, match="not an org property name"):
        edits.set_property(TEXT, "id:alpha", "A B", "v")
    with pytest.raises(OrgEditError, match="not a property org stores"):
        edits.set_property(TEXT, "id:alpha", "todo", "DONE")
    with pytest.raises(OrgEditError, match="not a TODO keyword"):
        edits.set_todo(TEXT, "id:alpha", "WAITING", NOW)
    with pytest.raises(OrgEditError, match="under itself"):
        edits.refile(TEXT, "Projects", "Projects/Alpha")
    with pytest.raises(OrgEditError, match="deeper level"):
        edits.add_heading(TEXT, "id:alpha", NewHeading(title="T"), level=2)
    with pytest.raises(OrgEditError, match="needs a title"):
        edits.add_heading(TEXT, None, NewHeading(title=" \n "))


def test_a_title_starting_with_a_keyword_stays_a_title() -> None:
    text = edits.add_heading(TEXT, None, NewHeading(title="DONE is not a state"))
    heading = Outline(text).headings[-1]
    assert heading.keyword is None and heading.title == ",DONE is not a state"


def test_archive_keeps_org_context() -> None:
    rest, archived = edits.archive(TEXT, "Projects/Alpha/Write report", "~/org/a.org", None, NOW)
    assert "Write report" not in rest
    assert archived.startswith("#    -*- mode: org -*-\n\n\nArchived entries from file ~/org/a.org")
    for line in (":ARCHIVE_TIME: 2026-11-23 Mon 18:00", ":ARCHIVE_OLPATH: Projects/Alpha",
                 ":ARCHIVE_CATEGORY: a", ":ARCHIVE_TODO: TODO", ":ARCHIVE_ITAGS: proj work"):
        assert line in archived


def test_two_file_edits_write_the_destination_first(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    src, dst = tmp_path / "a.org", tmp_path / "b.org"
    src.write_text(TEXT)
    dst.write_text("* Inbox\n")
    files = OrgFiles(resolve=lambda raw: Path(raw), inbox=tmp_path / "inbox.org",
                     private_tag="@personal", now=lambda: NOW)
    plan = files.plan_refile(str(src), "Projects/Alpha", str(dst), "Inbox")
    assert list(plan.writes) == [dst, src]
    written: list[Path] = []

    def failing(path: Path, data: str) -> None:
        if written:
            raise OSError(28, "No space left on device")
        written.append(path)
        path.write_text(data)

    monkeypatch.setattr("passepartout.org.edit_files.atomic_write", failing)
    with pytest.raises(OSError):
        files.apply(plan)
    assert src.read_text() == TEXT and "** Alpha" in dst.read_text()  # a copy, never a loss


def test_private_edits_are_flagged(tmp_path: Path) -> None:
    org = tmp_path / "a.org"
    org.write_text("* Open\n** Child\n*** Diary :@personal:\nsecret\n* Other\n")
    files = OrgFiles(resolve=lambda raw: Path(raw), inbox=tmp_path / "inbox.org",
                     private_tag="@personal", now=lambda: NOW)
    assert files.plan_set_property(str(org), "Open/Child/Diary", "A", "1").private
    assert files.plan_archive(str(org), "Open").private  # holds a private subtree
    assert files.plan_add_heading(str(org), NewHeading("x"), "Open/Child/Diary", None).private
    assert not files.plan_add_heading(str(org), NewHeading("x"), None, 4).private
    org.write_text("* Open\n** Diary :@personal:\nsecret\n")
    assert files.plan_add_heading(str(org), NewHeading("x"), None, 3).private  # falls under it
    assert not files.plan_add_heading(str(org), NewHeading("x"), None, 1).private
    org.write_text("* Open\n** Child\n*** Diary :@personal:\nsecret\n* Other\n")
    assert not files.plan_set_property(str(org), "Other", "A", "1").private
    assert files.plan_refile(str(org), "Other", None, "Open/Child/Diary").private
