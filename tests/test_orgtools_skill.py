"""The org tools through the gates, in an agent with the shipped security skills and
the ``orgtools`` skill: every edit asks (a write), a grant lets edits run without
asking, a private subtree is asked every time (a grant does not cover it) and refused
when the file turned private after the gates judged it, text cannot become structure,
and files are written whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from security_agent import Channel, Script, call, make_agent, user

from passepartout.agent import Agent
from passepartout.errors import PipelineError
from passepartout.protocol import OrgEdited

TASKS = """\
* Projects
** Alpha
:PROPERTIES:
:ID:       alpha
:END:
*** TODO Water the plants
SCHEDULED: <2026-11-20 Fri 09:00 +1w>
* Diary                                                           :@personal:
** Tuesday
Private text.
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "userhome"))
    (tmp_path / "userhome").mkdir()
    return tmp_path / "userhome"


def make(tmp_path: Path, script: Script, answer: bool = False) -> tuple[Agent, Channel, Path]:
    agent, channel = make_agent(tmp_path, script, "orgtools.py")
    channel.answer = answer
    org = tmp_path / "memex" / "tasks.org"
    org.write_text(TASKS, encoding="utf-8")
    return agent, channel, org


def results(channel: Channel) -> list[dict[str, object]]:
    return channel.of("tool-result")


def test_every_org_tool_asks_and_writes_only_on_yes(tmp_path: Path, home: Path) -> None:
    memex = str(tmp_path / "memex" / "tasks.org")
    agent, chan, org = make(tmp_path, Script([[call("org-set-property", file=memex,
                                                    heading="id:alpha", key="Owner",
                                                    value="Ann")]]))
    agent.loop.process(user())
    assert len(chan.asked) == 1 and "high-impact" in "; ".join(chan.asked[0].reasons)
    assert org.read_text() == TASKS  # no answer is a no
    chan.answer = True
    agent.loop.think = Script([[call("org-set-property", file=str(org), heading="id:alpha",
                                     key="Owner", value="Ann")]])
    agent.loop.process(user())
    assert ":Owner:    Ann\n" in org.read_text()


def test_a_grant_lets_org_edits_run_without_asking(tmp_path: Path, home: Path) -> None:
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "policy.toml").write_text(
        f'[[rule]]\ndecision = "allow"\ntool = "org-add-note"\nscope = "{tmp_path / "memex"}"\n')
    memex = tmp_path / "memex" / "tasks.org"
    agent, chan, org = make(tmp_path, Script([[call("org-add-note", file=str(memex),
                                                    heading="Projects/Alpha",
                                                    note="Called.\n* NOT a heading")]]))
    agent.loop.process(user())
    assert chan.asked == [], chan.asked
    text = org.read_text()
    assert "- Note taken on [" in text and "\n  ,* NOT a heading\n" in text
    assert [line for line in text.splitlines() if line.startswith("*")] == [
        line for line in TASKS.splitlines() if line.startswith("*")]


@pytest.mark.attack
def test_a_private_subtree_is_asked_even_under_a_grant_and_refused_without_yes(
        tmp_path: Path, home: Path) -> None:
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "policy.toml").write_text(
        f'[[rule]]\ndecision = "allow"\ntool = "org-set-todo"\nscope = "{tmp_path / "memex"}"\n'
        f'[[rule]]\ndecision = "allow"\ntool = "org-refile"\nscope = "{tmp_path / "memex"}"\n')
    memex = str(tmp_path / "memex" / "tasks.org")
    script = Script([[call("org-set-todo", file=memex, heading="Diary/Tuesday", state="DONE")],
                     [call("org-refile", file=memex, heading="Projects/Alpha",
                           to_heading="Diary")]])
    agent, chan, org = make(tmp_path, script)
    agent.loop.process(user())
    agent.loop.process(user())
    assert len(chan.asked) == 2
    assert all("private" in "; ".join(r.reasons) for r in chan.asked)
    assert org.read_text() == TASKS
    # with the person's yes, the edit is made
    chan.answer = True
    agent.loop.think = Script([[call("org-set-todo", file=memex, heading="Diary/Tuesday",
                                     state="DONE")]])
    agent.loop.process(user())
    assert "** DONE Tuesday" in org.read_text()


