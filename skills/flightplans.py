"""Flight Plans: approvals for work nobody is there to confirm.

An action a gate wants confirmed during a cron job, a hook or the heartbeat is written
to the approvals file as a TODO entry with the exact action.  On each heartbeat this
skill runs the entries a person set to APPROVED (once, and only if the action is still
exactly the one proposed, and the entry and its ledger record carry the agent's seal)
and feeds the reason of a REJECTED one back to the model.

A job (a ``:CRON:`` or ``:HOOK:`` heading, whoever wrote it, the ``schedule`` tool
too) is held until the person approves its exact content: the events skill asks that
as the action ``job:allow``, which becomes a Flight Plan here when no face is there.

The runner is a handler of the heartbeat bus (``services["heartbeat"]``, shared with the
events skill); without the events skill this skill owns the ``:heartbeat`` signal.
"""

from __future__ import annotations

from typing import Any

from passepartout.api import Signal, defskill, host
from passepartout.events.heartbeat import HeartbeatBus
from passepartout.security.install import flight_plan_runner, install
from passepartout.security.trust.modeljobs import ModelJobs

DEPENDS_ON = ["policy"]

AGENT = host()

flightplans_RUNNER = (
    flight_plan_runner(AGENT, install(AGENT)) if AGENT is not None else None
)
# The schedule tool's record of the jobs it made (their ``:ORIGIN: model`` mark).
flightplans_JOBS = ModelJobs(flightplans_RUNNER.book.trust) if flightplans_RUNNER else None
if AGENT is not None and flightplans_RUNNER is not None:
    # The events skill reuses a bus it finds, so the handler survives whichever loads first.
    flightplans_BUS = AGENT.services.get("heartbeat") or HeartbeatBus()
    flightplans_BUS.register(flightplans_RUNNER.run_due, name="flightplans")
    AGENT.services["heartbeat"] = flightplans_BUS
    AGENT.services["flightplans"] = flightplans_RUNNER
    AGENT.services["model-jobs"] = flightplans_JOBS


def flightplans_trigger(signal: Signal) -> bool:
    # Without the events skill nobody ticks the bus: then this skill owns the heartbeat.
    return (signal.sensor == "heartbeat" and AGENT is not None
            and AGENT.registry.get("events") is None)


def flightplans_reflex(signal: Signal) -> Any:
    if flightplans_RUNNER is not None:
        flightplans_RUNNER.run_due()
    return None


defskill(
    "flightplans",
    priority=95,
    depends_on=["policy"],
    trigger=flightplans_trigger,
    reflex=flightplans_reflex,
)
