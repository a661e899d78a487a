"""Each shipped hook handler end to end: an org file edited on disk under the memex, the
watcher fires the heading's hook, the handler's action passes the gates and its result
is visible (a line in events.org, a note or property in the heading, a memory
snapshot, a notification in every attached client); the model is the fake server."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from agents import wait_for
from fakellm import FakeLLM
from hooks_agent import Client, audit_text, edit, events_text, make_agent

from passepartout.agent import Agent


@pytest.fixture
def model(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    return fake_llm


def heading(hooks: str, body: str, *, props: str = "", node_id: str = "n-1",
            title: str = "Watched") -> str:
    extra = "".join(f":{line}\n" for line in props.split(";") if line)
    return (f"* Project\n** {title}\n:PROPERTIES:\n:ID: {node_id}\n:HOOK: {hooks}\n"
            f"{extra}:END:\n{body}\n")


def settle(agent: Agent, seconds: float = 0.4) -> None:
    """Let the watcher see any write the agent made, and the loop finish with it."""
    time.sleep(seconds)
    assert agent.stimuli.wait_idle(30)


def test_notify_reaches_every_client_and_events_through_the_gates(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env, {"projects/p.org": heading("notify", "Draft.")})
    emacs, phone = Client(), Client()
    agent.attach_faces(emacs)
    agent.register_channel("telegram", phone)
    try:
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "Draft.", "Final.", env=env)
        told = ("info", "hook: notify: 'Watched' changed (disk)")
        wait_for(lambda: told in emacs.notes and phone.notes, what="the notifications")
        assert phone.notes == [told]
        log = events_text(env)
        assert "hook: notify: 'Watched' changed (disk)" in log
        assert "hook-notify" in audit_text(env)  # the gates judged it
        settle(agent)
        assert model.request_count == 0  # a reflex: no model
        assert emacs.notes.count(told) == 1
    finally:
        agent.shutdown()


def test_snapshot_takes_a_memory_snapshot_named_after_the_heading(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env, {"projects/p.org": heading("snapshot", "v1")})
    store = agent.services["memory"]
    try:
        before = len(store.snapshots())
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "v1", "v2", env=env)
        newest = wait_for(lambda: [s for s in store.snapshots()
                                     if s.label == "hook: Watched changed"],
                            what="the snapshot")
        assert len(store.snapshots()) == before + 1
        wait_for(lambda: f"memory snapshot #{newest[0].seq}" in events_text(env),
                   what="the snapshot's line in events.org")
        assert model.request_count == 0
    finally:
        agent.shutdown()


def test_verify_integrity_warns_of_an_edit_outside_the_agent(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env,
                       {"projects/p.org": heading("verify-integrity", "Amount: 100")})
    emacs = Client()
    agent.attach_faces(emacs)
    try:
        assert agent.services["memory"].snapshots()[0].label == "memex import"
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "Amount: 100", "Amount: 900", env=env)
        warned = wait_for(lambda: [n for n in emacs.notes if n[0] == "warning"],
                            what="the warning")
        assert len(warned) == 1
        text = warned[0][1]
        assert "'Watched' in projects/p.org changed outside the agent" in text
        assert "memory snapshot #1 has sha256" in text
        assert "changed outside the agent" in events_text(env)
    finally:
        agent.shutdown()


def test_verify_integrity_is_not_fooled_by_a_snapshot_taken_after_the_change(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    """With snapshot and verify-integrity on one heading, the snapshot hook's new
    snapshot of the changed heading, taken first, made the check read 'intact'."""
    import time

    from passepartout.events.hooks import HookEvent
    from passepartout.events.scan import scan_file

    agent = make_agent(tmp_path, env,
                       {"projects/p.org": heading("verify-integrity", "Amount: 100")})
    store = agent.services["memory"]
    try:
        path = Path(env["MEMEX_DIR"]) / "projects/p.org"
        edit(path, "Amount: 100", "Amount: 900")  # not approved: no hook fires by itself
        (node,) = scan_file(path).nodes
        changed_at = time.time()
        wait_for(lambda: "Amount: 900" in str(store.search("Amount 900")),
                   what="memory's import of the edit")
        store.snapshot("hook: Watched changed")  # as the snapshot hook would take it
        (handler,) = agent.services["orchestrator"].hooks._handlers["verify-integrity"]
        said = handler.fn(HookEvent("verify-integrity", "changed", node.id, node.heading,
                                    str(path), None, node.body, "emacs", None, node,
                                    at=changed_at))
        assert "changed outside the agent" in said and "snapshot #1" in said, said
    finally:
        agent.shutdown()


def test_verify_integrity_sees_an_edit_made_while_the_agent_was_down(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    """At start the memex import takes the new text into memory (and memory opens in
    the background): the check waits for memory and compares with the snapshot from
    before this start, so the edit is seen rather than "intact" or "not open"."""
    make_agent(tmp_path, env,
               {"projects/p.org": heading("verify-integrity", "Amount: 100")}).shutdown()
    edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "Amount: 100", "Amount: 900", env=env)
    agent = make_agent(tmp_path, env, {})
    try:
        text = wait_for(lambda: "changed outside the agent" in events_text(env)
                          and events_text(env), what="the warning")
        assert "'Watched' in projects/p.org changed outside the agent: memory snapshot #1" \
            in text
        assert "not open" not in text and "intact" not in text
        labels = [s.label for s in agent.services["memory"].snapshots()]
        assert labels[:2] == ["memex import", "memex import"]  # this start's, and #1
    finally:
        agent.shutdown()


def test_verify_integrity_finds_an_unchanged_node_intact(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env,
                       {"projects/p.org": heading("verify-integrity", "Amount: 100")})
    emacs = Client()
    agent.attach_faces(emacs)
    orchestrator = agent.services["orchestrator"]
    try:
        # Only the title of a sibling outside the node changes: the node is not.
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "* Project", "* Projects", env=env)
        wait_for(lambda: "verify_integrity ok" in events_text(env), what="the check")
        assert "intact (sha256" in events_text(env)
        settle(agent)
        assert [n for n in emacs.notes if n[0] == "warning"] == []
        assert orchestrator.registry.node("n-1") is not None
    finally:
        agent.shutdown()


def test_prompt_replies_into_events_at_the_headings_tier(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    agent = make_agent(tmp_path, env, {"projects/p.org": heading(
        "prompt", "What is 2+2?", props="TIER: cognition")})
    model.for_model("gpt-4o-mini").reply("It is 4.")
    try:
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "2+2", "two plus two", env=env)
        wait_for(lambda: "It is 4." in events_text(env), what="the reply")
        settle(agent)
        assert model.request_count == 1  # once: the orchestrator does not run it too
        assert model.last_request.model == "gpt-4o-mini"
        assert "What is two plus two?" in str(model.last_request.messages)
        text = (Path(env["MEMEX_DIR"]) / "projects/p.org").read_text()
        assert "Reply of the agent" not in text
    finally:
        agent.shutdown()


def test_prompt_reply_as_a_note_under_the_heading_fires_nothing_again(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    path = Path(env["MEMEX_DIR"]) / "projects/p.org"
    agent = make_agent(tmp_path, env, {"projects/p.org": heading(
        "prompt", "Name a colour.", props="HOOK_OUTPUT: note") + "*** Child\nkept\n"})
    model.for_model("gpt-4o-mini").reply("Blue.\n* not a heading")
    try:
        edit(path, "a colour", "one colour", env=env)
        wait_for(lambda: "Reply of the agent" in path.read_text(), what="the note")
        # The note changes the heading: the hook fires on it and sees it as ours.
        wait_for(lambda: "the agent's own edit" in events_text(env), what="the echo")
        assert agent.stimuli.wait_idle(30)
        text = path.read_text()
        assert model.request_count == 1  # the note is the agent's own edit: no new run
        note = text.split("Name one colour.\n", 1)[1]
        assert note.startswith("- Reply of the agent [")
        assert "\\\\\n  Blue.\n  ,* not a heading\n*** Child\nkept\n" in note
        assert "hook-write" in audit_text(env)
        wait_for(lambda: "prompt: wrote a note under 'Watched'" in events_text(env),
                   what="the note's line in events.org")
    finally:
        agent.shutdown()


@pytest.mark.attack
def test_a_person_s_deny_rule_stops_the_note_and_events_says_so(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    (Path(env["PASSEPARTOUT_CONFIG_DIR"]) / "policy.toml").write_text(
        '[[rule]]\ndecision = "deny"\ntool = "hook-write"\n', encoding="utf-8")
    path = Path(env["MEMEX_DIR"]) / "projects/p.org"
    agent = make_agent(tmp_path, env, {"projects/p.org": heading(
        "prompt", "Name a colour.", props="HOOK_OUTPUT: note")})
    model.for_model("gpt-4o-mini").reply("Blue.")
    try:
        edit(path, "a colour", "one colour", env=env)
        wait_for(lambda: "refused" in events_text(env), what="the refusal")
        assert "Reply of the agent" not in path.read_text()
        assert "Blue." in events_text(env)  # the reply itself is still recorded
    finally:
        agent.shutdown()


@pytest.mark.attack
def test_a_prompt_in_a_personal_subtree_never_reaches_the_remote_model(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    text = heading("prompt", "My diary.").replace("* Project", "* Project :@personal:")
    agent = make_agent(tmp_path, env, {"projects/p.org": text})
    model.for_model("gpt-4o-mini").reply("leaked")
    try:
        edit(Path(env["MEMEX_DIR"]) / "projects/p.org", "My diary.", "My secret diary.", env=env)
        wait_for(lambda: "private subtree" in events_text(env), what="the private mark")
        settle(agent)
        assert model.request_count == 0
        assert "leaked" not in events_text(env)
    finally:
        agent.shutdown()


SUBTREE = ("* Project\n** Plan\n:PROPERTIES:\n:ID: n-1\n:HOOK: summarize verify-integrity\n"
           "{props}:END:\nShip the release.\n*** Tests\nWrite them first.\n"
           "*** Me :@personal:\nMy salary is 1234.\n* Other\n")


@pytest.mark.parametrize("where", ["property", "child"])
def test_summarize_writes_the_summary_into_the_heading(
    tmp_path: Path, env: dict[str, str], model: FakeLLM, where: str
) -> None:
    path = Path(env["MEMEX_DIR"]) / "projects/p.org"
    props = "" if where == "property" else ":SUMMARY_OUTPUT: child\n"
    emacs = Client()
    agent = make_agent(tmp_path, env, {"projects/p.org": SUBTREE.format(props=props)})
    agent.attach_faces(emacs)
    model.for_model("gpt-4o-mini").reply("Release after tests.\n:END:")
    try:
        edit(path, "Ship the release.", "Ship the release on Friday.", env=env)
        if where == "property":
            wait_for(lambda: ":SUMMARY:" in path.read_text(), what="the summary")
        else:
            wait_for(lambda: "*** Summary" in path.read_text(), what="the summary")
        if where == "property":  # the summary changes the heading: the echo is seen
            wait_for(lambda: "the agent's own edit" in events_text(env), what="the echo")
            assert agent.stimuli.wait_idle(30)
        else:  # a child heading is not the heading's own text: no event to wait on
            settle(agent, 0.7)
        text = path.read_text()
        asked = str(model.last_request.messages)
        assert "Write them first." in asked and "1234" not in asked  # private withheld
        assert model.request_count == 1  # the summary written fires nothing again
        if where == "property":
            assert ":SUMMARY: Release after tests. : END:\n:END:\nShip the release on" in text
        else:
            assert ("Ship the release on Friday.\n*** Summary\nRelease after tests.\n,:END:\n"
                    "*** Tests\n") in text
        # verify-integrity on the same heading: the person's edit warned, the agent's not.
        warnings = [n for n in emacs.notes if n[0] == "warning"]
        assert len(warnings) == 1 and "outside the agent" in warnings[0][1]
    finally:
        agent.shutdown()


@pytest.mark.attack
def test_the_hook_tools_do_nothing_without_a_handler_s_ticket(
    tmp_path: Path, env: dict[str, str], model: FakeLLM
) -> None:
    path = Path(env["MEMEX_DIR"]) / "projects/p.org"
    agent = make_agent(tmp_path, env, {"projects/p.org": heading("notify", "Draft.")})
    try:
        tool = agent.tool("hook-write")
        assert tool is not None
        with pytest.raises(ValueError, match="no such hook ticket"):
            tool.run({"ticket": "guess", "file": str(path), "node": "n-1", "mode": "note",
                      "text": "planted"})
        assert "planted" not in path.read_text()
    finally:
        agent.shutdown()
