"""An "always" answer becomes a sealed standing grant scoped to the action asked about,
and nothing broader: code to evaluate, a compound shell line, globbing words, several
files or a secret get no grant at all (the answer then counts once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_agent import make_agent, make_config

from passepartout.agent import Agent
from passepartout.loop.actions import Action
from passepartout.security.approvals import grants as grant_file
from passepartout.security.approvals.standing import remember, scoped_entry


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("standing")


@pytest.fixture(scope="module")
def agent(home: Path) -> Iterator[Agent]:
    """One agent for the module (the grants each test writes are told apart by scope)."""
    agent, _ = make_agent(make_config(home))
    try:
        yield agent
    finally:
        agent.shutdown()


def tool(name: str, **args: str) -> Action:
    return Action("tool", name=name, args=args)


def test_a_plain_command_is_granted_as_written_in_the_workspace(agent: Agent,
                                                                home: Path) -> None:
    security = agent.services["security"]
    entry = scoped_entry(tool("shell", cmd="git status --short"), security, "allow")
    assert entry == {"decision": "allow", "tool": "shell", "command": "git status --short",
                     "exact": "true", "scope": str((home / "memex").resolve())}


@pytest.mark.attack
def test_yes_always_to_a_command_is_not_yes_to_more_words(agent: Agent) -> None:
    """A grant that a prefix matched would widen the answer: yes always to ``git push``
    became yes to ``git push --force origin main``."""
    security = agent.services["security"]
    standing = remember(security, tool("shell", cmd="git push origin wip"), True)
    assert standing.rule is not None and standing.rule.exact
    assert "exactly" in standing.note

    def decided(cmd: str) -> str | None:
        match = security.policy().decide(security.examine(tool("shell", cmd=cmd))[0])
        return None if match is None else match.decision
    assert decided("git push origin wip") == "allow"
    for wider in ("git push origin wip --force", "git push origin wip main",
                  "git push origin wip; git push origin wip --force"):
        assert decided(wider) is None, wider


@pytest.mark.attack
def test_a_grant_stripped_of_exact_loses_its_seal(agent: Agent) -> None:
    """Deleting ``:EXACT:`` from the approvals file (anything but the person can write
    there) would widen the grant; the seal covers it, so the grant stops counting."""
    security = agent.services["security"]
    remember(security, tool("shell", cmd="make release"), True)
    path = security.book.path
    text = path.read_text(encoding="utf-8")
    at = text.index("make release")
    head, tail = text[:at], text[at:]
    path.write_text(head + tail.replace(":EXACT: true\n", "", 1), encoding="utf-8")
    (grant,) = [g for g in security.book.grants() if "make release" in g.title]
    assert "EXACT" not in grant.properties
    assert not grant_file.sealed(grant, security.book.trust.seal)
    subject = security.examine(tool("shell", cmd="make release --all"))[0]
    assert security.policy().decide(subject) is None


def test_refuse_always_covers_the_command_with_more_words(agent: Agent) -> None:
    security = agent.services["security"]
    standing = remember(security, tool("shell", cmd="make wipe"), False)
    assert standing.rule is not None and not standing.rule.exact
    subject = security.examine(tool("shell", cmd="make wipe --yes"))[0]
    assert security.policy().decide(subject).decision == "deny"


def test_a_file_tool_is_granted_for_that_one_file(agent: Agent, home: Path) -> None:
    security = agent.services["security"]
    path = home / "memex" / "notes.txt"
    standing = remember(security, tool("write-file", path=str(path), content="x"), True)
    assert standing.rule is not None and standing.rule.path == str(path.resolve())
    # Found by its rule: its title is cut at 100 characters, a long path's end with it.
    (grant,) = [g for g in security.book.grants()
                if g.properties.get("PATH") == str(path.resolve())]
    assert grant_file.sealed(grant, security.book.trust.seal)
    assert grant.decision() == "allow" and grant.properties["TOOL"] == "write-file"
    # the policy now allows that file with that text, and nothing else
    same = security.examine(tool("write-file", path=str(path), content="x"))[0]
    other = security.examine(tool("write-file", path=str(path) + ".bak", content="x"))[0]
    assert security.policy().decide(same).decision == "allow"
    assert security.policy().decide(other) is None


def test_reject_always_is_a_deny_grant(agent: Agent) -> None:
    security = agent.services["security"]
    standing = remember(security, tool("shell", cmd="make deploy"), False)
    assert standing.rule is not None and standing.rule.decision == "deny"
    subject = security.examine(tool("shell", cmd="make deploy"))[0]
    assert security.policy().decide(subject).decision == "deny"


@pytest.mark.attack
@pytest.mark.parametrize("action, why", [
    (tool("eval", code="1+1"), "runs code"),
    (tool("emacs-eval", code="(delete-file \"x\")"), "runs code"),
    (tool("shell", cmd="ls && rm -rf build"), "single plain command"),
    (tool("shell", cmd="rm *.org"), "single plain command"),
    (tool("shell", cmd="curl -H 'X: {{secret:TOKEN}}' https://example.org"), "secret"),
    (tool("web-fetch", url="https://example.org/?k={{secret:TOKEN}}"), "secret"),
    (tool("read-file", path="/etc/shadow"), "refuse"),
    (Action("chat", text="hello"), "only a tool call"),
])
def test_an_action_no_grant_can_pin_gets_none(agent: Agent, action: Action, why: str) -> None:
    security = agent.services["security"]
    before = security.book.grants()
    standing = remember(security, action, True)
    assert standing.rule is None and why in standing.note and "answered once" in standing.note
    assert security.book.grants() == before


@pytest.mark.attack
def test_a_file_named_like_a_glob_gets_no_grant(agent: Agent, home: Path) -> None:
    security = agent.services["security"]
    before = security.book.grants()
    action = tool("write-file", path=str(home / "memex" / "[a-z]*"), content="x")
    assert remember(security, action, True).rule is None
    assert security.book.grants() == before
