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

from passepartout.security.approvals.flightplan import FlightPlanRunner
from passepartout.security.trust.modeljobs import ModelJobs

from passepartout.api import Action, Signal, defskill, host
from passepartout.events.heartbeat import HeartbeatBus
from passepartout.security.install import flight_plan_runner, install

DEPENDS_ON = ["policy"]

HOST = host()


class flightplans_Running:
    """The runner of the started skill."""

    runner: FlightPlanRunner | None = None


flightplans_RUNNING = flightplans_Running()


def flightplans_start() -> None:
    """Put the runner on the heartbeat bus and publish it with the schedule tool's record
    of the jobs it made (their ``:ORIGIN: model`` mark)."""
    assert HOST is not None
    agent = HOST.agent
    runner = flightplans_RUNNING.runner = flight_plan_runner(agent, install(agent))
    # The bus is shared: the events skill reuses a bus it finds, and keeps it.
    bus = agent.services.heartbeat or HeartbeatBus()
    agent.services.heartbeat = bus
    bus.register(runner.run_due, name="flightplans")
    HOST.provide("flightplans", runner)
    HOST.provide("model-jobs", ModelJobs(runner.book.trust))


def flightplans_stop() -> None:
    runner, flightplans_RUNNING.runner = flightplans_RUNNING.runner, None
    bus = HOST.agent.services.heartbeat if HOST is not None else None
    if runner is not None and bus is not None:
        bus.unregister("flightplans")


def flightplans_trigger(signal: Signal) -> bool:
    # Without the events skill nobody ticks the bus: then this skill owns the heartbeat.
    return (signal.sensor == "heartbeat" and HOST is not None
            and HOST.agent.registry.get("events") is None)


def flightplans_reflex(signal: Signal) -> list[Action] | None:
    if flightplans_RUNNING.runner is not None:
        flightplans_RUNNING.runner.run_due()
    return None


defskill(
    "flightplans",
    priority=95,
    depends_on=["policy"],
    trigger=flightplans_trigger,
    reflex=flightplans_reflex,
    start=flightplans_start if HOST else None,
    stop=flightplans_stop if HOST else None,
)
