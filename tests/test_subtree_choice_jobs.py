"""The model a subtree chooses holds for the jobs under it, as for a chat turn sent from
there: ``PASSEPARTOUT_MODEL`` and ``PASSEPARTOUT_TIER`` are read with org's inheritance
(the heading's own drawer, its ancestors', the file's ``#+PROPERTY:`` lines), a job's
own ``:TIER:`` still wins, and the choice is part of what the person approved.  A
``PASSEPARTOUT_PRESET`` holds too, from the presets the daemon reads (its presets file,
in the format Emacs reads): the job runs with the preset's model, system addition, tools
and budget; what the preset holds is in the job's hash, so a preset changed later holds
the job, and a preset the daemon does not know (or a malformed one) keeps it from
running."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from daemon_proc import Daemons, wait_for
from fakellm import FakeLLM
from test_daemon_emacs import events

from passepartout.events.approval import describe_job, job_hash
from passepartout.events.dispatch import Dispatcher
from passepartout.events.jobs import OrgNode, Tier
from passepartout.events.scan import scan_text
from passepartout.org.eventlog import EventLog
from passepartout.signals import Signal
from passepartout.testing.jobapproval import approve_text

NOTES = """#+PROPERTY: PASSEPARTOUT_MODEL openai/file-model
* Work
:PROPERTIES:
:PASSEPARTOUT_MODEL: openai/work-model
:PASSEPARTOUT_TIER: reasoning
:END:
** Reports
*** Weekly report
:PROPERTIES:
:CRON: <2026-01-05 Mon 09:00 +1w>
:END:
Write the weekly report.
*** Daily digest
:PROPERTIES:
:CRON: <2026-01-05 Mon 08:00 +1d>
:TIER: cognition
:PASSEPARTOUT_MODEL: openai/own-model
:END:
Digest the news.
* Home
** Plants
:PROPERTIES:
:CRON: <2026-01-05 Mon 07:00 +1d>
:END:
Water the plants.
* Elsewhere
:PROPERTIES:
:PASSEPARTOUT_MODEL: nil
:END:
** Quiet
:PROPERTIES:
:CRON: <2026-01-05 Mon 07:00 +1d>
:END:
Nothing.
"""


def nodes() -> dict[str, OrgNode]:
    return {n.heading: n for n in scan_text(NOTES, "/notes/work.org").nodes}


def test_the_choice_is_inherited_as_org_reads_it() -> None:
    found = nodes()
    weekly, daily, plants, quiet = (found[h] for h in
                                    ("Weekly report", "Daily digest", "Plants", "Quiet"))
    assert weekly.model == "openai/work-model" and weekly.tier_text == "reasoning"
    # Its own drawer wins over the ancestors': the model, and :TIER: over the choice.
    assert daily.model == "openai/own-model" and daily.tier_text == "cognition"
    # No ancestor chose: the file's #+PROPERTY does.
    assert plants.model == "openai/file-model" and plants.tier_text is None
    # "nil" is org's unset: the walk goes on up to the file, as org-entry-get's does.
    assert quiet.model == "openai/file-model"


def test_the_inherited_choice_is_part_of_what_the_person_approves() -> None:
    weekly = nodes()["Weekly report"]
    other = scan_text(NOTES.replace("openai/work-model", "openai/other"),
                      "/notes/work.org").nodes
    moved = next(n for n in other if n.heading == "Weekly report")
    assert job_hash(weekly, None) != job_hash(moved, None)
    said = describe_job(weekly, None)
    assert "reasoning tier" in said and "model openai/work-model" in said
    # A node nobody chose for hashes as before (approvals already given stay valid).
    plain = scan_text("* Job\n:PROPERTIES:\n:CRON: <2026-01-05 Mon 07:00 +1d>\n:END:\nGo.\n",
                      "/notes/a.org").nodes[0]
    assert plain.choice == {}


def test_a_prompt_of_a_heading_carries_its_model(tmp_path: Path) -> None:
    seen: list[Signal] = []
    dispatcher = Dispatcher({}, EventLog(tmp_path / "events.org"), lambda *_: None,
                            inject=lambda s: seen.append(s) or True)
    dispatcher.model_of = {"h1": "openai/work-model"}.get
    assert dispatcher.run_prompt("h1", "Go", Tier.REASONING, "hook")
    assert dispatcher.run_prompt("h2", "Go", Tier.COGNITION, "cron")
    assert seen[0].turn.choice.model == "openai/work-model"
    assert seen[1].turn.choice.model is None


JOB = """* Work
:PROPERTIES:
:PASSEPARTOUT_MODEL: openai/work-model
:END:
** Check the backups
:PROPERTIES:
:ID: backups-2
:CRON: <{now:%Y-%m-%d %a %H:%M}>
:TIER: cognition
:END:
Say whether last night's backups are fresh.
"""


def test_a_cron_job_asks_the_model_its_subtree_chose(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.for_model("work-model").reply("Fresh, all three.")
    fake_llm.for_model("gpt-4o-mini").reply("The tier's model answered.")
    daemons.start()
    daemons.wait_ready()
    path, text = daemons.memex / "projects" / "jobs.org", JOB.format(now=dt.datetime.now())
    approve_text(daemons.home, daemons.memex, path, text)  # the person allowed it
    path.write_text(text, encoding="utf-8")
    wait_for(lambda: "backups-2: done" in events(daemons), 30, "the job's result")
    assert "Fresh, all three." in events(daemons)
    assert [r.model for r in fake_llm.requests] == ["work-model"]


PRESETS = """#+TITLE: Presets
* reader   :work:
:PROPERTIES:
:MODEL: openai/preset-model
:TOOLS: read-file grep-search
:BUDGET: 0.05
:END:
Answer in French.
** A note under it
Not part of the system addition: a heading ends the entry.
* silent
:PROPERTIES:
:TOOLS:
:TIER: cognition
:END:
* broken
:PROPERTIES:
:TIER: enormous
:END:
"""

UNDER_PRESET = """* Reading
:PROPERTIES:
:PASSEPARTOUT_PRESET: reader
:END:
** Summarize the notes
:PROPERTIES:
:ID: summary-1
:CRON: <{now:%Y-%m-%d %a %H:%M}>
:END:
Summarize what changed in my notes today.
"""


def test_the_daemons_presets_are_read_as_emacs_reads_its_file() -> None:
    from passepartout.events.presets import parse_presets

    presets = parse_presets(PRESETS)
    assert sorted(presets) == ["reader", "silent"]  # a malformed one is left out
    reader = presets["reader"].choice
    assert reader.model == "openai/preset-model" and reader.budget == 0.05
    assert reader.tools == frozenset({"read-file", "grep-search"})
    assert reader.system == "Answer in French."  # the entry ends at the next heading
    silent = presets["silent"].choice
    assert silent.tools == frozenset() and silent.tier == "cognition"  # TOOLS empty: none


def test_what_a_preset_holds_is_part_of_what_the_person_approves() -> None:
    from passepartout.events.presets import parse_presets

    node = scan_text(UNDER_PRESET.format(now=dt.datetime(2026, 1, 5, 9, 0)),
                     "/notes/a.org").nodes[0]
    presets = parse_presets(PRESETS)
    changed = parse_presets(PRESETS.replace("read-file grep-search", "read-file shell"))
    assert job_hash(node, None, presets) != job_hash(node, None, changed)
    assert job_hash(node, None, presets) != job_hash(node, None, {})  # unknown: held too
    said = describe_job(node, None, presets=presets)
    assert "preset reader (model openai/preset-model, tools grep-search read-file" in said
    assert "will not run" in describe_job(node, None)


def test_a_prompt_under_a_preset_carries_it_and_an_unknown_one_does_not_run(
        tmp_path: Path) -> None:
    from passepartout.events.presets import parse_presets

    seen: list[Signal] = []
    finished: list[tuple[str, str]] = []
    log = EventLog(tmp_path / "events.org")
    dispatcher = Dispatcher({}, log, lambda node, result: finished.append((node, result)),
                            inject=lambda s: seen.append(s) or True)
    reader = parse_presets(PRESETS)["reader"]
    dispatcher.preset_of = {"h1": reader, "h2": "its preset 'x' is not one the daemon "
                                                 "knows"}.get
    dispatcher.model_of = {"h3": "openai/own-model"}.get
    assert dispatcher.run_prompt("h1", "Go", Tier.REASONING, "cron")
    choice = seen[0].turn.choice
    assert (choice.model, choice.tier, choice.system, choice.tools, choice.budget) == (
        "openai/preset-model", "reasoning", "Answer in French.",
        frozenset({"read-file", "grep-search"}), 0.05)
    assert not dispatcher.run_prompt("h2", "Go", Tier.REASONING, "cron")
    assert len(seen) == 1 and finished == [("h2", "error: its preset 'x' is not one the "
                                                   "daemon knows")]
    assert "is not one the daemon knows" in (tmp_path / "events.org").read_text()
    dispatcher.preset_of = {"h3": reader}.get  # the subtree's own model wins
    assert dispatcher.run_prompt("h3", "Go", Tier.COGNITION, "cron")
    assert seen[1].turn.choice.model == "openai/own-model"


@pytest.mark.attack
def test_a_preset_changed_after_approval_holds_the_job(tmp_path: Path) -> None:
    from passepartout.events.approval import JobApprovals
    from passepartout.events.orchestrator import Orchestrator
    from passepartout.events.presets import parse_presets

    memex, home = tmp_path / "memex", tmp_path / "home"
    (memex / "projects").mkdir(parents=True)
    presets_file = tmp_path / "presets.org"
    presets_file.write_text(PRESETS, encoding="utf-8")
    text = UNDER_PRESET.format(now=dt.datetime(2031, 1, 6, 9, 0))
    notes = memex / "projects" / "notes.org"
    approve_text(home, memex, notes, text, presets=parse_presets(PRESETS))
    notes.write_text(text, encoding="utf-8")
    orch = Orchestrator(home=home, memex_dir=memex, approvals=JobApprovals.in_state(home),
                        presets_file=presets_file)
    orch.bootstrap()
    assert [j["id"] for j in orch.jobs()] == ["summary-1"]  # approved with its preset
    preset = orch.heading_preset("summary-1")
    assert not isinstance(preset, str) and preset is not None
    assert preset.choice.model == "openai/preset-model"
    # The presets file changes: the job does not run with what nobody approved.
    presets_file.write_text(PRESETS.replace("read-file grep-search", "shell"),
                            encoding="utf-8")
    why = orch.heading_preset("summary-1")
    assert isinstance(why, str) and "changed since it was approved" in why
    assert [h.node.id for h in orch.held()] == ["summary-1"] and not orch.jobs()
    # A preset the daemon does not know, or a malformed one: the job says so and does
    # not run.
    presets_file.write_text("* other\nNothing.\n", encoding="utf-8")
    why = orch.heading_preset("summary-1")
    assert isinstance(why, str) and "not one the daemon knows" in why
    presets_file.write_text("* reader\n:PROPERTIES:\n:TIER: enormous\n:END:\n",
                            encoding="utf-8")
    why = orch.heading_preset("summary-1")
    assert isinstance(why, str) and "'reader'" in why and "is malformed: " in why


def test_a_cron_job_runs_with_the_preset_its_subtree_chose(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    from passepartout.events.presets import parse_presets

    presets = daemons.tmp / "my-presets.org"
    presets.write_text(PRESETS, encoding="utf-8")
    fake_llm.for_model("preset-model").reply("Rien de neuf.")
    daemons.start(PASSEPARTOUT_PRESETS_FILE=str(presets))
    daemons.wait_ready()
    path = daemons.memex / "projects" / "summary.org"
    text = UNDER_PRESET.format(now=dt.datetime.now())
    approve_text(daemons.home, daemons.memex, path, text, presets=parse_presets(PRESETS))
    path.write_text(text, encoding="utf-8")
    wait_for(lambda: "summary-1: done" in events(daemons), 30, "the job's result")
    (request,) = fake_llm.requests
    assert request.model == "preset-model"
    assert sorted(t["function"]["name"] for t in request.body["tools"]) == [
        "grep-search", "read-file"]
    system = request.messages[0]["content"]
    system = system if isinstance(system, str) else "".join(p["text"] for p in system)
    assert "Answer in French." in system
