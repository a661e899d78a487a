"""An "always" answer is bound to exactly what the person was shown.

A yes always to a write covers that file with that text (other text is asked again); to
a property, that heading and property; a capture, a note or a new heading gets no grant
at all.  A write that runs later (a place like ``.envrc``, ``.dir-locals.el`` or a
``.pth``; text like a ``:CRON:`` drawer, a src block, an agenda sexp or a shebang) is
asked as code every time, saying so, whatever a grant allows, and an "always" to it is
answered once.  Grants an earlier "always" wrote without these bounds stop counting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_agent import make_agent, make_config, user_signal
from passepartout.security.approvals.standing import remember

from passepartout.agent import Agent
from passepartout.loop.actions import Action
from passepartout.security.approvals import grants as grant_file
from passepartout.security.guard import Security
from passepartout.security.policy import Rule

SIGNAL = user_signal("go")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("exact")


@pytest.fixture(scope="module")
def agent(home: Path) -> Iterator[Agent]:
    agent, _ = make_agent(make_config(home))
    try:
        yield agent
    finally:
        agent.shutdown()


@pytest.fixture
def security(agent: Agent) -> Security:
    sec: Security = agent.services["security"]
    return sec


def tool(name: str, **args: str) -> Action:
    return Action("tool", name=name, args=args)


def decision(security: Security, action: Action) -> str:
    """What the two mandatory gates decide together (the strongest of the two)."""
    verdicts = [security.policy_verdict(action, SIGNAL),
                security.dispatcher_verdict(action, SIGNAL)]
    order = ("allow", "ask", "deny")
    return max((v.decision for v in verdicts), key=order.index)


def reasons(security: Security, action: Action) -> str:
    return security.policy_verdict(action, SIGNAL).reason


@pytest.mark.attack
def test_always_to_a_write_is_not_always_to_other_text(security: Security,
                                                       home: Path) -> None:
    path = str(home / "memex" / "plan.txt")
    shown = tool("write-file", path=path, content="buy milk\n")
    assert decision(security, shown) == "ask"
    standing = remember(security, shown, True)
    assert standing.rule is not None and standing.rule.content is not None
    (grant,) = [g for g in security.book.grants()
                if g.properties.get("PATH", "").endswith("plan.txt")]
    assert grant.properties["CONTENT"].startswith("sha256:")
    assert grant_file.sealed(grant, security.book.trust.seal)
    assert decision(security, shown) == "allow"
    for other in ("buy milk\nand rm -rf ~\n", "", "buy milk"):
        assert decision(security, tool("write-file", path=path, content=other)) == "ask"


@pytest.mark.attack
def test_a_content_bound_grant_edited_to_other_content_loses_its_seal(
        security: Security, home: Path) -> None:
    path = str(home / "memex" / "sealed.txt")
    remember(security, tool("write-file", path=path, content="a"), True)
    text = security.book.path.read_text(encoding="utf-8")
    (grant,) = [g for g in security.book.grants()
                if g.properties.get("PATH", "").endswith("sealed.txt")]
    forged = text.replace(grant.properties["CONTENT"], "sha256:" + "0" * 64)
    security.book.path.write_text(forged, encoding="utf-8")
    (grant,) = [g for g in security.book.grants()
                if g.properties.get("PATH", "").endswith("sealed.txt")]
    assert not grant_file.sealed(grant, security.book.trust.seal)
    assert decision(security, tool("write-file", path=path, content="a")) == "ask"


@pytest.mark.attack
def test_always_to_one_property_is_not_another_property_or_heading(
        security: Security, home: Path) -> None:
    org = home / "memex" / "projects.org"
    org.write_text("* Alpha\n* Beta\n", encoding="utf-8")
    shown = tool("org-set-property", file=str(org), heading="Alpha", key="STATUS",
                 value="active")
    assert decision(security, shown) == "ask"
    standing = remember(security, shown, True)
    assert standing.rule is not None, standing.note
    assert (standing.rule.heading, standing.rule.prop) == ("Alpha", "STATUS")
    assert decision(security, shown) == "allow"
    # another value of the same property on the same heading: what was granted
    same = tool("org-set-property", file=str(org), heading="Alpha", key="status",
                value="done")
    assert decision(security, same) == "allow"
    for other in (
        tool("org-set-property", file=str(org), heading="Alpha", key="OWNER", value="x"),
        tool("org-set-property", file=str(org), heading="Beta", key="STATUS", value="x"),
        tool("org-set-todo", file=str(org), heading="Alpha", state="DONE"),
    ):
        assert decision(security, other) == "ask", other


@pytest.mark.attack
@pytest.mark.parametrize("action, what", [
    (tool("org-capture", title="call Bob", body="soon"), "a capture"),
    (tool("org-add-note", file="inbox.org", heading="Alpha", note="seen"), "a note"),
    (tool("org-add-heading", file="inbox.org", title="New"), "a new heading"),
    (tool("remember", text="I like tea"), "a memory"),
])
def test_a_capture_or_a_note_gets_no_standing_grant(security: Security, action: Action,
                                                    what: str) -> None:
    before = security.book.grants()
    standing = remember(security, action, True)
    assert standing.rule is None
    assert what in standing.note and "answered once" in standing.note
    assert security.book.grants() == before


@pytest.mark.attack
@pytest.mark.parametrize("name, content, says", [
    (".envrc", "export PATH=$PWD/bin:$PATH\n", "direnv"),
    (".dir-locals.el", "((nil . ((eval . (message \"hi\")))))\n", "Emacs"),
    ("venv/lib/python3.11/site-packages/zz.pth", "import os\n", "Python"),
    ("jobs.org", "* Daily\n:PROPERTIES:\n:CRON: 0 9 * * *\n:END:\n", ":CRON: drawer"),
    ("agenda.org", "* Meeting <%%(progn (shell-command \"id\") t)>\n", "agenda sexp"),
    ("notes.org", "#+begin_src sh\nid\n#+end_src\n", "src block"),
    ("run.sh", "#!/bin/sh\nid\n", "#!"),
])
def test_a_write_that_runs_later_is_asked_as_code_and_never_always(
        security: Security, home: Path, name: str, content: str, says: str) -> None:
    path = home / "memex" / name
    action = tool("write-file", path=str(path), content=content)
    assert decision(security, action) == "ask"
    why = reasons(security, action)
    assert why.startswith("asked as code: this ") and "runs later" in why and says in why
    before = security.book.grants()
    standing = remember(security, action, True)
    assert standing.rule is None and "never allowed always" in standing.note
    assert "answered once" in standing.note
    assert security.book.grants() == before
    # a refusal is kept: it only narrows
    assert remember(security, tool("write-file", path=str(path), content="x"), False).rule


@pytest.mark.attack
def test_a_symlink_named_like_a_plain_file_or_like_envrc_is_judged_both_ways(
        security: Security, home: Path) -> None:
    """Writing ``.envrc`` that links to a plain file replaces the link with an
    ``.envrc``; writing a plain name that links to ``.envrc`` writes the ``.envrc``."""
    memex = home / "memex" / "sym"
    memex.mkdir()
    (memex / "plain.txt").write_text("x")
    (memex / "linked").mkdir()
    (memex / "linked" / ".envrc").symlink_to(memex / "plain.txt")
    (memex / ".envrc").write_text("")
    (memex / "innocent.txt").symlink_to(memex / ".envrc")
    for path in (memex / "linked" / ".envrc", memex / "innocent.txt"):
        action = tool("write-file", path=str(path), content="echo hi")
        assert decision(security, action) == "ask"
        assert "this file runs later: .envrc" in reasons(security, action)


@pytest.mark.attack
def test_a_grant_does_not_lift_the_question_about_code(security: Security,
                                                       home: Path) -> None:
    """A broad grant the person gave for a folder still asks for a write that runs
    later there: it is asked as code, every time."""
    folder = home / "memex" / "granted"
    security.book.add_grant(Rule("allow", tool="write-file", path=f"{folder}/*"),
                            "the granted folder")
    plain = tool("write-file", path=str(folder / "a.txt"), content="hello")
    assert decision(security, plain) == "allow"
    job = tool("write-file", path=str(folder / "b.org"),
               content="* x\n  :PROPERTIES:\n  :HOOK: after-save\n  :END:\n")
    assert decision(security, job) == "ask"
    assert ":HOOK: drawer becomes a job" in reasons(security, job)
    assert decision(security, tool("write-file", path=str(folder / ".envrc"),
                                   content="echo")) == "ask"


@pytest.mark.attack
def test_a_shell_command_writing_what_runs_later_is_asked_as_code(security: Security,
                                                                  home: Path) -> None:
    """Through the shell too: a command that may write an .envrc, a .pth or a job
    drawer is asked as code, even where a grant allows the command; one the analysis
    proved harmless (a read) is not."""
    envrc = tool("shell", cmd="echo 'export PATH=/tmp/x' > .envrc")
    assert decision(security, envrc) == "ask"
    assert ".envrc: direnv runs it" in reasons(security, envrc)
    security.book.add_grant(Rule("allow", tool="shell", command=("printf",)), "printf")
    job = tool("shell", cmd="printf '* x\n:PROPERTIES:\n:CRON: <2026-01-01 +1d>\n' >> n.org")
    assert decision(security, job) == "ask"
    assert "asked as code" in reasons(security, job)
    assert decision(security, tool("shell", cmd="printf hello")) == "allow"  # the grant
    pth = tool("shell", cmd="cp x.txt venv/lib/python3.11/site-packages/evil.pth")
    assert "evil.pth: Python runs its import lines" in reasons(security, pth)
    assert decision(security, tool("shell", cmd="cat .envrc")) == "allow"


@pytest.mark.attack
def test_a_cron_property_is_asked_as_code_and_never_always(security: Security,
                                                          home: Path) -> None:
    org = home / "memex" / "cron.org"
    org.write_text("* Alpha\n", encoding="utf-8")
    action = tool("org-set-property", file=str(org), heading="Alpha", key="cron",
                  value="0 9 * * *")
    assert decision(security, action) == "ask"
    assert "this creates automation: :CRON: becomes a job" in reasons(security, action)
    standing = remember(security, action, True)
    assert standing.rule is None and "never allowed always" in standing.note


@pytest.mark.attack
def test_an_always_grant_from_before_the_bounds_stops_counting(security: Security,
                                                               home: Path) -> None:
    """A sealed grant an earlier "always" wrote for a file (any content) no longer
    counts: the person is told, and the next question can be answered again."""
    path = str((home / "memex" / "old.txt").resolve())
    security.book.add_grant(Rule("allow", tool="write-file", path=path),
                            f"Allowed always: allow write-file path {path}")
    action = tool("write-file", path=path, content="anything")
    assert decision(security, action) == "ask"
    events = security.book.trust.alarms.events.path
    assert "before such answers were bound" in events.read_text(encoding="utf-8")
    # one the person gave for the same file with `passepartout grant add` still counts
    security.book.add_grant(Rule("allow", tool="write-file", path=path), "my old file")
    assert decision(security, action) == "allow"


@pytest.mark.attack
def test_the_question_says_before_the_answer_that_it_counts_once(home: Path) -> None:
    """Emacs is told (``:once`` in the question's info) and then offers no "always"."""
    from passepartout.loop.actions import ApprovalRequest
    from passepartout.server.peer import _approval_info

    def info(action: Action) -> object:
        return _approval_info(ApprovalRequest(action, ("asked",), SIGNAL)).get("once")

    envrc = tool("write-file", path=str(home / "memex" / ".envrc"), content="echo")
    assert "this file runs later: .envrc" in str(info(envrc))
    cron = tool("org-set-property", file="x.org", heading="A", key="CRON", value="0 9 * * *")
    assert ":CRON:" in str(info(cron))
    assert "a capture" in str(info(tool("org-capture", title="x")))
    assert info(tool("write-file", path=str(home / "memex" / "a.txt"), content="x")) is None
