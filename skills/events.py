"""The event orchestrator and the heartbeat bus (seed 000), plugged into the loop.

On a ``:heartbeat`` the bus runs its handlers (due cron jobs, and what other skills
register: the memory skill's autosave, the Flight Plans); on an ``:org-edit`` from
Emacs the edited file's CRON/HOOK nodes are brought up to date and their hooks
fire.  Neither proposes an action, so neither reaches a model: a quiet tick costs
nothing.

A ``:CRON:`` or ``:HOOK:`` heading runs only when the person approved its exact
content (:mod:`passepartout.events.approval`): a new or changed one is held and
asked about as the action ``job:allow``, which the gates always ask: on the face
whose buffer saved it (an Emacs save), else on the attached face, else as a Flight
Plan.  The yes seals the approval and the job runs.

Hooks of nodes edited while the agent was down fire once the agent has booted.
Other skills register hook handlers and reflexes through their host, and use
``services.orchestrator`` (``jobs()``, ``set_classifier``) and ``services.heartbeat``
(``register(fn, name=, every=)``).  Everything starts when the engine starts the skill:
the memex is scanned in the background, so loading stays quick; the watcher stops
when the skill stops (a reload, the agent's stop).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from passepartout.api import Notice, Signal, defskill, host
from passepartout.events.approval import JobApprovals
from passepartout.events.heartbeat import HeartbeatBus
from passepartout.events.hookreplies import HookReplies
from passepartout.events.orchestrator import Held, Orchestrator
from passepartout.events.presets import presets_path
from passepartout.loop.actions import Action
from passepartout.signals import Keyword
from passepartout.turn import DAEMON, TurnContext

if TYPE_CHECKING:
    from passepartout.events.jobs import OrgNode

log = logging.getLogger(__name__)

HOST = host()
AGENT = HOST.agent if HOST is not None else None


def _notify(level: str, text: str) -> None:
    if AGENT is not None:
        AGENT.notify(Notice(text, level), faces_only=True)  # the event log's word


def _start(orchestrator: Orchestrator) -> None:
    try:
        orchestrator.start_watcher()  # first, so nothing saved during the scan is missed
        orchestrator.bootstrap()
    except Exception:
        log.exception("events: the memex scan failed; cron and hooks work from Emacs edits")
        orchestrator.ready.set()
        return
    # The hooks of nodes edited while the agent was down fire once the other skills
    # have registered their handlers.
    if AGENT is not None and AGENT.booted.wait(BOOT_WAIT) and (
            events_RUNNING.orchestrator is orchestrator):  # not stopped meanwhile
        orchestrator.fire_missed()


BOOT_WAIT = 600.0  # seconds; a boot that never ends fires nothing


JOB_TARGET, JOB_VERB = "job", "allow"
events_ASKING = threading.local()  # the held headings of the org-edit being applied


def events_allow_action(held: Held) -> Action:
    """The action a held heading is asked as (the gates always ask a ``job`` action)."""
    return Action(JOB_TARGET, JOB_VERB, {"id": held.node.id, "hash": held.hash,
                                         "job": held.what})


def events_face_attached() -> bool:
    channel = AGENT.faces if AGENT is not None else None
    if channel is None:
        return False
    faces = getattr(channel, "faces", None)
    peers = getattr(channel, "peers", None)
    if callable(faces) and callable(peers):
        return bool(faces() or peers())
    return True


def events_on_held(held: Held) -> None:
    """Ask about a held heading: within an Emacs save, on that face (the reflex returns
    the action); else on the attached face, or as a Flight Plan when none is."""
    collected = getattr(events_ASKING, "held", None)
    if collected is not None:
        collected.append(held)
        return
    if AGENT is None:
        return
    face = DAEMON if events_face_attached() else "background"
    AGENT.stimuli.inject(Signal(
        payload={"sensor": Keyword("job-held"), "id": held.node.id, "hash": held.hash},
        turn=TurnContext(face=face, origin="approval", heading=held.node.id)))


class events_Running:
    """What the started skill runs: the orchestrator and the heartbeat bus."""

    orchestrator: Orchestrator | None = None
    heartbeat: HeartbeatBus | None = None


events_RUNNING = events_Running()


def _orchestrator() -> Orchestrator:
    found = events_RUNNING.orchestrator
    if found is None:
        raise RuntimeError("the events skill is not started")
    return found


def events_reflex(signal: Signal) -> list[Action] | None:
    if signal.sensor == "heartbeat":
        if events_RUNNING.heartbeat is not None:
            events_RUNNING.heartbeat.tick()
    elif signal.sensor == "org-edit":
        events_ASKING.held = []
        try:
            _orchestrator().apply_edit(signal.payload, signal.turn.face or "emacs")
            asked = list(events_ASKING.held)
        finally:
            events_ASKING.held = None
        return [events_allow_action(h) for h in asked] or None
    elif signal.sensor == "job-held":
        held = next((h for h in _orchestrator().held()
                     if h.node.id == signal.payload.get("id")
                     and h.hash == signal.payload.get("hash") and h.why != "denied"), None)
        return [events_allow_action(held)] if held is not None else None
    return None


def events_trigger(signal: Signal) -> bool:
    return signal.sensor in ("heartbeat", "org-edit", "job-held")


def events_allow(action: Action, signal: Signal) -> None:
    """The actuator of ``job:allow``: the person said yes to this exact content."""
    args = action.args
    if action.name != JOB_VERB:
        log.info("job action %s: not one this version runs", action.name)
        return
    try:
        held = _orchestrator().allow(str(args.get("id", "")), str(args.get("hash", "")))
    except ValueError as err:
        log.info("job approval not applied: %s", err)
        return
    log.info("approved: %s", held.what)


def _legacy(home: Path) -> Callable[[OrgNode], bool]:
    """A job the schedule tool made whose prompt the person approved before this
    version (its sealed record in ``model-jobs.json``)."""
    from passepartout.security.trust import Trust
    from passepartout.security.trust.modeljobs import ModelJobs

    record = ModelJobs(Trust.in_state(home))
    return lambda node: node.cron is not None and record.approved(node.id, node.prompt)


def events_start() -> None:
    """Build the orchestrator, publish it, take the ``cron`` and ``hook`` channels and the
    ``job`` actuator, and scan the memex in the background."""
    assert HOST is not None and AGENT is not None
    config = AGENT.config
    orchestrator = Orchestrator(
        home=config.home,
        memex_dir=config.memex_dir,
        scan_dirs=config.memex_scan_dirs,
        inject=AGENT.stimuli.inject,
        notify=_notify,
        approvals=JobApprovals.in_state(Path(config.home)),
        presets_file=presets_path(config),
    )
    orchestrator.on_held = events_on_held
    orchestrator.legacy_approval = _legacy(Path(config.home))
    # The bus is shared (the Flight Plans' and memory's handlers are on it): it stays.
    bus = AGENT.services.heartbeat or HeartbeatBus()
    AGENT.services.heartbeat = bus
    bus.register(orchestrator.on_heartbeat, name="cron")
    events_RUNNING.orchestrator, events_RUNNING.heartbeat = orchestrator, bus
    HOST.provide("orchestrator", orchestrator)
    # Hook runs go through the replies channel, which hands a shipped handler the reply
    # of the prompt it started (and passes everything on to the orchestrator's).
    replies = HookReplies(orchestrator.channel, orchestrator.events)
    HOST.provide("hook-replies", replies)
    HOST.register_channel("cron", orchestrator.channel)
    HOST.register_channel("hook", replies)
    HOST.register_actuator(JOB_TARGET, events_allow)
    threading.Thread(target=_start, args=(orchestrator,), name="memex-bootstrap",
                     daemon=True).start()


def events_stop() -> None:
    """Stop the watcher and the cron handler (the host takes back the rest)."""
    orchestrator, bus = events_RUNNING.orchestrator, events_RUNNING.heartbeat
    events_RUNNING.orchestrator = events_RUNNING.heartbeat = None
    if bus is not None:
        bus.unregister("cron")
    if orchestrator is not None:
        orchestrator.stop()


if AGENT is not None:
    defskill("events", priority=80, trigger=events_trigger, reflex=events_reflex,
             start=events_start, stop=events_stop)
