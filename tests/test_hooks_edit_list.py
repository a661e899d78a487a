"""The edits the shipped hooks make in a heading (org escaping included), and
``passepartout hooks list`` read from the skills' sources, without an agent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from passepartout.events.headingedit import (
    HeadingNotFound,
    add_note,
    locate,
    set_child,
    set_property,
    subtree,
    without_replies,
)
from passepartout.events.hooks_cli import registered_names
from passepartout.events.scan import scan_text
from passepartout.testing.skilltrust import trust_skills

FILE = "/memex/p.org"
TEXT = ("* Top\n** Plan\n:PROPERTIES:\n:ID: p-1\n:HOOK: summarize\n:END:\nBody line.\n"
        "*** Child\nchild text\n** Next\n:PROPERTIES:\n:HOOK: notify\n:END:\n")


def test_locate_finds_the_heading_its_body_and_its_subtree() -> None:
    place = locate(TEXT, FILE, "p-1")
    assert TEXT[place.start:].startswith("** Plan\n")
    assert TEXT[place.body_end:].startswith("*** Child\n")
    assert subtree(TEXT, place).endswith("child text\n")
    with pytest.raises(HeadingNotFound):
        locate(TEXT, FILE, "nope")


def test_a_note_goes_after_the_body_and_its_text_is_never_structure() -> None:
    after = add_note(TEXT, locate(TEXT, FILE, "p-1"), "Yes.\n* Planted\n:ID: x\n#+TITLE: y",
                     "[2030-01-01 Tue 10:00:00]")
    assert ("Body line.\n- Reply of the agent [2030-01-01 Tue 10:00:00] \\\\\n  Yes.\n"
            "  ,* Planted\n  ,:ID: x\n  ,#+TITLE: y\n*** Child\n") in after
    nodes = {n.id: n for n in scan_text(after, FILE).nodes}
    assert nodes["p-1"].properties["ID"] == "p-1" and "x" not in nodes
    assert without_replies(nodes["p-1"].body) == "Body line."


def test_a_property_is_set_or_replaced_in_the_drawer_on_one_line() -> None:
    once = set_property(TEXT, locate(TEXT, FILE, "p-1"), "SUMMARY", "First.\n:END:\n* x")
    assert ":HOOK: summarize\n:SUMMARY: First. : END: * x\n:END:\nBody line." in once
    twice = set_property(once, locate(once, FILE, "p-1"), "SUMMARY", "Second.")
    assert twice.count(":SUMMARY:") == 1 and ":SUMMARY: Second.\n:END:" in twice
    assert scan_text(twice, FILE).nodes[0].properties["SUMMARY"] == "Second."


def test_a_child_heading_is_added_first_and_replaced_next_time() -> None:
    once = set_child(TEXT, locate(TEXT, FILE, "p-1"), "Summary", "One.\n** Not a heading")
    assert "Body line.\n*** Summary\nOne.\n,** Not a heading\n*** Child\n" in once
    twice = set_child(once, locate(once, FILE, "p-1"), "Summary", "Two.")
    assert twice.count("*** Summary") == 1
    assert "Body line.\n*** Summary\nTwo.\n*** Child\nchild text\n** Next" in twice


def test_registered_names_are_read_from_literal_calls_only() -> None:
    source = ('AGENT.register_hook("Mine", f)\nevents_register_hook("two", g, kind="gate")\n'
              'register_hook(name_from_somewhere, h)\nAGENT.register_hook("has space", f)\n')
    assert registered_names(source) == ["mine", "two"]
    assert registered_names("def broken(:\n") == []


SKILL = '''"""A person's skill with a hook handler."""
from passepartout.api import defskill, host

AGENT = host()


def {name}_reflex(signal):
    return None


if AGENT is not None:
    AGENT.register_hook("{hook}", lambda event: "seen")
defskill("{name}", trigger=lambda s: False, reflex={name}_reflex)
'''


def test_hooks_list_shows_shipped_trusted_waiting_and_unanswered_names(
    tmp_path: Path, env: dict[str, str]
) -> None:
    skills = tmp_path / "myskills"
    skills.mkdir()
    (skills / "mine.py").write_text(SKILL.format(name="mine", hook="deploy-check"))
    trust_skills(env["PASSEPARTOUT_HOME"], skills)
    (skills / "later.py").write_text(SKILL.format(name="later", hook="later-hook"))
    memex = Path(env["MEMEX_DIR"])
    (memex / "projects" / "x.org").write_text(
        "* A\n:PROPERTIES:\n:HOOK: notify typo-hook\n:END:\n"
        "* B\n:PROPERTIES:\n:HOOK: notify\n:END:\n", encoding="utf-8")
    run_env = {**os.environ, **env, "SKILLS_DIR": str(skills)}
    out = subprocess.run([sys.executable, "-m", "passepartout", "hooks", "list"],
                         env=run_env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    by_name = {line.split()[0]: line for line in lines if line and not line.startswith(" ")}
    for shipped in ("verify-integrity", "prompt", "notify", "snapshot", "summarize"):
        assert "shipped:" in by_name[shipped], out.stdout
    assert by_name["notify"].endswith("[2 heading(s)]")
    assert by_name["deploy-check"].split(None, 1)[1] == "skill mine"
    assert "skill later (not loaded: waiting for your approval" in by_name["later-hook"]
    assert "named in the memex, with no handler" in out.stdout
    assert "  typo-hook  [1 heading(s)]" in lines


def test_a_hook_ticket_runs_once_and_only_the_call_proposed() -> None:
    from passepartout.events.hookact import HookActions

    queued: list[object] = []
    actions = HookActions(lambda signal: queued.append(signal) or True)
    node = scan_text(TEXT, FILE).nodes[0]
    args = {"file": FILE, "node": "p-1", "mode": "note", "text": "hi", "key": ""}
    assert actions.propose("prompt", node, "hook-write", args)
    ticket = queued[0].payload["ticket"]  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no such hook ticket"):
        actions.redeem(ticket, "hook-write", args)  # the loop has not cleared it yet
    assert actions.take(ticket) is not None and actions.take(ticket) is None
    with pytest.raises(ValueError, match="other arguments"):
        actions.redeem(ticket, "hook-write", {**args, "file": "/etc/passwd"})
    with pytest.raises(ValueError, match="no such hook ticket"):
        actions.redeem(ticket, "hook-notify", args)
    assert actions.redeem(ticket, "hook-write", args).node_id == "p-1"
    with pytest.raises(ValueError, match="no such hook ticket"):
        actions.redeem(ticket, "hook-write", args)  # once