@pytest.mark.attack
def test_the_tool_refuses_a_file_that_turned_private_after_the_gates(tmp_path: Path,
                                                                     home: Path) -> None:
    agent, _chan, org = make(tmp_path, Script([]), answer=True)
    tool = agent.tool("org-add-note")
    assert tool is not None
    org.write_text("#+FILETAGS: :@personal:\n" + TASKS, encoding="utf-8")
    with pytest.raises(PipelineError, match="private"):
        tool.fn(file=str(org), heading="id:alpha", note="x")
    assert org.read_text().startswith("#+FILETAGS")
    assert "Note taken" not in org.read_text()


def test_each_tool_makes_its_edit(tmp_path: Path, home: Path) -> None:
    agent, _chan, org = make(tmp_path, Script([]), answer=True)
    run = {name: agent.tool(name).fn for name in (  # type: ignore[union-attr]
        "org-add-heading", "org-set-todo", "org-refile", "org-archive", "org-capture")}
    f = str(org)
    run["org-add-heading"](file=f, title="Beta", parent="Projects", tags=["work"],
                           properties={"ID": "beta"}, body="Plans.", todo="TODO")
    run["org-set-todo"](file=f, heading="Projects/Alpha/Water the plants", state="DONE")
    text = org.read_text()
    assert "** TODO Beta" in text and ":work:" in text and ":ID:       beta" in text
    assert "SCHEDULED: <2026-11-27 Fri 09:00 +1w>" in text  # "+" shifts once
    assert ":LAST_REPEAT:" in text and '- State "DONE"       from "TODO"' in text
    run["org-refile"](file=f, heading="id:beta", to_heading="Projects/Alpha")
    assert "*** TODO Beta" in org.read_text()
    run["org-archive"](file=f, heading="Projects/Alpha/Beta")
    archived = (tmp_path / "memex" / "tasks.org_archive").read_text()
    assert "Archived entries from file" in archived and "* TODO Beta" in archived
    assert ":ARCHIVE_OLPATH: Projects/Alpha" in archived and "Beta" not in org.read_text()
    run["org-capture"](title="Buy milk", body="2 litres")
    assert (tmp_path / "memex" / "inbox.org").read_text() == "* Buy milk\n2 litres\n"


def test_bad_input_is_a_clear_error_and_nothing_is_written(tmp_path: Path, home: Path) -> None:
    agent, _chan, org = make(tmp_path, Script([]), answer=True)
    tool = agent.tool("org-set-property")
    assert tool is not None
    for heading, key, match in [("Projects/Nope", "A", "no heading"),
                                 ("id:alpha", "BAD NAME", "property name"),
                                 ("id:alpha", "TODO", "not a property")]:
        with pytest.raises(PipelineError, match=match):
            tool.fn(file=str(org), heading=heading, key=key, value="v")
    with pytest.raises(PipelineError, match="not an org file"):
        tool.fn(file=str(tmp_path / "memex" / "x.txt"), heading="A", key="A", value="v")
    assert org.read_text() == TASKS


@pytest.mark.attack
def test_an_org_file_in_a_protected_place_is_refused_without_asking(tmp_path: Path,
                                                                    home: Path) -> None:
    protected = tmp_path / "skills" / "notes.org"
    script = Script([[call("org-add-note", file=str(protected), heading="A", note="x")]])
    agent, chan, _org = make(tmp_path, script, answer=True)
    protected.write_text("* A\n", encoding="utf-8")
    agent.loop.process(user())
    assert chan.asked == [] and protected.read_text() == "* A\n"
    denied = chan.of("denied")
    assert denied and "policy" in denied[0]["reason"]


class Recorder(Channel):
    """An Emacs channel that records the events broadcast to its peers."""

    calls: list[OrgEdited]

    def broadcast(self, event: OrgEdited) -> None:
        self.calls.append(event)


def test_each_edit_is_sent_to_emacs_with_the_text_before_and_after(tmp_path: Path,
                                                                   home: Path) -> None:
    agent, _chan, org = make(tmp_path, Script([]), answer=True)
    recorder = Recorder(answer=True)
    recorder.calls = []
    agent.attach_faces(recorder)
    tool = agent.tool("org-archive")
    assert tool is not None
    tool.fn(file=str(org), heading="Projects/Alpha")
    archive = tmp_path / "memex" / "tasks.org_archive"
    # the new archive file has no buffer yet; the source file is sent
    assert recorder.calls == [OrgEdited(str(org), TASKS, org.read_text())]
    tool.fn(file=str(org), heading="Projects")
    assert [edit.file for edit in recorder.calls[1:]] == [str(archive), str(org)]
