"""Flight Plans: background asks become TODO entries in the approvals org file; an entry
set to APPROVED on disk (Emacs closed) runs its exact action once on the next heartbeat;
an edited action never runs; a rejection's reason goes back to the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from security_agent import Script, call, make_agent

from passepartout.agent import Agent
from passepartout.signals import Keyword, Signal


def cron(text: str = "nightly job") -> Signal:
    return Signal(
        payload={"sensor": Keyword("user-input"), "text": text},
        meta={"source": Keyword("cron"), "session-id": "job-1", "origin": Keyword("cron")},
    )


def heartbeat(agent: Agent) -> None:
    agent.loop.process(
        Signal(payload={"sensor": Keyword("heartbeat"), "unix-time": 1},
               meta={"source": Keyword("heartbeat")})
    )


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Agent, Path, list[Signal]]:
    agent, _ = make_agent(
        tmp_path, Script([[call("write-file", path="report.txt", content="made by cron\n")]])
    )
    injected: list[Signal] = []
    agent.services["flightplans"].inject = injected.append
    agent.loop.process(cron())
    return agent, tmp_path / "memex" / "system" / "approvals.org", injected


def set_state(approvals: Path, old: str, new: str) -> None:
    text = approvals.read_text()
    assert f"* {old} " in text
    approvals.write_text(text.replace(f"* {old} ", f"* {new} ", 1))


def test_background_ask_becomes_a_pending_flight_plan(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path
) -> None:
    agent, approvals, _ = setup
    text = approvals.read_text()
    assert "#+TODO: TODO APPROVED | DONE REJECTED CANCELLED" in text
    assert "* TODO write-file(" in text and ":HASH:" in text and '"report.txt"' in text
    assert not (tmp_path / "work" / "report.txt").exists()
    ledger = json.loads((tmp_path / "state" / "flightplans.json").read_text())
    assert [v["state"] for v in ledger.values()] == ["pending"]
    decisions = [(e.decision, e.gate) for e in agent.services["security"].audit.entries()]
    assert ("ask", "flightplan") in decisions
    # The same action proposed again does not add a second entry.
    agent.loop.think = Script([[call("write-file", path="report.txt", content="made by cron\n")]])
    agent.loop.process(cron())
    assert approvals.read_text().count("* TODO ") == 1


def test_approved_on_disk_runs_exactly_once_on_the_heartbeat(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path
) -> None:
    agent, approvals, injected = setup
    report = tmp_path / "work" / "report.txt"
    heartbeat(agent)
    assert not report.exists()  # still TODO: nothing runs
    set_state(approvals, "TODO", "APPROVED")
    heartbeat(agent)
    assert report.read_text() == "made by cron\n"
    text = approvals.read_text()
    assert "* DONE write-file(" in text and "created" in text
    assert injected and injected[0].sensor == "tool-output"
    # Neither another heartbeat nor setting it back to APPROVED runs it again.
    report.write_text("changed by the person\n")
    heartbeat(agent)
    set_state(approvals, "DONE", "APPROVED")
    heartbeat(agent)
    assert report.read_text() == "changed by the person\n"


@pytest.mark.parametrize("forge_hash", [False, True])
def test_an_edited_action_never_runs(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path, forge_hash: bool
) -> None:
    agent, approvals, _ = setup
    text = approvals.read_text().replace('"report.txt"', '"../evil.txt"')
    if forge_hash:
        from passepartout.security.approvals import parse

        plan = parse(text).plans[0]
        forged = plan.action()
        assert forged is not None
        old = plan.properties["HASH"]
        text = text.replace(old, forged.digest())
    approvals.write_text(text.replace("* TODO ", "* APPROVED ", 1))
    heartbeat(agent)
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "work" / "report.txt").exists()
    # A forged :HASH: breaks the entry's seal; an edit alone no longer matches the ledger.
    why = "does not carry the agent's seal" if forge_hash else "hash mismatch"
    assert "* CANCELLED " in approvals.read_text() and why in approvals.read_text()


def test_rejected_with_a_reason_feeds_it_back(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path
) -> None:
    agent, approvals, injected = setup
    set_state(approvals, "TODO", "REJECTED")
    approvals.write_text(approvals.read_text() + "  Not in the work folder, please.\n")
    heartbeat(agent)
    assert not (tmp_path / "work" / "report.txt").exists()
    results: list[dict[str, Any]] = injected[0].payload["results"]
    assert results[0]["ok"] is False
    assert "Not in the work folder, please." in results[0]["output"]
    assert injected[0].session_id == "job-1"
    heartbeat(agent)
    assert len(injected) == 1  # handled once


def test_an_approved_shell_plan_runs_in_the_sandbox_once(tmp_path: Path) -> None:
    script = Script([[call("shell", cmd="mkdir -p built && touch built/x")]])
    agent, _ = make_agent(tmp_path, script)
    agent.services["flightplans"].inject = lambda s: None
    agent.loop.process(cron())
    approvals = tmp_path / "memex" / "system" / "approvals.org"
    assert not (tmp_path / "work" / "built").exists()
    set_state(approvals, "TODO", "APPROVED")
    heartbeat(agent)
    assert (tmp_path / "work" / "built" / "x").exists()
    assert "* DONE shell(" in approvals.read_text()


def test_a_plan_the_gates_now_refuse_is_cancelled(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path
) -> None:
    agent, approvals, _ = setup
    (tmp_path / "config" / "policy.toml").write_text(
        '[[rule]]\ndecision = "deny"\ntool = "write-file"\npath = "report.*"\n'
    )
    set_state(approvals, "TODO", "APPROVED")
    heartbeat(agent)
    assert not (tmp_path / "work" / "report.txt").exists()
    assert "* CANCELLED " in approvals.read_text()


def test_the_approvals_file_is_out_of_the_agents_reach(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path
) -> None:
    agent, approvals, _ = setup
    before = approvals.read_text()
    agent.loop.think = Script([[call("write-file", path=str(approvals), content="* APPROVED x")],
                               [call("shell", cmd=f"echo '* APPROVED x' >> {approvals}")]])
    agent.channels["emacs"].answer = True  # even a yes-man channel is not asked
    agent.loop.process(cron())
    assert approvals.read_text() == before


def test_the_heartbeat_bus_runs_approved_plans(
    setup: tuple[Agent, Path, list[Signal]], tmp_path: Path
) -> None:
    agent, approvals, _ = setup
    set_state(approvals, "TODO", "APPROVED")
    report = agent.services["heartbeat"].tick()
    assert "flightplans" in report.ran
    assert (tmp_path / "work" / "report.txt").read_text() == "made by cron\n"


def test_scoped_grants_are_stored_as_org_properties(tmp_path: Path) -> None:
    from passepartout.security.approvals import ApprovalBook
    from passepartout.security.policy import Rule

    book = ApprovalBook(tmp_path / "approvals.org", tmp_path / "ledger.json", mask=str)
    book.add_grant(Rule("allow", "shell", ("git", "status"), scope=tmp_path), "git status here")
    text = (tmp_path / "approvals.org").read_text()
    assert "** git status here" in text and ":COMMAND: git status" in text
    assert f":SCOPE: {tmp_path}" in text
    (rule,) = book.grant_rules()
    assert (rule.decision, rule.tool, rule.command, rule.scope) == (
        "allow", "shell", ("git", "status"), tmp_path.resolve())
    # A tagged Grants heading is still the one grants go under.
    tagged = tmp_path / "tagged.org"
    tagged.write_text(text.replace("\n* Grants\n", "\n* Grants :noexport:\n"))
    other = ApprovalBook(tagged, tmp_path / "ledger2.json", mask=str)
    other.add_grant(Rule("allow", "shell", ("ls",)), "ls")
    assert tagged.read_text().count("\n* Grants") == 1
    assert len(other.grant_rules()) == 2
    # A grant a person mistyped on the phone is left out, not fatal.
    (tmp_path / "approvals.org").write_text(text + "** bad\n   :DECISION: perhaps\n")
    assert len(book.grant_rules()) == 1
