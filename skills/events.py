"""The event orchestrator and the heartbeat bus (seed 000), plugged into the loop.

On a ``:heartbeat`` the bus runs its handlers (due cron jobs, and what other skills
register: the memory skill's autosave, the Flight Plans); on an ``:org-edit`` from
Emacs the edited file's CRON/HOOK nodes are brought up to date and their hooks
fire.  Neither proposes an action, so neither reaches a model: a quiet tick costs
nothing.

Hooks of nodes edited while the agent was down fire once the agent has booted.
Other skills use ``AGENT.services["orchestrator"]`` (``jobs()``, ``register_hook``,
``register_reflex``, ``set_classifier``) and ``AGENT.services["heartbeat"]``
(``register(fn, name=, every=)``).  The memex is scanned in the background, so
loading stays quick; the watcher stops when the agent shuts down.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from passepartout.api import Notice, Signal, defskill, host
from passepartout.events.heartbeat import HeartbeatBus
from passepartout.events.orchestrator import Orchestrator

log = logging.getLogger(__name__)

AGENT = host()


def _notify(level: str, text: str) -> None:
    if AGENT is not None:
        AGENT.notify(Notice(text, level), to=("emacs",))  # the event log's word


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
    if AGENT is not None and AGENT.booted.wait(BOOT_WAIT):
        orchestrator.fire_missed()


BOOT_WAIT = 600.0  # seconds; a boot that never ends fires nothing


def events_reflex(signal: Signal) -> None:
    if signal.sensor == "heartbeat":
        events_HEARTBEAT.tick()
    elif signal.sensor == "org-edit":
        events_ORCHESTRATOR.apply_edit(signal.payload)


def events_trigger(signal: Signal) -> bool:
    return signal.sensor in ("heartbeat", "org-edit")


def events_register_hook(name: str, fn: Any, kind: str = "action") -> None:
    """Run ``fn(event)`` when a node with ``:HOOK: name`` changes (kind: gate|action)."""
    events_ORCHESTRATOR.register_hook(name, fn, kind=kind)


def events_register_reflex(name: str, fn: Any) -> None:
    """Let reflex-tier jobs with ``:REFLEX: name`` run ``fn(job)``."""
    events_ORCHESTRATOR.register_reflex(name, fn)


def _build() -> tuple[Orchestrator, HeartbeatBus]:
    assert AGENT is not None
    previous = AGENT.services.get("orchestrator")
    if previous is not None:  # a reload: the old watcher must not keep running
        previous.stop()
    config = AGENT.config
    orchestrator = Orchestrator(
        home=config.home,
        memex_dir=config.memex_dir,
        scan_dirs=config.memex_scan_dirs,
        inject=AGENT.stimuli.inject,
        notify=_notify,
    )
    bus = previous_bus if (previous_bus := AGENT.services.get("heartbeat")) else HeartbeatBus()
    bus.register(orchestrator.on_heartbeat, name="cron")
    AGENT.services["orchestrator"] = orchestrator
    AGENT.services["heartbeat"] = bus
    AGENT.register_channel("cron", orchestrator.channel)
    AGENT.register_channel("hook", orchestrator.channel)
    AGENT.on_shutdown(orchestrator.stop)
    threading.Thread(target=_start, args=(orchestrator,), name="memex-bootstrap",
                     daemon=True).start()
    return orchestrator, bus


if AGENT is not None:
    events_ORCHESTRATOR, events_HEARTBEAT = _build()
    defskill("events", priority=80, trigger=events_trigger, reflex=events_reflex)
