"""The memex face in process (the daemon's half of ``passepartout mcp``): a write is
asked in Emacs when a face is attached and applied on yes, refused on no, and a Flight
Plan otherwise; a memory snapshot comes first; a private heading is not the client's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from llm_agent import Recorder, agent_memory, make_agent, make_config

from passepartout.agent import Agent
from passepartout.mcp.memex import FaceError

NOTES = "* Plans\n** TODO Write the report\n* Diary :@personal:\n** TODO Call mum\n"


@dataclass
class Face:
    closed: bool = False


@dataclass
class Emacs:
    """The Emacs channel as the face sees it: the attached faces, and session binding."""

    attached: list[Face] = field(default_factory=list)
    bound: dict[str, Face] = field(default_factory=dict)

    def faces(self) -> list[Face]:
        return self.attached

    def bind(self, session: str, peer: Face) -> None:
        self.bound[session] = peer


def agent_with(tmp_path: Path, answer: bool, attached: bool) -> tuple[Agent, Recorder, Emacs]:
    (tmp_path / "memex").mkdir()
    (tmp_path / "memex" / "plans.org").write_text(NOTES)
    agent, rec = make_agent(make_config(tmp_path, PASSEPARTOUT_MEMORY_IMPORT="on"),
                            Recorder(answer=answer))
    emacs = Emacs([Face()] if attached else [])
    agent.services["peer"] = emacs
    agent_memory(agent)
    return agent, rec, emacs


def todo(agent: Agent, state: str, heading: str = "Plans/Write the report") -> str:
    return str(agent.services["mcp-memex"].handle(
        "gptel", "set-todo", {"file": "plans.org", "heading": heading, "state": state}))


def test_asked_in_emacs_when_a_face_is_attached_then_applied(tmp_path: Path) -> None:
    agent, rec, emacs = agent_with(tmp_path, answer=True, attached=True)
    try:
        reply = todo(agent, "DONE")
        snapshots = agent.services["memory"].snapshots()
    finally:
        agent.shutdown()
    assert len(rec.asked) == 1 and "asked by gptel over MCP" in rec.asked[0].describe()
    assert rec.asked[0].signal.turn.face == "mcp"  # the face that asked, not "emacs"
    assert emacs.bound == {"mcp:gptel": emacs.attached[0]}
    assert "** DONE Write the report" in (tmp_path / "memex" / "plans.org").read_text()
    assert not reply.startswith(("pending", "not approved", "refused")), reply
    assert snapshots[0].label == "before org-set-todo from MCP"  # the newest, before the edit


def test_a_no_in_emacs_applies_nothing(tmp_path: Path) -> None:
    agent, _, _ = agent_with(tmp_path, answer=False, attached=True)
    try:
        reply = todo(agent, "DONE")
    finally:
        agent.shutdown()
    assert reply.startswith("not approved: the person declined org-set-todo")
    assert "** TODO Write the report" in (tmp_path / "memex" / "plans.org").read_text()


def test_without_a_face_it_is_a_flight_plan(tmp_path: Path) -> None:
    agent, rec, _ = agent_with(tmp_path, answer=True, attached=False)
    try:
        reply = todo(agent, "DONE")
        plans = agent.services["security"].book.plans()
    finally:
        agent.shutdown()
    assert not rec.asked and reply.startswith("pending: org-set-todo")
    assert [p.state for p in plans] == ["TODO"] and "org-set-todo" in plans[0].title
    assert "** TODO Write the report" in (tmp_path / "memex" / "plans.org").read_text()


@pytest.mark.attack
def test_a_private_heading_is_not_the_clients(tmp_path: Path) -> None:
    agent, rec, _ = agent_with(tmp_path, answer=True, attached=True)
    try:
        with pytest.raises(FaceError, match="not available over MCP"):
            todo(agent, "DONE", "Diary/Call mum")
        outline = agent.services["mcp-memex"].handle("gptel", "read", {"target": "plans.org"})
    finally:
        agent.shutdown()
    assert not rec.asked
    assert outline == "plans.org\n* Plans\n** TODO Write the report"
    assert "** TODO Call mum" in (tmp_path / "memex" / "plans.org").read_text()


def test_an_unknown_operation_is_an_error(tmp_path: Path) -> None:
    agent, _, _ = agent_with(tmp_path, answer=True, attached=False)
    try:
        with pytest.raises(FaceError, match="unknown operation 'delete'"):
            agent.services["mcp-memex"].handle("x", "delete", {})
    finally:
        agent.shutdown()


def test_a_schedule_is_asked_too_though_the_model_may_schedule_unasked(
        tmp_path: Path) -> None:
    agent, rec, _ = agent_with(tmp_path, answer=True, attached=False)
    try:
        reply = agent.services["mcp-memex"].handle("gptel", "schedule", {
            "name": "Water the plants", "timestamp": "<2030-01-05 Sat 09:00>",
            "prompt": "remind me to water the plants"})
    finally:
        agent.shutdown()
    assert not rec.asked and reply.startswith("pending: schedule(") and "Flight Plan" in reply
    assert not list((tmp_path / "memex").rglob("schedule.org"))
