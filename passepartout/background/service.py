"""What the three background skills share in one agent (``services["background"]``):
the proposals and their ``background`` channel, the job headings, each skill's small
state file, and the orchestrator's clock (so a test can run an hour in a moment)."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passepartout.background.acts import SENSOR, SOURCE, Outcomes, Proposals
from passepartout.background.jobs import JobHeadings, JobSpec, jobs_file
from passepartout.events.jobs import Job
from passepartout.fsutil import atomic_write
from passepartout.loop.actions import Action
from passepartout.org.eventlog import EventLog
from passepartout.security.privacy import private_tag
from passepartout.signals import Signal

log = logging.getLogger(__name__)

SERVICE = "background"


class Background:
    """The shared part of the background skills of one agent."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.orchestrator = agent.services.orchestrator
        config = agent.config
        self.home = Path(config.home)
        self.memex = Path(config.memex_dir).expanduser()
        self.state_dir = self.home / "background"
        # Records without a notification: a background run tells Emacs nothing unasked.
        self.events = EventLog(self.orchestrator.events.path,
                               clock=self.orchestrator.scheduler.clock)
        self.proposals = Proposals(agent.stimuli.inject)
        self.outcomes = Outcomes(self.orchestrator.channel, self.events)
        agent.register_channel(SOURCE, self.outcomes)
        self.headings = JobHeadings(self.state_dir, jobs_file(
            self.memex, list(config.memex_scan_dirs)))
        self.specs: dict[str, JobSpec] = {}

    @classmethod
    def of(cls, agent: Any) -> Background:
        found = agent.services.get(SERVICE)
        # Made again when the events skill was: the old one's orchestrator is stopped.
        if found is None or found.orchestrator is not agent.services.orchestrator:
            found = agent.services[SERVICE] = cls(agent)
        return found

    # -- what the skills call ------------------------------------------------------------

    def now(self) -> dt.datetime:
        moment: dt.datetime = self.orchestrator.scheduler.clock()
        return moment if moment.tzinfo else moment.astimezone()

    @property
    def private_tag(self) -> str:
        return private_tag(self.agent.services)

    def add(self, spec: JobSpec, reflex: Callable[[Job], Any]) -> str:
        """Register the skill's reflex and make its cron heading if it never was."""
        self.specs[spec.name] = spec
        self.orchestrator.register_reflex(spec.name, reflex)
        try:
            outcome = self.headings.ensure(spec, self.now(),
                                           lambda text: self._approve(spec, text))
        except (OSError, ValueError) as err:
            log.error("background job %s: its heading could not be made: %s", spec.name, err)
            return f"not made: {err}"
        if outcome.startswith("made in"):
            self.orchestrator.rescan(self.headings.path)
        return outcome

    def _approve(self, spec: JobSpec, text: str) -> None:
        """The heading the agent's own code makes is approved as made (any later change
        of it is asked, as for every job)."""
        from passepartout.events.scan import scan_text

        approvals = self.orchestrator.approvals
        if approvals is None:
            return
        for node in scan_text(text, str(self.headings.path)).nodes:
            if node.id == spec.node_id:
                approvals.record(self.orchestrator.content_hash(node), node,
                                 self.orchestrator.memex_dir, allowed=True)

    def node_ids(self) -> set[str]:
        return {spec.node_id for spec in self.specs.values()}

    def setting(self, job: Job, key: str, default: str) -> str:
        """A property of the job's heading (the person's setting), else ``default``."""
        node = self.orchestrator.registry.node(job.id)
        value = node.properties.get(key.upper()) if node is not None else None
        return value.strip() if value and value.strip() else default

    def propose(self, skill: str, job: Job, tool: str, args: dict[str, Any]) -> bool:
        return self.proposals.propose(skill, job.id, tool, args)

    def load(self, name: str) -> dict[str, Any]:
        path = self.state_dir / f"{name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:
            log.error("background: %s is unreadable (%s); starting afresh", path, err)
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, name: str, data: dict[str, Any]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.state_dir / f"{name}.json",
                     json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))


def trigger_for(name: str) -> Callable[[Signal], bool]:
    """A skill's trigger: the proposals it made, and what the loop sends back of them."""
    return lambda signal: signal.meta.get(SENSOR) == name


def reflex_for(agent: Any) -> Callable[[Signal], Action | None]:
    """A skill's reflex: the proposal's call, once; nothing for the tool's output (so
    no model is asked about it)."""

    def reflex(signal: Signal) -> Action | None:
        if signal.sensor != SENSOR:
            return None
        proposal = Background.of(agent).proposals.take(str(signal.payload.get("ticket") or ""))
        return None if proposal is None else proposal.action

    return reflex
