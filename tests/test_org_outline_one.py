"""One outline and one heading for every reader of org: org's own reading (what the
edits act on) and the memory import's (orgparse's reading, with bodies) give the same
types, the same tree and the same addressing."""

from __future__ import annotations

from passepartout.memory.orgimport import parse_org_text, parse_org_text_orgparse
from passepartout.memory.orgscan import scan
from passepartout.org.heading import Heading
from passepartout.org.outline import Outline

TEXT = """\
#+TITLE: Notes
Before any heading.
* TODO [#A] Write report :work:urgent:
SCHEDULED: <2026-11-23 Mon>
The report's body.
*** Deep, under the report
** Sources
* Done
"""


def shape(headings: list[Heading]) -> list[tuple[int, str, list]]:
    return [(h.line, h.title, shape(h.children)) for h in headings]


def test_org_reading_is_a_tree_whose_parents_are_the_ancestors() -> None:
    outline = Outline(TEXT)
    assert shape(outline.top) == [
        (2, "Write report", [(5, "Deep, under the report", []), (6, "Sources", [])]),
        (7, "Done", []),
    ]
    for heading in outline.headings:
        for child in heading.children:
            assert outline.olpath(child)[-1] == heading
    assert outline.body == "#+TITLE: Notes\nBefore any heading.\n"


def test_the_memory_scan_gives_the_same_outline_with_bodies() -> None:
    scanned, org = scan(TEXT), Outline(TEXT)
    assert isinstance(scanned, Outline)
    assert shape(scanned.top) == shape(org.top)
    assert [(h.line, h.level, h.keyword, h.title, h.tags, h.text) for h in scanned.headings] == [
        (h.line, h.level, h.keyword, h.title, h.tags, h.text) for h in org.headings]
    report = scanned.find("Write report")
    assert report.body == "The report's body."  # orgparse's body: no planning line
    assert report.lines[0].startswith("* TODO [#A] Write report")
    assert scanned.find("Write report/Sources") == org.find("Write report/Sources")
    assert scanned.body == "#+TITLE: Notes\nBefore any heading."


def test_orgparse_and_the_scan_still_make_the_same_nodes() -> None:
    assert parse_org_text(TEXT, "notes.org") == parse_org_text_orgparse(TEXT, "notes.org")
