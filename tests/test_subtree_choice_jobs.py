"""The model a subtree chooses holds for the jobs under it, as for a chat turn sent from
there: ``PASSEPARTOUT_MODEL`` and ``PASSEPARTOUT_TIER`` are read with org's inheritance
(the heading's own drawer, its ancestors', the file's ``#+PROPERTY:`` lines), a job's
own ``:TIER:`` still wins, and the choice is part of what the person approved."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

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
