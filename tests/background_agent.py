"""A real agent with the three background skills, the org tools and the security
skills, against the fake model server, on a simulated clock."""

from __future__ import annotations

import datetime as dt
import itertools
import re
from pathlib import Path
from typing import Any

from agents import boot_agent, skill_folder, wait_for

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.security.install import install
from passepartout.signals import Keyword, Signal
from passepartout.testing.jobapproval import approve_jobs, approve_text

SKILLS = ("policy.py", "dispatcher.py", "flightplans.py", "events.py", "chat.py",
          "orgtools.py", "scribe.py", "gardener.py", "archivist.py")
_RUNS = itertools.count(1)
JOB_IDS = ("passepartout-scribe", "passepartout-gardener", "passepartout-archivist")


class SimClock:
    """The orchestrator's clock, moved by the test."""

    def __init__(self, start: dt.datetime) -> None:
        self.now = start

    def __call__(self) -> dt.datetime:
        return self.now


def allow_rules(config_dir: Path, memex: Path, *tools: str) -> None:
    """A policy.toml letting ``tools`` edit the memex without asking."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "policy.toml").write_text("".join(
        f'[[rule]]\ndecision = "allow"\ntool = "{t}"\nscope = "{memex}"\n' for t in tools))


def make_agent(tmp_path: Path, env: dict[str, str], files: dict[str, str],
               clock: SimClock | None = None) -> Agent:
    memex = Path(env["MEMEX_DIR"])
    for name, text in files.items():
        (memex / name).parent.mkdir(parents=True, exist_ok=True)
        (memex / name).write_text(text, encoding="utf-8")
    approve_jobs(env["PASSEPARTOUT_HOME"], memex)  # as the person would
    env = {**env, "PASSEPARTOUT_MODEL": "openai/gpt-4o",
           "PASSEPARTOUT_MODEL_COGNITION": "openai/gpt-4o-mini",
           "PASSEPARTOUT_STREAM": "0", "PASSEPARTOUT_EMBEDDINGS": "off",
           "PASSEPARTOUT_WORKSPACE": str(memex)}
    config = Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))
    agent = boot_agent(config, skills=skill_folder(tmp_path / "skills", SKILLS), model=True)
    status = agent.status()["skills"]
    assert all(status[n] == "ready" for n in ("scribe", "gardener", "archivist")), status
    orchestrator = agent.services["orchestrator"]
    assert orchestrator.ready.wait(10)
    install(agent).policy()  # the first start's acceptance is recorded now, not mid-test
    if clock is not None:
        orchestrator.scheduler.clock = clock
        orchestrator.events._clock = clock
        agent.services["background"].events._clock = clock
    return agent


def beat(agent: Agent, when: dt.datetime) -> None:
    agent.stimuli.inject(Signal(payload={"sensor": Keyword("heartbeat"),
                                         "unix-time": int(when.timestamp())},
                                meta={"source": Keyword("heartbeat")}))
    assert agent.stimuli.wait_idle(30)


def reschedule(agent: Agent, stamps: dict[str, str]) -> Path:
    """Edit the :CRON: of background jobs in the memex, as the person does."""
    path = Path(agent.config.memex_dir) / "system" / "background.org"
    text = path.read_text(encoding="utf-8")
    for name, stamp in stamps.items():
        text = re.sub(rf"(:ID:\s+passepartout-{name}\n:CRON:\s+)<[^>]*>",
                      lambda m, s=stamp: m.group(1) + s, text)
    approve_text(agent.config.home, agent.config.memex_dir, path, text)  # and approves it
    path.write_text(text, encoding="utf-8")
    agent.services["orchestrator"].rescan(path)
    return path


def stamp(moment: dt.datetime, repeat: str = "+1h") -> str:
    return f"<{moment:%Y-%m-%d %a %H:%M} {repeat}>"


def events_text(env: dict[str, str]) -> str:
    path = Path(env["PASSEPARTOUT_HOME"]) / "events.org"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def run_job(agent: Agent, name: str) -> str:
    """Make the job ``name`` due now (as the person rescheduling it), run a heartbeat,
    and let the loop carry out what it proposed; the job's result."""
    orch = agent.services["orchestrator"]
    now = orch.scheduler.clock()
    # A new :CRON: each time (an unchanged one keeps its next run, tomorrow).  Stamps
    # have minutes only, so one a minute earlier may still read the same as the last.
    current = cron_of(agent, name)
    for minutes in (next(_RUNS), next(_RUNS)):
        fresh = stamp(now - dt.timedelta(minutes=minutes), "+1d")
        if fresh != current:
            break
    reschedule(agent, {name: fresh})
    beat(agent, now)
    job_id = f"passepartout-{name}"

    def ran() -> Any:
        job = orch.job(job_id)
        return (job is not None and job.last_run is not None and job.last_run >= now
                and not job.running and job)
    job = wait_for(ran, what=f"a run of {name} at {now}")
    assert agent.stimuli.wait_idle(30)
    return str(job.last_result)


def cron_of(agent: Agent, name: str) -> str | None:
    """The :CRON: of the background job ``name`` as the memex has it."""
    path = Path(agent.config.memex_dir) / "system" / "background.org"
    found = re.search(rf":ID:\s+passepartout-{name}\n:CRON:\s+(<[^>]*>)",
                      path.read_text(encoding="utf-8"))
    return found.group(1) if found else None
