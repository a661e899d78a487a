"""MCP: the tools of the servers in ``mcp.json`` for the model, and the memex for other
agents (``passepartout mcp``).

The servers are connected on one background event loop (:mod:`passepartout.mcp.hub`)
once the agent has booted; each tool they list becomes ``mcp__SERVER__TOOL``, high
impact, so every call passes the gates and asks unless a grant allows it
(``passepartout grant add TITLE --tool 'mcp__SERVER__*'``).  A tool is offered only once
the person approved its exact name, description and schema (asked in the attached face
or as a Flight Plan, or ``passepartout mcp allow``; :mod:`passepartout.mcp.pins`); a
changed tool waits again.  Descriptions that speak to the model withhold their tool;
results go back through the same masks as every tool's.
A server that fails or dies is a line of the agent's health, never a crash.

The memex face (:mod:`passepartout.mcp.memex`) is published for the bridge as
``services["mcp-memex"]``; the results of its writes that a Flight Plan ran come back as
tool output, which this skill's reflex takes (no model is asked about them).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from passepartout.api import Action, Signal, defskill, host

if TYPE_CHECKING:
    from passepartout.agent import Agent

DEPENDS_ON = ["policy", "dispatcher"]

HOST = host()


class mcp_Service:
    """The hub of one agent, and what the status says of it."""

    def __init__(self, agent: Agent) -> None:
        from passepartout.mcp.asking import McpAsker
        from passepartout.mcp.config import load
        from passepartout.mcp.hub import McpHub
        from passepartout.mcp.pins import PinStore

        self.agent = agent
        self.config = load(agent.config.config_dir)
        self.pins = PinStore(agent.config.home)
        self.hub = McpHub(self.config.servers, log_dir=agent.config.home / "mcp",
                          on_change=self.refresh, pins=self.pins,
                          on_waiting=lambda cards: self.asker.on_waiting(cards))
        self.asker = McpAsker(agent, self.pins, self.hub.reoffer)

    def start(self) -> None:
        def later() -> None:
            self.agent.booted.wait()
            if self.config.servers:
                self.asker.attach()
            self.hub.start()

        threading.Thread(target=later, name="mcp-start", daemon=True).start()

    def refresh(self) -> None:
        """The skill's tools are the ready servers' tools (read at every model call)."""
        skill = self.agent.registry.get("mcp")
        if skill is not None:
            skill.tools = tuple(self.hub.tools())

    def problems(self) -> list[str]:
        return [*self.config.errors, *self.hub.problems()]

    def lines(self) -> list[str]:
        return [*self.config.errors, *self.hub.lines()]

    def stop(self) -> None:
        self.hub.stop()


def mcp_trigger(signal: Signal) -> bool:
    """The output of a write an MCP client asked for (run from a Flight Plan)."""
    from passepartout.mcp.memex import ORIGIN

    return signal.sensor == "tool-output" and signal.turn.origin == ORIGIN


def mcp_reflex(signal: Signal) -> Action:
    results = signal.payload.get("results") or []
    text = "; ".join(str(r.get("output", "")) for r in results if isinstance(r, dict))
    return Action("chat", text=text or "done")


class mcp_Running:
    """The service of the started skill."""

    service: mcp_Service | None = None


mcp_RUNNING = mcp_Running()


def mcp_start() -> None:
    """Publish the hub and the memex face; connect the servers once the agent booted."""
    from passepartout.loop.hooks import BEFORE_ACTION
    from passepartout.mcp.memex import MemexFace, snapshot_first

    assert HOST is not None
    agent = HOST.agent
    service = mcp_RUNNING.service = mcp_Service(agent)
    HOST.provide("mcp", service)
    HOST.provide("mcp-memex", MemexFace(agent))
    HOST.attach(BEFORE_ACTION, snapshot_first(agent))
    service.start()


def mcp_stop() -> None:
    """Close the servers' sessions (a reload, the agent's stop)."""
    service, mcp_RUNNING.service = mcp_RUNNING.service, None
    if service is not None:
        service.stop()


defskill("mcp", priority=60, depends_on=DEPENDS_ON, trigger=mcp_trigger if HOST else None,
         reflex=mcp_reflex if HOST else None, start=mcp_start if HOST else None,
         stop=mcp_stop if HOST else None)
