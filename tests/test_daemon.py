"""``passepartout daemon`` with no Emacs at all: a cron job written into the memex runs
and its result lands in events.org; one daemon per person; status and stop; a daemon
killed with SIGKILL comes back with its state and runs the job it missed, once.

The daemons are real processes against the fake model server.  Org timestamps name
minutes: the job written into the memex is for the current minute (due at once, it
runs on the next heartbeat tick, half a second); for the job missed while no daemon
ran, the restarted daemon's clock is moved past its time with libfaketime.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons, wait_for
from fakellm import FakeLLM

from passepartout.testing.jobapproval import approve_jobs
from passepartout.wire.client import connect

JOB = """* Check the backups
:PROPERTIES:
:ID: backups-1
:CRON: {when}
:TIER: cognition
:END:
Say whether last night's backups are fresh.
"""

NIGHTLY = """* Nightly tidy
:PROPERTIES:
:ID: tidy-1
:CRON: <2030-01-01 Tue 09:00 +1d>
:TIER: reflex
:REFLEX: log
:END:
Tidy up.
"""

SOON = """* Water the plants
:PROPERTIES:
:ID: plants-1
:CRON: <{when:%Y-%m-%d %a %H:%M} +1d>
:TIER: reflex
:REFLEX: log
:END:
Tidy up.
"""


@pytest.fixture
def daemons(tmp_path: Path) -> Iterator[Daemons]:
    yield from scratch_daemons(tmp_path)


def model(daemons: Daemons, fake: FakeLLM) -> None:
    daemons.env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake.base_url,
                       PASSEPARTOUT_MODEL="openai/gpt-4o",
                       PASSEPARTOUT_MODEL_COGNITION="openai/gpt-4o-mini")


def events(daemons: Daemons) -> str:
    path = daemons.home / "events.org"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_cron_job_written_into_the_memex_runs_with_no_emacs(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    model(daemons, fake_llm)
    fake_llm.reply("All three backups are from last night.")
    daemons.start()
    daemons.wait_ready()
    (daemons.memex / "projects" / "jobs.org").write_text(
        JOB.format(when=f"<{dt.datetime.now():%Y-%m-%d %a %H:%M}>"), encoding="utf-8")
    # Written into the memex, it is held until the person allows it (no face: a plan).
    wait_for(lambda: "held until you approve it" in events(daemons), 30, "the held job")
    held = daemons.cli("cron", "list")
    assert re.search(r"backups-1 +Check the backups .* held \(new\) +new job in projects/"
                     r"jobs.org: runs once on .*cognition tier, prompt: Check the backups",
                     held.stdout), held.stdout
    assert fake_llm.request_count == 0
    refused = daemons.cli("cron", "allow", "backups-1")  # not typed on a terminal
    assert refused.returncode == 1 and "needs your answer on a terminal" in refused.stderr
    wrong = daemons.cli("cron", "allow", "no-such-job", tty_input="y\n")
    assert wrong.returncode == 1 and "no held job or hook has the id 'no-such-job'" \
        in wrong.stdout and "Traceback" not in wrong.stdout
    allowed = daemons.cli("cron", "allow", "backups-1", tty_input="y\n")
    assert allowed.returncode == 0, allowed.stdout
    assert "backups-1: new job in projects/jobs.org" in allowed.stdout
    wait_for(lambda: "backups-1: done" in events(daemons), 30, "the job's result")
    log = events(daemons)
    assert "All three backups are from last night." in log
    assert log.count("backups-1: done") == 1
    assert fake_llm.request_count == 1
    assert fake_llm.last_request.model == "gpt-4o-mini"  # the cognition tier's model
    listed = daemons.cli("cron", "list")
    assert listed.returncode == 0, listed.stderr
    assert "Check the backups" in listed.stdout and "cognition" in listed.stdout
    assert "All three backups" in listed.stdout and "from the running daemon" in listed.stdout
    assert fake_llm.request_count == 1  # a one-shot job: ran once, never again
    assert "model      openai/gpt-4o (openai)" in daemons.cli("status").stdout
    assert daemons.cli("stop").returncode == 0
    offline = daemons.cli("cron", "list")  # no daemon: the memex and the saved state
    assert "from the state files" in offline.stdout and "All three backups" in offline.stdout
    assert "never" in offline.stdout  # a one-shot job that ran has no next run


def test_a_second_daemon_refuses_to_start_and_says_where_the_first_runs(
    daemons: Daemons
) -> None:
    first = daemons.start()
    second = daemons.start(wait=False)
    assert second.wait(30) == 1
    said = daemons.log(1)
    assert f"a daemon already runs (pid {first.pid}, socket {daemons.rundir}/daemon.sock)" \
        in said
    assert "Traceback" not in said
    assert first.poll() is None
    assert daemons.cli("status").returncode == 0  # the first one still answers


def test_status_shows_the_daemon_and_stop_waits_until_it_has_exited(
    daemons: Daemons
) -> None:
    assert daemons.cli("status").returncode == 3  # not running
    (daemons.memex / "projects" / "jobs.org").write_text(
        NIGHTLY + "* Misdated\n:PROPERTIES:\n:ID: bad-1\n:CRON: <2030-13-45 Xyz>\n:END:\n",
        encoding="utf-8")
    held = daemons.cli("cron", "list").stdout  # no daemon: held, from the files
    assert re.search(r"tidy-1 +Nightly tidy .* held \(new\)", held), held
    # Allowed with no daemon running: the sealed record is written by the command.
    allowed = daemons.cli("cron", "allow", "all", tty_input="yes\n")
    assert allowed.returncode == 0 and "allowed: tidy-1" in allowed.stdout, allowed.stdout
    offline = daemons.cli("cron", "list").stdout
    proc = daemons.start()
    shown = daemons.wait_ready()
    assert isinstance(shown, str)
    assert f"pid        {proc.pid}" in shown
    assert f"socket     {daemons.rundir}/daemon.sock" in shown
    assert "health     " in shown and "clients    0" in shown
    # The soonest job is named (the background skills' own jobs come before 2030).
    assert re.search(r"next cron  .+ at \d{4}-\d\d-\d\dT", shown), shown
    listed = daemons.cli("cron", "list")
    assert "Nightly tidy" in listed.stdout and "2030-01-01" in listed.stdout, listed.stdout
    # A heading that is not scheduled is listed with why, by the daemon as without it.
    for text in (offline, listed.stdout):
        assert re.search(r"Misdated .* not scheduled +problem: .*no such date 2030-13-45",
                         text), text
    info = json.loads((daemons.rundir / "daemon.json").read_text())
    for name in ("daemon.json", "daemon.sock"):
        assert (daemons.rundir / name).stat().st_mode & 0o777 == 0o600
    assert (daemons.rundir.stat().st_mode & 0o777) == 0o700
    assert Path(info["token-file"]).stat().st_mode & 0o777 == 0o600
    stopped = daemons.cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert proc.poll() == 0  # it had exited when stop returned, cleanly
    assert "stopped" in daemons.log()
    assert not (daemons.rundir / "daemon.sock").exists()
    assert daemons.cli("status").returncode == 3
    assert "no daemon runs" in daemons.cli("stop").stdout


def test_a_daemon_killed_with_sigkill_comes_back_and_runs_the_missed_job_once(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    model(daemons, fake_llm)
    fake_llm.reply("Noted: the plants.")
    # Daily, next at the start of a minute at least two minutes from now.
    when = (dt.datetime.now() + dt.timedelta(minutes=3)).replace(second=0, microsecond=0)
    (daemons.memex / "projects" / "jobs.org").write_text(SOON.format(when=when),
                                                        encoding="utf-8")
    approve_jobs(daemons.home, daemons.memex)  # as the person would
    first = daemons.start()
    daemons.wait_ready()
    client = connect(daemons.home, environ=daemons.env)
    assert client is not None
    with client:
        client.call("chat-send", "chat-1", "turn-1", "When did I last water the plants?", None)
        assert client.wait_callback("passepartout--on-done")[:2] == ["chat-1", "turn-1"]
        said = [args for name, args in client.callbacks if name == "passepartout--on-chunk"]
        assert said == [["chat-1", "turn-1", "Noted: the plants."]], client.callbacks
    state = daemons.home / "events" / "cron-state.json"
    wait_for(lambda: state.exists() and "plants-1" in state.read_text(), 10, "the cron state")
    first.send_signal(signal.SIGKILL)
    assert first.wait(10) == -signal.SIGKILL
    assert "Water the plants" not in events(daemons)  # killed before its time
    assert daemons.cli("status").returncode == 3  # the lock went with the process
    kept = daemons.cli("sessions")  # from the state files: the turn was kept
    assert "chat-1" in kept.stdout and "When did I last water the plants?" in kept.stdout
    # Back four minutes later by its clock: the job fell due while no daemon ran.
    daemons.start(ahead=240)
    wait_for(lambda: "reflex log done" in events(daemons), 30, "the missed run")
    sessions = daemons.cli("sessions")
    assert "chat-1" in sessions.stdout and "When did I last water the plants?" in sessions.stdout
    tomorrow = f"{when + dt.timedelta(days=1):%Y-%m-%dT%H:%M}"
    listed = daemons.cli("cron", "list").stdout
    assert f"{tomorrow}" in listed and "Water the plants" in listed, listed
    time.sleep(1.5)  # three more ticks: nothing is due any more
    log = events(daemons)
    # Only the plants' run is counted: a built-in weekly job may fall due too.
    caught_up = "'Water the plants' was due at"
    assert log.count(caught_up) == 1, log
    assert log.count("'Water the plants': reflex log done") == 1, log


def test_detach_starts_a_daemon_that_outlives_its_starter_and_finds_a_running_one(
        daemons: Daemons) -> None:
    first = daemons.cli("daemon", "--detach", timeout=60)
    assert first.returncode == 0, first.stderr
    assert "started: pid" in first.stdout
    info = json.loads((daemons.rundir / "daemon.json").read_text())
    try:
        # The starter has exited; the daemon answers, in a session of its own.
        with connect(daemons.home, environ=daemons.env) as client:
            assert client.call("ping") is not None
        again = daemons.cli("daemon", "--detach")
        assert again.returncode == 0, again.stderr
        assert f"already runs: pid {info['pid']}" in again.stdout
    finally:
        stopped = daemons.cli("stop")
        assert stopped.returncode == 0, stopped.stderr


def test_stop_during_the_start_waits_until_the_daemon_answers_then_stops_it(
        daemons: Daemons) -> None:
    """A daemon still starting (its lock held, no address yet) is stopped, not reported
    as absent: ``stop`` waits until it can prove the daemon, then signals it."""
    proc = daemons.start(wait=False)
    wait_for(lambda: "booting" in daemons.log(), 60, "the daemon to start booting")
    starting = not (daemons.rundir / "daemon.json").exists()
    stopped = daemons.cli("stop", timeout=120)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "stopped the daemon" in stopped.stdout, stopped.stdout
    if starting:  # caught before it could answer (the model layer takes seconds)
        assert "is starting; waiting until it answers" in stopped.stdout, stopped.stdout
    assert proc.wait(30) == 0


def test_detach_says_why_a_daemon_cannot_start(daemons: Daemons) -> None:
    daemons.env["PASSEPARTOUT_AUTH_TIMEOUT"] = "soon"
    started = daemons.cli("daemon", "--detach")
    assert started.returncode == 1
    assert "exited with status 2" in started.stderr
    assert "Traceback" not in started.stderr
