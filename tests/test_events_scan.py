"""Finding CRON/HOOK drawers in org files: the pre-filter, orgparse, ids, problems."""

from __future__ import annotations

from pathlib import Path

import events_memex
import orgparse
import pytest

from passepartout.events.jobs import derive_id
from passepartout.events.scan import (
    clean_title,
    has_candidates,
    org_files,
    scan_bytes,
    scan_file,
    scan_text,
)


@pytest.fixture
def memex(tmp_path: Path) -> Path:
    return events_memex.build(tmp_path)


def test_nodes_carry_heading_body_outline_and_properties(memex: Path) -> None:
    scan = scan_file(memex / "projects" / "reports.org")
    assert scan.problems == []
    by_heading = {n.heading: n for n in scan.nodes}
    assert sorted(by_heading) == ["Architecture", "Integrity", "Weekly summary"]
    weekly = by_heading["Weekly summary"]  # NEXT, priority and tags are not the title
    assert weekly.outline == ("Work",)
    assert weekly.level == 2
    assert weekly.cron == "<2026-05-04 Mon 09:00 +1w>"
    assert weekly.prompt == "Weekly summary\n\nSummarize my notes of the week."
    assert weekly.text.startswith("** NEXT [#A] Weekly summary")
    integrity = by_heading["Integrity"]
    assert integrity.id == "integrity-1"
    assert integrity.cron == "<2026-05-03 Sun 10:00 +1d>"  # property names are case-blind
    assert integrity.properties["REFLEX"] == "check-integrity"


def test_a_heading_without_id_gets_a_stable_derived_one(memex: Path) -> None:
    path = memex / "projects" / "reports.org"
    first = next(n for n in scan_file(path).nodes if n.heading == "Weekly summary")
    assert first.id == derive_id(str(path), ["Work", "Weekly summary"])
    edited = events_memex.WEEKLY.replace("Summarize my notes", "Summarize all my notes")
    again = next(n for n in scan_text(edited, str(path)).nodes if n.heading == "Weekly summary")
    assert again.id == first.id and again.body != first.body
    renamed = events_memex.WEEKLY.replace("Weekly summary", "Weekly digest")
    other = next(n for n in scan_text(renamed, str(path)).nodes if n.heading == "Weekly digest")
    assert other.id != first.id


def test_several_hook_names_and_body_mentions(memex: Path) -> None:
    scan = scan_file(memex / "projects" / "deep" / "guarded.org")
    assert [n.heading for n in scan.nodes] == ["Guarded notes"]  # the body mention is no drawer
    assert scan.nodes[0].hooks == ("verify-integrity", "notify-me")


def test_a_piece_of_a_file_gets_the_ids_it_has_in_the_whole_file(memex: Path) -> None:
    path = str(memex / "projects" / "reports.org")
    whole = {n.heading: n.id for n in scan_file(path).nodes}
    piece = "** Weekly summary\n:PROPERTIES:\n:CRON: <2026-05-04 Mon 09:00 +1w>\n:END:\n"
    node = scan_text(piece, path, ("Work",)).nodes[0]
    assert node.id == whole["Weekly summary"]


def test_unreadable_and_undecodable_files_are_reported_by_name(memex: Path) -> None:
    scan = scan_file(memex / "system" / "latin1.org")
    assert scan.nodes == [] and "latin1.org" in str(scan.problems[0])
    assert "UTF-8" in scan.problems[0].message
    missing = scan_file(memex / "system" / "gone.org")
    assert "cannot read" in missing.problems[0].message and "gone.org" in missing.problems[0].file


def test_the_prefilter_skips_files_without_drawers_and_agrees_with_orgparse(memex: Path) -> None:
    assert not has_candidates(b"* heading\n  some :hooked: text\nthe :CRON: word mid-line\n")
    assert has_candidates(b"* h\n  :PROPERTIES:\n  :Hook: x\n  :END:\n")
    for path in org_files([memex]):
        try:
            tree = orgparse.load(str(path))
        except UnicodeDecodeError:
            continue
        expected = sorted(
            n.heading for n in tree[1:]
            if {k.upper() for k in n.properties} & {"CRON", "HOOK"}
        )
        assert sorted(n.heading for n in scan_file(path).nodes) == expected, path


def test_org_files_skip_lock_files_and_hidden_directories(memex: Path) -> None:
    (memex / "projects" / ".git").mkdir()
    (memex / "projects" / ".git" / "x.org").write_text("* h\n")
    names = {p.name for p in org_files([memex / "projects", memex / "system"])}
    assert names == {"reports.org", "guarded.org", "broken.org", "latin1.org", "plain.org"}


def test_clean_title_strips_what_org_get_heading_strips() -> None:
    assert clean_title("TODO [#B] Call mom   :home:phone:") == "Call mom"
    assert clean_title("WAIT Something", ("WAIT",)) == "Something"
    assert clean_title("TODOS are words") == "TODOS are words"
    assert clean_title("COMMENT Hidden") == "Hidden"


def test_scan_bytes_reads_an_odd_property_drawer() -> None:
    data = b"* A\n  :PROPERTIES:\n  :HOOK:   gate-me\n  :END:\n** B\n"
    scan = scan_bytes(data, "/x.org")
    assert [(n.heading, n.hooks, n.text) for n in scan.nodes] == [
        ("A", ("gate-me",), "* A\n  :PROPERTIES:\n  :HOOK:   gate-me\n  :END:")
    ]
