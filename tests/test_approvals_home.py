"""The person's approvals have one home from the first start on, and nothing given in
an earlier version's file is lost."""

from __future__ import annotations

from pathlib import Path

from passepartout.security.trust.cli import book
from security_agent import Script, make_agent

from passepartout.config import Config
from passepartout.security.approvals import ApprovalBook
from passepartout.security.policy import Rule


def _config(tmp_path: Path) -> Config:
    for name in ("state", "config", "memex"):
        (tmp_path / name).mkdir(exist_ok=True)
    env = {
        "PASSEPARTOUT_HOME": str(tmp_path / "state"),
        "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
        "MEMEX_DIR": str(tmp_path / "memex"),
    }
    return Config.from_mapping(env, config_dir=tmp_path / "config")


def test_a_grant_given_on_a_fresh_install_survives_the_memex_growing(tmp_path: Path) -> None:
    config = _config(tmp_path)  # a fresh memex: no system/ directory yet
    first = book(config)
    first.add_grant(Rule("allow", "shell", ("git", "status")), "git status")
    (tmp_path / "memex" / "system").mkdir(exist_ok=True)  # made by a later start
    (tmp_path / "memex" / "system" / "notes.org").write_text("* notes\n")
    again = book(config)
    assert again.path == first.path == tmp_path / "memex" / "system" / "approvals.org"
    assert [r.command for r in again.grant_rules()] == [("git", "status")]


def test_an_earlier_versions_file_is_merged_and_kept(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    stray = ApprovalBook(state / "approvals.org", state / "flightplans.json", mask=str)
    stray.add_grant(Rule("allow", "shell", ("make", "test")), "make test")
    stray.add_grant(Rule("allow", "shell", ("ls",)), "ls")
    home = tmp_path / "memex" / "system" / "approvals.org"
    home.parent.mkdir(parents=True)
    ApprovalBook(home, state / "flightplans.json", mask=str).add_grant(
        Rule("allow", "shell", ("ls",)), "ls")
    (tmp_path / "config").mkdir()
    agent, _ = make_agent(tmp_path, Script())  # the same state: the same seal
    try:
        rules = agent.services.security.book.grant_rules()
    finally:
        agent.shutdown()
    assert sorted(r.command for r in rules) == [("ls",), ("make", "test")]
    assert not (state / "approvals.org").exists()
    (kept,) = state.glob("approvals.org.merged-*")
    assert "make test" in kept.read_text()
    assert home.read_text().count("** ls") == 1
    assert "merged into" in (state / "events.org").read_text()
