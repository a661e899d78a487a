"""Notices where the person looks, against the real daemon and a real Emacs.

A ``:CRON:`` job runs while no client is attached and proposes an action that needs
the person's yes: it becomes a Flight Plan, and the job's notice names the plan.  Then
Emacs attaches (``elisp/test/passepartout-notices-attached.el``, against this
daemon): the missed notices are in the notices buffer and counted in the
mode line, the plan's button opens the approvals file at that plan, and its keyword
cycles to APPROVED.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pytest
from daemon_proc import Daemons, wait_for
from fakellm import FakeLLM
from test_daemon_emacs import EMACS, emacs, events
from wire_client import ROOT

from passepartout.testing.jobapproval import approve_text

pytestmark = pytest.mark.skipif(EMACS is None, reason="emacs is not installed")

JOB = """* Write the report
:PROPERTIES:
:ID: report-1
:CRON: <{now:%Y-%m-%d %a %H:%M}>
:TIER: cognition
:END:
Write the weekly report.
"""


def test_a_jobs_flight_plan_is_a_notice_with_its_id_shown_on_attach(
    daemons: Daemons, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    report = tmp_path / "report.txt"
    fake_llm.for_model("gpt-4o-mini").tool_call(
        "write-file", {"path": str(report), "content": "the report"})
    fake_llm.for_model("gpt-4o-mini").reply("The report waits for your approval.")
    proc = daemons.start()
    daemons.wait_ready()
    path, text = daemons.memex / "projects" / "jobs.org", JOB.format(now=dt.datetime.now())
    approve_text(daemons.home, daemons.memex, path, text)  # the person allowed the job
    path.write_text(text, encoding="utf-8")
    wait_for(lambda: "report-1: done" in events(daemons), 30, "the job's result")
    # The job's own entry names the plan it left, before its result.
    assert "Flight Plan fp-" in events(daemons), events(daemons)
    assert not report.exists()

    ert = subprocess.run(
        emacs("-l", "passepartout-notices-attached.el", "--eval",
              '(ert-run-tests-batch-and-exit "passepartout-notices-attached")',
              env=daemons.env), cwd=ROOT, env=daemons.env,
        capture_output=True, text=True, timeout=120)
    said = ert.stdout + ert.stderr
    assert ert.returncode == 0, said[-4000:]
    assert "Ran 1 tests, 1 results as expected" in said, said[-4000:]
    assert "waits for your answer in approvals.org" in said
    assert proc.poll() is None
