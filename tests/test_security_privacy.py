"""Org subtrees tagged @personal never go to a model: the reader (where a private
subtree ends, as org-mode reads it), the redaction tools apply, and which files are
org files.  The reader is checked against org-mode itself in test_orgprivacy_emacs."""

from __future__ import annotations

from pathlib import Path

from passepartout.org.filetype import is_org_file, org_by_content, org_by_name
from passepartout.org.private import filetags, read_private
from passepartout.security.privacy.index import PrivateIndex, current

from passepartout.security.privacy import (
    MARKER,
    file_is_private,
    heading_tags,
    redact_file_text,
    redact_private,
)

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
Kept text.
"""


def private_of(text: str) -> list[str]:
    reading = read_private(text)
    return [line for line, p in zip(reading.lines, reading.private, strict=True) if p]


def test_tagged_subtrees_are_withheld_with_their_children() -> None:
    out = redact_private(NOTES)
    for gone in ("Salary talk", "1234", "Bank account", "Dear diary"):
        assert gone not in out
    for kept in ("Quarterly plan.", "** Roadmap", "Public roadmap.", "Kept text.", "* Code"):
        assert kept in out
    assert out.count(MARKER) == 2


def test_a_star_and_a_tab_or_a_no_break_space_is_body_text() -> None:
    text = "* Diary :@personal:\n*\tstill the diary\n*\u00a0and this\n** child\nx\n* Public\ny\n"
    assert private_of(text) == ["* Diary :@personal:", "*\tstill the diary",
                                "*\u00a0and this", "** child", "x"]


def test_a_heading_inside_a_block_is_a_heading_for_org() -> None:
    # org's outline does not know blocks: the block ends at the heading
    text = "* Code\n#+begin_src org\n* inside :@personal:\nsecret\n#+end_src\n* After\nok\n"
    assert private_of(text) == ["* inside :@personal:", "secret", "#+end_src"]


def test_a_heading_after_an_unclosed_block_is_a_heading() -> None:
    text = "* Code\n#+begin_example\nnot closed\n* Diary :@personal:\nsecret\n"
    assert private_of(text) == ["* Diary :@personal:", "secret", ""]


def test_the_tag_is_configurable_and_exact() -> None:
    out = redact_private(NOTES, tag="journal")
    assert "Dear diary" not in out and "1234" in out
    assert redact_private("* A :@personally:\nx\n") == "* A :@personally:\nx\n"
    assert redact_private("* A :@Personal:\nx\n") == "* A :@Personal:\nx\n"


def test_filetags_hide_the_whole_file_in_every_spelling() -> None:
    for line in ("#+FILETAGS: :home:@personal:", "#+filetags: @personal",
                 "  #+FILETAGS:@personal", "#+FILETAGS: a :x:@personal"):
        text = f"Intro\n{line}\n* Anything\nsecret\n"
        assert file_is_private(text), line
        assert redact_private(text) == MARKER
    # a FILETAGS line inside a verbatim block is not a keyword for org
    quoted = "#+begin_example\n#+FILETAGS: :@personal:\n#+end_example\n* A\nx\n"
    assert filetags(quoted) == ()
    assert not file_is_private(quoted)


def test_heading_tags() -> None:
    assert heading_tags("** TODO Call :a:@personal:") == {"a", "@personal"}
    assert heading_tags("* Time 10:30 today") == set()
    assert heading_tags("* Title :a:b:  \t") == {"a", "b"}
    assert heading_tags("* :only:") == {"only"}
    assert heading_tags("* Title :x\u00b2:@personal:") == set()  # not [:alnum:] in Emacs
    assert heading_tags("* Title :caf\u00e9:@personal:") == {"caf\u00e9", "@personal"}
    assert heading_tags("* Title :@personal:\u00a0") == set()
    # a CRLF file: Emacs reads it without the \r, so the tags count (the safe side)
    assert heading_tags("* Title :@personal:\r") == {"@personal"}


def test_org_files_by_org_rules(tmp_path: Path) -> None:
    for name in ("n.org", "N.ORG", "x.org_archive", "n.org~", "n.org.~3~"):
        assert org_by_name(name), name
    for name in ("n.txt", "n.organizer", "org", "n.org.bak"):
        assert not org_by_name(name), name
    assert org_by_content("# -*- mode: org -*-\n")
    assert org_by_content("#!/bin/sh\n# -*- mode: org; coding: utf-8 -*-\n")
    assert org_by_content("-*- org -*-\n")
    assert org_by_content("x\n", "\n# Local Variables:\n# mode: org\n# End:\n")
    assert not org_by_content("x\n-*- mode: org -*-\n")
    txt = tmp_path / "notes.txt"
    txt.write_text("# -*- mode: org -*-\n* A\n")
    assert is_org_file(txt)
    link = tmp_path / "plain"
    link.symlink_to(tmp_path / "n.org")
    assert is_org_file(link)  # the real file's name counts, not the link's


def test_file_text_is_judged_on_its_content_not_its_path() -> None:
    text = "* Diary :@personal:\nzebra canary 4242\n* Public\nfine\n"
    for path in ("notes.org/.", "notes.org/", "x.org_archive", "notes.txt", "/proc/self/fd/3"):
        out = redact_file_text(path, text)
        assert "zebra canary" not in out and "fine" in out, path


def test_redacted_file_text_teaches_the_index() -> None:
    text = "* Diary :@personal:\nthe okapi canary sleeps at noon\n"
    redact_file_text("/nonexistent/learned.org", text)
    assert current().contains_private("x The Okapi  canary sleeps at NOON y")
    current().forget("/nonexistent/learned.org")


def test_the_index_withholds_pieces_and_whole_short_lines() -> None:
    index = PrivateIndex()
    index.learn("a.org", ["My salary is 1234.", "A long private line about the garden "
                          "and the neighbours' quarrel over the fence"])
    out = index.withhold("grep: a.org:2:My salary is 1234.\nok")
    assert "1234" not in out and MARKER in out and out.endswith("ok")
    # a piece cut out of a long line, re-wrapped and upper-cased
    out = index.withhold("...THE NEIGHBOURS' QUARREL\n  over the fence... ok")
    assert "quarrel" not in out.lower() and out.endswith("ok")
    assert index.withhold("The salary is public") == "The salary is public"
    # delimiters are in every org file: never learned
    index.learn("b.org", [":PROPERTIES:", ":END:", "#+begin_src python", "#+end_src"])
    assert index.withhold(":PROPERTIES:\n:END:\n#+begin_src python") == (
        ":PROPERTIES:\n:END:\n#+begin_src python")


def test_the_index_decodes_base64_and_hex_runs() -> None:
    import base64

    index = PrivateIndex()
    line = "my bank password hint is the blue heron"
    index.learn("a.org", [line])
    for encoded in (base64.b64encode(("note\n" + line).encode()).decode(),
                    (line + "\n").encode().hex()):
        out = index.withhold(f"output: {encoded} end")
        assert encoded not in out and MARKER in out


def test_text_that_holds_a_private_heading_is_withheld_even_if_never_scanned() -> None:
    index = PrivateIndex()
    out = index.withhold("exit code 0\n* Diary :@personal:\nunseen secret line\n* Other\nok")
    assert "unseen secret" not in out and "ok" in out
    assert index.contains_private("unseen secret line")  # and learned
