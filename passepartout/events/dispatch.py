"""Running a job at its tier (seed 000).

reflex: a function a skill registered by name runs, with no model (a job without a
``:REFLEX:`` property gets the built-in ``log``).  cognition and reasoning: the job's
prompt is injected as a person's input for that tier's model, tagged with its origin
(``:cron`` or ``:hook``) and its heading's id, so what it costs is booked on that
heading.  The loop's events for such a run come back through :class:`BackgroundChannel`,
which records the reply and tells the scheduler the run is over.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from passepartout.events.jobs import Job, Tier
from passepartout.loop.actions import ApprovalRequest
from passepartout.loop.events import Denied, Done, Error, Event, Reply
from passepartout.org.eventlog import Entry, EventLog
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnChoice, TurnContext

if TYPE_CHECKING:
    from passepartout.events.presets import Preset

log = logging.getLogger(__name__)

ReflexFn = Callable[[Job], Any]
Injector = Callable[[Signal], bool]
Finisher = Callable[[str, "str | None"], None]  # (job id, result)


def _log_reflex(job: Job) -> str:
    return f"{job.heading} fired"


class Reflexes:
    """Functions that reflex-tier jobs name with ``:REFLEX:``; thread-safe."""

    def __init__(self) -> None:
        self._fns: dict[str, ReflexFn] = {"log": _log_reflex}
        self._lock = threading.Lock()

    def register(self, name: str, fn: ReflexFn) -> None:
        if not name.strip():
            raise ValueError("a reflex needs a name")
        with self._lock:
            self._fns[name.strip().lower()] = fn

    def unregister(self, name: str, fn: ReflexFn) -> None:
        """Forget ``name`` if ``fn`` is still what it runs."""
        with self._lock:
            if self._fns.get(name.strip().lower()) is fn:
                del self._fns[name.strip().lower()]

    def get(self, name: str) -> ReflexFn | None:
        with self._lock:
            return self._fns.get(name.strip().lower())

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._fns)


@dataclass
class _Run:
    job_id: str
    origin: str
    replies: list[str]


class Dispatcher:
    """Runs jobs: reflexes here and now, model tiers through the stimulus queue."""

    def __init__(self, reflexes: Reflexes, events: EventLog, finish: Finisher,
                 inject: Injector | None = None) -> None:
        self.reflexes = reflexes
        self.events = events
        self.finish = finish
        self.inject = inject
        # Whether a node lies in a private subtree: its prompt then never goes to a
        # remote model (the model layer runs it locally or refuses it).
        self.is_private: Callable[[str], bool] = lambda node_id: False
        # How notices name a heading: its title and file, not its internal id.
        self.name_of: Callable[[str], str] = lambda node_id: node_id
        # The model the heading's subtree chose (PASSEPARTOUT_MODEL), or None.
        self.model_of: Callable[[str], str | None] = lambda node_id: None
        # The preset the heading's subtree chose (PASSEPARTOUT_PRESET), None, or why the
        # heading must not run (its preset unknown, or changed since it was approved).
        self.preset_of: Callable[[str], Preset | str | None] = lambda node_id: None
        self._runs: dict[str, _Run] = {}  # turn id -> run in flight
        self._lock = threading.Lock()

    def run(self, job: Job, note: str) -> None:
        """Run a job (already marked running); ``note`` says why it runs now."""
        self.events.record(Entry("cron", note, level="info", node_id=job.id, file=job.file))
        if job.tier is Tier.REFLEX:
            self._run_reflex(job)
        else:
            self.run_prompt(job.id, job.prompt, job.tier, "cron", job.file)

    def _run_reflex(self, job: Job) -> None:
        name = job.reflex or "log"
        fn = self.reflexes.get(name)
        if fn is None:
            known = ", ".join(self.reflexes.names())
            text = f"no reflex named {name!r} is registered (known: {known})"
            self.events.record(Entry("cron", f"{job.heading!r} failed", text, "error",
                                     job.id, job.file))
            self.finish(job.id, f"error: {text}")
            return
        try:
            answer = fn(job)
        except Exception as err:
            log.exception("reflex %s of cron %s failed", name, job.id)
            text = f"{type(err).__name__}: {err}"
            self.events.record(Entry("cron", f"{job.heading!r}: reflex {name} failed", text,
                                     "error", job.id, job.file))
            self.finish(job.id, f"error: {text}")
            return
        result = "" if answer is None else str(answer)
        self.events.record(Entry("cron", f"{job.heading!r}: reflex {name} done", result,
                                 "info", job.id, job.file))
        self.finish(job.id, result or "done")

    def run_prompt(self, node_id: str, prompt: str, tier: Tier, origin: str,
                   file: str | None = None) -> bool:
        """Inject ``prompt`` for ``tier``'s model, tagged with its origin and heading."""
        preset = self.preset_of(node_id)
        if isinstance(preset, str):
            self.events.record(Entry(origin, f"{self.name_of(node_id)} did not run", preset,
                                     "error", node_id, file))
            if origin == "cron":
                self.finish(node_id, f"error: {preset}")
            return False
        turn = f"{origin}-{uuid.uuid4().hex[:10]}"
        private = self.is_private(node_id)
        reflex = tier.value == "reflex"
        chosen = preset.choice if preset is not None else TurnChoice()
        choice = TurnChoice(model=self.model_of(node_id) or chosen.model,
                            tier=None if reflex else (chosen.tier or tier.value),
                            system=chosen.system, tools=chosen.tools, budget=chosen.budget)
        context = TurnContext(face=origin, origin=origin, heading=node_id,
                              session_id=f"{origin}:{node_id}", turn_id=turn, private=private,
                              reflex=reflex, choice=choice)
        if private:
            self.events.record(Entry(origin, f"{self.name_of(node_id)} is in a private subtree",
                                     "its prompt goes to the local model only "
                                     "(PASSEPARTOUT_PRIVATE_JOBS)", "info", node_id, file))
        signal = Signal(payload={"sensor": Keyword("user-input"), "text": prompt}, turn=context)
        with self._lock:
            self._runs[turn] = _Run(node_id, origin, [])
        if self.inject is None or not self.inject(signal):
            with self._lock:
                self._runs.pop(turn, None)
            name = self.name_of(node_id)
            self.events.record(Entry(origin, f"could not queue the prompt of {name}",
                                     "the agent is not accepting input", "error", node_id, file))
            if origin == "cron":
                self.finish(node_id, "error: not queued")
            return False
        return True

    # -- what the loop says about a run (through BackgroundChannel) ----------------------

    def on_event(self, signal: Signal, event: Event) -> None:
        turn = signal.turn.turn_id or ""
        with self._lock:
            run = self._runs.get(turn)
        if run is None:
            return
        if isinstance(event, Reply):
            run.replies.append(event.text)
        elif isinstance(event, Error):
            run.replies.append(f"error: {event.message}")
        elif isinstance(event, Denied) and event.flightplan:
            # Said at once and by its id: the person opens that plan from the notice.
            self.events.record(Entry(
                run.origin,
                f"{self.name_of(run.job_id)}: Flight Plan {event.flightplan} waits for "
                "your answer in approvals.org", event.action, "warning", run.job_id))
        elif isinstance(event, Done):
            with self._lock:
                self._runs.pop(turn, None)
            text = "\n\n".join(r for r in run.replies if r).strip()
            if event.cancelled:
                text = (text + "\n(cancelled)").strip()
            failed = text.startswith("error:")
            outcome = "failed" if failed else "done"
            self.events.record(Entry(run.origin, f"{self.name_of(run.job_id)}: {outcome}",
                                     text, "error" if failed else "info", run.job_id))
            if run.origin == "cron":
                self.finish(run.job_id, text or "done")

    def in_flight(self) -> int:
        with self._lock:
            return len(self._runs)


class BackgroundChannel:
    """The channel of cron and hook runs: replies go to the event log.  Nobody is
    asked here: the agent's approval path turns a background run's question into a
    Flight Plan before any channel is asked."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    def send(self, signal: Signal, event: Event) -> None:
        self.dispatcher.on_event(signal, event)

    def approve(self, request: ApprovalRequest) -> bool:
        log.info("background run asked to approve %s: nobody to ask, denied",
                 request.action.describe())
        return False
