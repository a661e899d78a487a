"""Emacs attached to the real daemon, driven from here as ``emacs --batch`` processes.

- The whole sequence with no Emacs at first: start ``passepartout daemon``, write a
  ``:CRON:`` heading due now into the memex, see the job run and its result land in
  ``events.org``; then Emacs attaches (the ERT test ``passepartout-daemon-test-attach-
  chat-detach`` against this daemon), is shown the job's notice it missed, chats and
  detaches, and the daemon still runs.
- Two Emacs processes attached at once: each gets its own reply and only its own
  approval (one says yes, the other no, each to its own action), both are shown the
  notice of a job that ran while they were attached, and the job ran once.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
from agents import wait_for
from daemon_proc import Daemons
from fakellm import FakeLLM
from wire_client import ROOT

from passepartout.testing.jobapproval import approve_text

EMACS = shutil.which("emacs")
pytestmark = pytest.mark.skipif(EMACS is None, reason="emacs is not installed")

JOB = """* Check the backups
:PROPERTIES:
:ID: backups-1
:CRON: <{now:%Y-%m-%d %a %H:%M}>
:TIER: cognition
:END:
Say whether last night's backups are fresh.
"""


def events(daemons: Daemons) -> str:
    path = daemons.home / "events.org"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def emacs(*args: str, env: dict[str, str]) -> list[str]:
    assert EMACS is not None
    return [EMACS, "-Q", "--batch", "-L", str(ROOT / "elisp"), "-L",
            str(ROOT / "elisp" / "test"), *args]


def run_job(daemons: Daemons) -> None:
    path, text = daemons.memex / "projects" / "jobs.org", JOB.format(now=dt.datetime.now())
    approve_text(daemons.home, daemons.memex, path, text)  # the person allowed it
    path.write_text(text, encoding="utf-8")
    wait_for(lambda: "backups-1: done" in events(daemons), 30, "the job's result")


def test_cron_job_with_no_emacs_then_emacs_attaches_chats_detaches(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.for_model("gpt-4o-mini").reply("All three backups are from last night.")
    fake_llm.for_model("gpt-4o").reply("Attached and answering.")
    proc = daemons.start()
    daemons.wait_ready()
    run_job(daemons)
    assert "All three backups are from last night." in events(daemons)

    ert = subprocess.run(
        emacs("-l", "elisp/test/run-tests.el", env=daemons.env), cwd=ROOT,
        env={**daemons.env, "PASSEPARTOUT_TEST_ATTACHED": "1",
             "PASSEPARTOUT_TEST_SELECTOR": "passepartout-daemon-test-attach-chat-detach"},
        capture_output=True, text=True, timeout=120)
    said = ert.stdout + ert.stderr
    assert ert.returncode == 0, said[-4000:]
    assert "1 results as expected" in said or "Ran 1 tests, 1 results" in said
    # The job ran before Emacs attached: its notice waited and was shown on attach.
    assert "while no client was attached] cron:" in said, said[-4000:]
    assert f"detached from pid {proc.pid}, which runs on" in said

    assert proc.poll() is None  # the daemon still runs
    status = daemons.cli("status")
    assert status.returncode == 0 and f"pid        {proc.pid}" in status.stdout
    assert events(daemons).count("backups-1: done") == 1
    assert fake_llm.request_count == 2  # the job once, the chat once


def test_two_emacs_processes_get_their_own_replies_and_approvals_and_a_job_runs_once(
    daemons: Daemons, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    clients = {"a": "yes", "b": "no"}
    for name in clients:
        target = tmp_path / f"{name}.txt"
        fake_llm.for_model(f"model-{name}").tool_call(
            "write-file", {"path": str(target), "content": f"from {name}"})
        fake_llm.for_model(f"model-{name}").reply(f"Client {name} is answered.")
    fake_llm.for_model("gpt-4o-mini").reply("All three backups are from last night.")
    proc = daemons.start()
    daemons.wait_ready()
    release = tmp_path / "release"
    running = {
        name: subprocess.Popen(
            emacs("-l", "passepartout-daemon-client.el", env=daemons.env), cwd=ROOT,
            env={**daemons.env, "CLIENT_NAME": name, "CLIENT_MODEL": f"openai/model-{name}",
                 "CLIENT_PROMPT": f"Write {name}.txt please", "CLIENT_ANSWER": answer,
                 "CLIENT_RELEASE": str(release),
                 "CLIENT_DONE": str(tmp_path / f"{name}.replied")},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, answer in clients.items()}
    try:
        # Both attached and answered: then a job runs while both are attached.
        wait_for(lambda: all((tmp_path / f"{n}.replied").exists() for n in clients), 90,
                 "both replies")
        run_job(daemons)
        release.touch()
        out = {name: p.communicate(timeout=60) for name, p in running.items()}
    finally:
        for p in running.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    for name, (stdout, stderr) in out.items():
        assert running[name].returncode == 0, stdout + stderr[-3000:]
        lines = stdout.splitlines()
        assert f"DAEMON {proc.pid}" in lines  # one daemon for both
        asked = [line for line in lines if line.startswith("ASKED ")]
        assert len(asked) == 1 and f"{name}.txt" in asked[0], lines
        other = "b" if name == "a" else "a"
        assert f"{other}.txt" not in stdout
        reply = next(line for line in lines if line.startswith("REPLY "))
        assert f"Client {name} is answered." in reply
        notices = [line for line in lines
                   if line.startswith("NOTICE cron:") and "backups-1: done" in line]
        assert len(notices) == 1, lines  # every attached client, once
        assert "DETACHED" in lines
    assert (tmp_path / "a.txt").read_text() == "from a"  # a said yes
    assert not (tmp_path / "b.txt").exists()  # b said no
    assert events(daemons).count("backups-1: done") == 1
    assert sum(1 for r in fake_llm.requests if r.model == "gpt-4o-mini") == 1
    assert proc.poll() is None
