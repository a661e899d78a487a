"""Flight Plans: approvals for work nobody is there to confirm.

An action a gate wants confirmed during a cron job, a hook or the heartbeat is written
to the approvals file as a TODO entry with the exact action.  On each heartbeat this
skill runs the entries a person set to APPROVED (once, and only if the action is still
exactly the one proposed, and the entry and its ledger record carry the agent's seal)
and feeds the reason of a REJECTED one back to the model.

A job the model made (``schedule``) asks before its first run: when it fires and the
person has not approved its prompt, this skill takes the signal before any model sees
it and proposes the action ``job:first-run``, which the gates always ask about, so it
becomes a Flight Plan.  Approved, the job runs then and later without asking again.

The runner is a handler of the heartbeat bus (``services["heartbeat"]``, shared with the
events skill); without the events skill this skill owns the ``:heartbeat`` signal.
"""

from __future__ import annotations

from typing import Any

from passepartout.api import Signal, defskill, host
from passepartout.events.heartbeat import HeartbeatBus
from passepartout.events.jobs import Tier
from passepartout.security.install import flight_plan_runner, install
from passepartout.security.modeljobs import TARGET, ModelJobs, first_run

DEPENDS_ON = ["policy"]

AGENT = host()

flightplans_RUNNER = (
    flight_plan_runner(AGENT, install(AGENT)) if AGENT is not None else None
)
flightplans_JOBS = ModelJobs(flightplans_RUNNER.book.trust) if flightplans_RUNNER else None
if AGENT is not None and flightplans_RUNNER is not None:
    # The events skill reuses a bus it finds, so the handler survives whichever loads first.
    flightplans_BUS = AGENT.services.get("heartbeat") or HeartbeatBus()
    flightplans_BUS.register(flightplans_RUNNER.run_due, name="flightplans")
    AGENT.services["heartbeat"] = flightplans_BUS
    AGENT.services["flightplans"] = flightplans_RUNNER
    AGENT.services["model-jobs"] = flightplans_JOBS


def flightplans_node(node_id: str) -> Any:
    """The scanned org node of a job (None without the events skill)."""
    orchestrator = AGENT.services.get("orchestrator") if AGENT is not None else None
    return orchestrator.registry.node(node_id) if orchestrator is not None else None


def flightplans_marked(node_id: str) -> bool:
    """The job's drawer says ``:ORIGIN: model``."""
    node = flightplans_node(node_id)
    return node is not None and node.properties.get("ORIGIN", "").strip().lower() == "model"


def flightplans_first_run_due(signal: Signal) -> bool:
    return flightplans_JOBS is not None and flightplans_JOBS.needs_first_approval(
        signal, flightplans_marked)


def flightplans_trigger(signal: Signal) -> bool:
    if signal.sensor == "heartbeat":
        # Without the events skill nobody ticks the bus: then this skill owns the heartbeat.
        return AGENT is not None and AGENT.registry.get("events") is None
    return flightplans_first_run_due(signal)


def flightplans_reflex(signal: Signal) -> Any:
    if signal.sensor == "heartbeat":
        if flightplans_RUNNER is not None:
            flightplans_RUNNER.run_due()
        return None
    node = flightplans_node(str(signal.meta.get("heading") or ""))
    action = first_run(signal, node.heading if node is not None else "")
    if flightplans_RUNNER is not None:
        flightplans_RUNNER.book.trust.alarms.report(
            f"a job the model made asks before its first run: {action.args['id']}",
            f"Its prompt did not reach the model.  Set its Flight Plan in "
            f"{flightplans_RUNNER.book.path} to APPROVED to let it run.",
            key=f"first-run:{action.digest()}")
    return [action]


def flightplans_first_run(action: Any, signal: Signal) -> None:
    """The actuator of an approved first run: the approval is sealed, then the job runs."""
    assert flightplans_JOBS is not None and AGENT is not None
    args = action.args
    flightplans_JOBS.approve(args["id"], args["prompt"])
    orchestrator = AGENT.services.get("orchestrator")
    if orchestrator is not None:
        tier = Tier.parse(args["tier"]) if args.get("tier") else Tier.COGNITION
        orchestrator.dispatcher.run_prompt(args["id"], args["prompt"], tier,
                                           args.get("origin") or "cron")


if AGENT is not None and flightplans_JOBS is not None:
    AGENT.loop.register_actuator(TARGET, flightplans_first_run)

defskill(
    "flightplans",
    priority=95,  # above the chat: a model-made job's first prompt stops here
    depends_on=["policy"],
    trigger=flightplans_trigger,
    reflex=flightplans_reflex,
)
