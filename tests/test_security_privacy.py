"""Org subtrees tagged @personal never go to a model."""

from __future__ import annotations

from passepartout.security.privacy import file_is_private, heading_tags, redact_private

NOTES = """#+TITLE: Notes
* Work :project:
Quarterly plan.
** Salary talk :@personal:
My salary is 1234.
*** Details
Bank account 9876.
** Roadmap
Public roadmap.
* Diary :@personal:journal:
Dear diary.
* Code
#+begin_src org
* not a heading :@personal:
#+end_src
Kept text.
"""


def test_tagged_subtrees_are_removed_with_their_children() -> None:
    out = redact_private(NOTES)
    for gone in ("Salary talk", "1234", "Bank account", "Dear diary"):
        assert gone not in out
    for kept in ("Quarterly plan.", "Roadmap", "Public roadmap.", "Kept text.", "* Code"):
        assert kept in out


def test_heading_inside_a_block_is_not_a_heading() -> None:
    assert "* not a heading :@personal:" in redact_private(NOTES)


def test_the_tag_is_configurable_and_exact() -> None:
    out = redact_private(NOTES, tag="journal")
    assert "Dear diary" not in out and "1234" in out
    assert redact_private("* A :@personally:\nx\n") == "* A :@personally:\nx\n"


def test_filetags_hide_the_whole_file() -> None:
    text = "#+FILETAGS: :home:@personal:\n* Anything\nsecret\n"
    assert file_is_private(text)
    assert redact_private(text) == ""


def test_heading_tags() -> None:
    assert heading_tags("** TODO Call :a:@personal:") == {"a", "@personal"}
    assert heading_tags("* Time 10:30 today") == set()
