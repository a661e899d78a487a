"""Chaos: the daemon killed with SIGKILL at random moments, again and again.

Each round is one person's daemon (its own state, memex and runtime directory) killed
many times.  Every life of the daemon starts it, attaches a face, drives one thing
(a streaming chat turn, a due cron job, a memory write, an approval answered "always",
or nothing: the kill lands in its start) and kills it with SIGKILL at a moment drawn
from the round's seed.  After every kill and every restart what was acknowledged before
the kill is checked:

- a chat turn whose end the face saw is still in its session's history;
- a note the face saw remembered is still in memory;
- a grant the person gave ("always", and the tool then ran) still counts;
- every cron job the person approved runs: exactly once, or, when a kill interrupted
  it, it is recorded as interrupted and runs again; never more often than that;
- a face attached before the kill attaches again.

``PASSEPARTOUT_CHAOS_KILLS`` sets the number of kills over all rounds (52 by default);
``PASSEPARTOUT_CHAOS_SEED`` the seed (a failure names the seed and the life).
The model is the fake OpenAI-protocol server, answering by what each prompt asks, so
that a reply lost with a killed daemon never shifts a script.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons, wait_for
from fakellm import FakeLLM
from fakellm_protocol import RecordedRequest, Reply, ToolCall
from passepartout.security.trust.cli import book

from passepartout.config import Config
from passepartout.faces.face import Face
from passepartout.memory.store import MemoryStore
from passepartout.protocol import Allow, ApprovalAsked, Disconnected, Done, ToolFinished, TurnError
from passepartout.wire.client import DaemonError

ROUNDS = 4
KILLS = int(os.environ.get("PASSEPARTOUT_CHAOS_KILLS", "52"))
SEED = int(os.environ.get("PASSEPARTOUT_CHAOS_SEED", "23"))
ACTIONS = ("chat", "cron", "remember", "approve", "boot")
WORDS = 16  # a streamed reply's words
WORD_DELAY = 0.04
SETTLE = 60.0  # bounded wait for what a restarted daemon must do


class ChaosModel(FakeLLM):
    """The fake model answering each request by what its prompt asks (a reply queue
    would shift when a killed daemon leaves a scripted reply unused)."""

    def _next_reply(self, request: RecordedRequest) -> Reply:
        unpaired = unpaired_tool_calls(request.messages)
        if unpaired:  # as a provider does: the whole session would be stuck
            return Reply(status=400, message=f"tool calls without their results: {unpaired}")
        users = [m for m in request.messages if m.get("role") == "user"]
        prompt = str(users[-1].get("content", "")) if users else ""
        after_tool = bool(request.messages) and request.messages[-1].get("role") == "tool"
        found = re.search(r"chaos-(chat|remember|approve|cron) (\w+)", prompt)
        if found is None:
            return Reply(text="ok", finish_reason="stop")
        kind, tag = found.groups()
        if kind == "remember" and not after_tool:
            return Reply(tool_calls=[ToolCall("remember", {"title": f"note {tag}"})])
        if kind == "approve" and not after_tool:
            return Reply(tool_calls=[ToolCall("shell", {"cmd": grant_command(tag)})])
        if kind in ("chat", "cron"):
            text = " ".join(f"{tag}-{i}" for i in range(WORDS))
            return Reply(text=text, chunk_delay=WORD_DELAY, finish_reason="stop")
        return Reply(text=f"done {tag}", finish_reason="stop")


def unpaired_tool_calls(messages: list[dict[str, object]]) -> list[str]:
    """Tool calls not answered by the tool messages right after them, and tool messages
    answering no call: what providers reject."""
    bad: list[str] = []
    open_ids: set[str] = set()
    for message in messages:
        if message.get("role") == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id not in open_ids:
                bad.append(f"orphan result {call_id}")
            open_ids.discard(call_id)
            continue
        bad += [f"call {c}" for c in sorted(open_ids)]
        calls = message.get("tool_calls") or []
        assert isinstance(calls, list)
        open_ids = {str(c.get("id")) for c in calls}
    return bad + [f"call {c}" for c in sorted(open_ids)]


@pytest.fixture
def model() -> Iterator[ChaosModel]:
    with ChaosModel() as fake:
        yield fake


@pytest.fixture
def daemons(tmp_path: Path, model: ChaosModel) -> Iterator[Daemons]:
    for running in scratch_daemons(tmp_path):
        running.env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=model.base_url,
                           PASSEPARTOUT_MODEL="openai/gpt-4o",
                           PASSEPARTOUT_MODEL_COGNITION="openai/gpt-4o-mini",
                           PASSEPARTOUT_STREAM="1")
        yield running


@dataclass
class Expected:
    """What was acknowledged before a kill, so must survive every later one."""

    turns: dict[str, list[str]] = field(default_factory=dict)  # session -> prompts
    notes: list[str] = field(default_factory=list)
    grants: list[str] = field(default_factory=list)  # the code each grant allows
    jobs: dict[str, str] = field(default_factory=dict)  # job id -> heading
    interrupted_expected: int = 0


def grant_command(tag: str) -> str:
    """A command that asks (not on the allow-list) and writes nothing."""
    return f"expr {tag.strip('rx')} + 1"


def jobs_file(daemons: Daemons, job_id: str) -> Path:
    return daemons.memex / "projects" / f"{job_id}.org"


def job_text(job_id: str, heading: str, reflex: bool, daily: bool) -> str:
    """A job due now: once, or daily from now (its next run is tomorrow)."""
    now = dt.datetime.now()
    tier = ":TIER: reflex\n:REFLEX: log\n" if reflex else ":TIER: cognition\n"
    repeat = " +1d" if daily else ""
    return (f"* {heading}\n:PROPERTIES:\n:ID: {job_id}\n"
            f":CRON: <{now:%Y-%m-%d %a %H:%M}{repeat}>\n{tier}:END:\nchaos-cron {job_id}\n")


def events_text(daemons: Daemons) -> str:
    path = daemons.home / "events.org"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def runs_of(daemons: Daemons, heading: str) -> tuple[int, int, int]:
    """(starts, interrupted starts, finished runs) of a job in events.org."""
    starts = interrupted = finished = 0
    for line in events_text(daemons).splitlines():
        if not line.startswith("* ") or heading not in line:
            continue
        if f"'{heading}' was interrupted" in line:
            interrupted += 1
            starts += 1
        elif re.search(rf"(running |catch-up: )'{heading}'|'{heading}' was overdue", line):
            starts += 1
        elif re.search(rf"'{heading}': reflex log done|{heading}\b.*: done$", line):
            finished += 1
    return starts, interrupted, finished


def job_settled(daemons: Daemons, job_id: str) -> bool:
    path = daemons.home / "events" / "cron-state.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8")).get(job_id)
    except (OSError, ValueError):
        return False
    return bool(entry) and "started" not in entry and entry.get("last_result") is not None


def config_of(daemons: Daemons) -> Config:
    return Config.from_mapping(daemons.env, config_dir=Path(daemons.env[
        "PASSEPARTOUT_CONFIG_DIR"]))


class Life:
    """One start of the daemon: its process, a face, and a kill at a set moment."""

    def __init__(self, daemons: Daemons, where: str) -> None:
        self.daemons = daemons
        self.where = where
        self.proc = daemons.start()
        self.killed = threading.Event()
        self._timer: threading.Timer | None = None

    def kill_in(self, seconds: float) -> None:
        self._timer = threading.Timer(seconds, self.kill)
        self._timer.start()

    def kill(self) -> None:
        if self.killed.is_set():
            return
        self.killed.set()
        info = self.daemons.rundir / "daemon.json"
        if info.exists():
            try:
                pid = json.loads(info.read_text())["pid"]
            except (OSError, ValueError, KeyError):
                pid = self.proc.pid
            assert pid == self.proc.pid, (self.where, pid, self.proc.pid)
        os.kill(self.proc.pid, signal.SIGKILL)

    def wait_killed(self) -> None:
        if self._timer is not None:
            self._timer.join()
        self.kill()
        assert self.proc.wait(30) == -signal.SIGKILL, self.where


def attach_when_ready(daemons: Daemons, where: str) -> Face:
    """A face of the restarted daemon once its agent can answer (every face attached
    before the kill lost its daemon: this is it attaching again)."""
    def ready() -> Face | None:
        face = Face.attach(daemons.home, environ=daemons.env)
        if face is not None and not face.status().get("ready"):
            face.close()
            return None
        return face

    face = wait_for(ready, SETTLE, f"{where}: a face to attach to the restarted daemon")
    assert isinstance(face, Face)
    return face


def check_after_restart(daemons: Daemons, face: Face, expected: Expected, where: str) -> None:
    """What must hold once the daemon is back: every acknowledged turn, grant and job."""
    for session, prompts in expected.turns.items():
        history = face.history(session)
        said = [str(m.get("content", "")) for m in history if m.get("role") == "user"]
        missing = [p for p in prompts if not any(p in s for s in said)]
        assert not missing, f"{where}: turns of {session} lost: {missing} (history {said})"
        listed = {str(s.get("id")) for s in face.sessions()}
        assert session in listed, f"{where}: session {session} not listed: {listed}"
    rules = book(config_of(daemons)).grant_rules()
    kept = [" ".join(r.command) for r in rules if r.decision == "allow"]
    lost = [g for g in expected.grants if g not in kept]
    assert not lost, f"{where}: grants lost: {lost} (grants now: {kept})"
    for job_id, heading in expected.jobs.items():
        wait_for(lambda j=job_id: job_settled(daemons, j), SETTLE,  # type: ignore[misc]
                 f"{where}: job {job_id} to run after the restart")
        starts, interrupted, finished = runs_of(daemons, heading)
        assert finished >= 1, f"{where}: job {job_id} lost\n{events_text(daemons)}"
        assert starts <= interrupted + 1, (
            f"{where}: job {job_id} started {starts} times, {interrupted} of them after "
            f"an interruption\n{events_text(daemons)}")
        assert finished <= starts, f"{where}: {job_id}\n{events_text(daemons)}"


def check_memory(daemons: Daemons, expected: Expected, where: str) -> None:
    """With no daemon running: every acknowledged note is in the store."""
    store = MemoryStore.open(daemons.home / "memory.sqlite3")
    try:
        titles = {hit.title for note in expected.notes for hit in store.search(note, k=5)}
    finally:
        store.close()
    lost = [n for n in expected.notes if n not in titles]
    assert not lost, f"{where}: notes lost: {lost}"


def moment(rng: random.Random, events: int) -> int:
    """After which event of a turn of about ``events`` events the kill comes; a third
    of the time just after its end (what was acknowledged must then be kept)."""
    return rng.randrange(events) if rng.random() < 2 / 3 else 1_000


def drive_turn(face: Face, life: Life, session: str, prompt: str, rng: random.Random,
               kill_after: int, answered: list[str] | None = None) -> tuple[bool, set[str]]:
    """Send a prompt and follow its events until the end or the kill; answers an
    approval "always" after a moment.  The kill comes a moment after the turn's
    ``kill_after``-th event (0: once it is sent), or after its end.
    (whether Done came, the tools whose results came.)"""
    results: set[str] = set()
    seen = 0

    def moment() -> None:
        if seen == kill_after:
            life.kill_in(rng.uniform(0.0, 0.15))

    try:
        turn = face.send(session, prompt)
        moment()
        for event in turn.events(timeout=SETTLE):
            seen += 1
            moment()
            if isinstance(event, ApprovalAsked):
                time.sleep(rng.uniform(0.0, 0.3))  # the person reads the question
                if face.answer(event.approval_id, Allow(always=True)) and answered is not None:
                    answered.append(prompt)  # the daemon took the answer: a grant now
            elif isinstance(event, ToolFinished) and event.ok:
                results.add(event.name)
            elif isinstance(event, Done):
                assert life.killed.is_set() or not event.cancelled, life.where
                return not event.cancelled, results
            elif isinstance(event, TurnError):
                assert life.killed.is_set(), f"{life.where}: {event.kind}: {event.message}"
                break
            elif isinstance(event, Disconnected):
                break
    except DaemonError:
        assert life.killed.is_set(), life.where
    return False, results


def one_life(daemons: Daemons, expected: Expected, action: str, n: int,
             rng: random.Random, where: str) -> None:
    life = Life(daemons, where)
    if action == "boot":
        life.kill_in(rng.uniform(0.0, 3.0))
        life.wait_killed()
        return
    face = attach_when_ready(daemons, where)
    with face:
        check_after_restart(daemons, face, expected, where)
        tag = f"r{n}x"
        if action == "cron":
            job_id, heading = f"chaos-{n}", f"Chaos job {n}"
            reflex = rng.random() < 0.5
            daemons.write_approved(jobs_file(daemons, job_id), job_text(job_id, heading, reflex,
                                                                   rng.random() < 0.5))
            expected.jobs[job_id] = heading  # approved and written: it must run
            if rng.random() < 0.3:  # before or while the daemon finds it
                life.kill_in(rng.uniform(0.0, 1.0))
            else:  # once it runs: a prompt job's reply streams for WORDS * WORD_DELAY
                wait_for(lambda: runs_of(daemons, heading)[0], SETTLE, f"{where}: {job_id}")
                life.kill_in(rng.uniform(0.0, 0.2 if reflex else WORDS * WORD_DELAY + 0.3))
            life.wait_killed()
            return
        if action == "chat":
            session = f"chat-{rng.randrange(3)}"
            prompt = f"chaos-chat {tag}"
            done, _ = drive_turn(face, life, session, prompt, rng, moment(rng, WORDS + 2))
            if done:
                expected.turns.setdefault(session, []).append(prompt)
        elif action == "remember":
            done, results = drive_turn(face, life, "notes", f"chaos-remember {tag}", rng,
                                       moment(rng, 5))
            if "remember" in results:
                expected.notes.append(f"note {tag}")
        elif action == "approve":
            answered: list[str] = []
            drive_turn(face, life, "approvals", f"chaos-approve {tag}", rng,
                       moment(rng, 6), answered)
            if answered:
                expected.grants.append(grant_command(tag))
        life.wait_killed()
    check_memory(daemons, expected, where)


@pytest.mark.slow
@pytest.mark.parametrize("round_no", range(ROUNDS))
def test_the_daemon_killed_at_random_moments_loses_nothing(
    daemons: Daemons, round_no: int
) -> None:
    kills = KILLS // ROUNDS + (1 if round_no < KILLS % ROUNDS else 0)
    rng = random.Random(f"{SEED}-{round_no}")
    expected = Expected()
    plan = [ACTIONS[i % len(ACTIONS)] for i in range(kills)]
    rng.shuffle(plan)
    for n, action in enumerate(plan):
        one_life(daemons, expected, action, n, rng,
                 f"seed {SEED} round {round_no} life {n} ({action})")
    # A last life, stopped cleanly: everything acknowledged is there, every job ran.
    where = f"seed {SEED} round {round_no} after the last kill"
    Life(daemons, where)
    with attach_when_ready(daemons, where) as face:
        check_after_restart(daemons, face, expected, where)
    assert daemons.cli("stop").returncode == 0
    check_memory(daemons, expected, where)
    interrupted = sum(runs_of(daemons, h)[1] for h in expected.jobs.values())
    print(f"\nround {round_no}: {kills} kills; kept {sum(map(len, expected.turns.values()))} "
          f"turns, {len(expected.notes)} notes, {len(expected.grants)} grants, "
          f"{len(expected.jobs)} jobs ({interrupted} runs interrupted and run again)")
