"""The one org module: headings and drawers read as org reads them, written back the same,
and the writers routed through it keep their bytes."""

from __future__ import annotations

from types import SimpleNamespace

from passepartout.context import render_node
from passepartout.memory.nodes import MemoryNode
from passepartout.memory.orgwrite import render_node as memory_lines
from passepartout.org.drawer import (
    drawer_lines,
    entry_properties,
    named_drawer,
    property_drawer,
    property_line,
)
from passepartout.org.entry import entry_lines
from passepartout.org.heading import heading_line, read_heading
from passepartout.security.audit import parse_entries


def test_heading_parts() -> None:
    found = read_heading("** TODO [#A] Call the bank   :work:phone:\n")
    assert found is not None
    assert (found.level, found.keyword, found.title, found.tags) == (
        2, "TODO", "Call the bank", ("work", "phone"))
    assert found.text == "[#A] Call the bank"
    assert read_heading("*bold* text") is None
    assert read_heading(" * indented") is None
    assert read_heading("NEXT thing") is None
    assert read_heading("* NEXT thing", {"NEXT"}).keyword == "NEXT"  # type: ignore[union-attr]
    assert read_heading("* NEXT thing").keyword is None  # type: ignore[union-attr]


def test_heading_line_round_trip() -> None:
    line = heading_line(3, "Plan", "TODO", ("a", "b"))
    assert line == "*** TODO Plan :a:b:"
    again = read_heading(line)
    assert again is not None and (again.level, again.keyword, again.title, again.tags) == (
        3, "TODO", "Plan", ("a", "b"))
    aligned = heading_line(1, "Plan", None, ("x",), align=True)
    assert aligned.endswith(":x:") and len(aligned) == 77
    assert heading_line(1, "", None) == "* "
    assert heading_line(1, "", None, align=True) == "*"


def test_property_drawer_as_org_reads_it() -> None:
    lines = ["* H", ":PROPERTIES:", ":ID:       abc", ":TAGS+: x", ":EMPTY:", ":END:", "body"]
    found = property_drawer(lines, 1)
    assert found is not None and (found.start, found.end, found.after) == (1, 5, 6)
    assert found.properties == {"ID": "abc", "TAGS+": "x", "EMPTY": ""}
    # a line that is no property means no drawer, as in org
    assert property_drawer([":PROPERTIES:", "text", ":END:"], 0) is None
    assert property_drawer([":PROPERTIES:", ":A: 1"], 0) is None  # never closed
    assert property_drawer(["text", ":PROPERTIES:", ":END:"], 0) is None


def test_entry_properties_reader() -> None:
    lines = ["SCHEDULED: <2026-01-01 Thu>\r", ":properties:\r", ":ID: x1\r", "stray", ":end:\r",
             "body"]
    planning, props, rest = entry_properties(lines)
    assert planning == "SCHEDULED: <2026-01-01 Thu>"
    assert props == {"ID": "x1"}
    assert lines[rest] == "body"
    assert entry_properties(["just body"]) == ("", {}, 0)


def test_named_drawer() -> None:
    lines = ["* H", ":LOGBOOK:", "- State DONE", ":END:", ":NOTES:", "free", ":END:"]
    found = named_drawer(lines, "notes", 1)
    assert found is not None and (found.name, found.start, found.end) == ("NOTES", 4, 6)
    assert named_drawer(lines, "LOGBOOK", 0) is not None
    assert named_drawer(lines, "CLOCK", 0) is None
    assert named_drawer(["* H", ":LOGBOOK:", "x"], "LOGBOOK", 0) is None


def test_drawer_writing_reads_back() -> None:
    lines = drawer_lines([("ID", "1"), ("EMPTY", "")], "  ")
    assert lines == ["  :PROPERTIES:", "  :ID: 1", "  :EMPTY:", "  :END:"]
    assert property_drawer(lines, 0).properties == {"ID": "1", "EMPTY": ""}  # type: ignore[union-attr]
    assert property_line("ID", "x", 10) == ":ID:       x"


def test_entry_lines() -> None:
    assert entry_lines(2, "T", keyword="DONE", tags=("t",), planning="CLOSED: [2026-01-01]",
                       properties={"A": "b"}, body="text") == [
        "** DONE T :t:", "CLOSED: [2026-01-01]", ":PROPERTIES:", ":A: b", ":END:", "text"]
    assert entry_lines(1, "T") == ["* T"]


def test_memory_node_rendering_is_unchanged() -> None:
    node = MemoryNode(id="n1", title="Title\u2028two", todo="TODO", tags=("a", "b"),
                      properties={"KEY": "v\nw", "bad name": "x"},
                      planning="DEADLINE: <2026-02-02>", body="text\n* not a heading")
    assert memory_lines(node, 2) == [
        "** TODO Title two :a:b:", "DEADLINE: <2026-02-02>", ":PROPERTIES:", ":ID: n1",
        ":KEY: v w", ":END:", "text", ",* not a heading"]


def test_context_rendering_is_unchanged() -> None:
    node = SimpleNamespace(title="T", todo="NEXT", tags=["x"], planning="",
                           properties={"ID": "1", "E": ""}, body="b\n\n")
    assert render_node(node, 1) == "* NEXT T :x:\n:PROPERTIES:\n:ID: 1\n:E: \n:END:\nb"


def test_audit_entries_read_through_the_drawer_reader() -> None:
    text = ("* DENY run bash\n:PROPERTIES:\n:GATE: policy\n:REASON: no: never\n:END:\n"
            "- policy (deny): no\n* ALLOW read x\n:PROPERTIES:\n:GATE: sandbox\n:END:\n")
    entries = parse_entries(text)
    assert [(e.decision, e.gate, e.title) for e in entries] == [
        ("deny", "policy", "run bash"), ("allow", "sandbox", "read x")]
    assert entries[0].properties["REASON"] == "no: never"
