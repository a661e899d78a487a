"""Flight Plans: approvals for work nobody is there to confirm.

An action a gate wants confirmed during a cron job, a hook or the heartbeat is written
to the approvals file as a TODO entry with the exact action.  On each heartbeat this
skill runs the entries a person set to APPROVED (once, and only if the action is still
exactly the one proposed) and feeds the reason of a REJECTED one back to the model.

The runner hooks into the heartbeat bus (``services["heartbeat"]``) when the events
skill provides one, and otherwise owns the bare ``:heartbeat`` signal itself.
"""

from __future__ import annotations

from passepartout.api import Signal, defskill, host
from passepartout.security.install import flight_plan_runner, install

DEPENDS_ON = ["policy"]

AGENT = host()

flightplans_RUNNER = (
    flight_plan_runner(AGENT, install(AGENT)) if AGENT is not None else None
)
flightplans_ON_BUS = False
if AGENT is not None and flightplans_RUNNER is not None:
    bus = AGENT.services.get("heartbeat")
    if bus is not None and hasattr(bus, "register"):
        bus.register(flightplans_RUNNER.run_due, name="flightplans")
        flightplans_ON_BUS = True
    AGENT.services["flightplans"] = flightplans_RUNNER


def flightplans_trigger(signal: Signal) -> bool:
    return not flightplans_ON_BUS and signal.sensor == "heartbeat"


def flightplans_reflex(signal: Signal) -> None:
    if flightplans_RUNNER is not None:
        flightplans_RUNNER.run_due()


defskill(
    "flightplans",
    priority=5,
    depends_on=["policy"],
    trigger=flightplans_trigger,
    reflex=flightplans_reflex,
)
