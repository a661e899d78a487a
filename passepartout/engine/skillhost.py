"""What a person's skill gets from ``host()``: a few typed calls, not the agent.

The shipped skills hold the agent itself (they install the security layer); a person's
skill gets a :class:`SkillHost` whose fields are closures over the agent, so nothing
reachable from it by plain attributes leads to the agent's tools, files or keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

HookHandler = Callable[[Any], Any]


@dataclass(frozen=True)
class SkillHost:
    """The agent, as a person's skill sees it."""

    status: Callable[[], dict[str, Any]]
    """Health, problems and each skill's status (a copy)."""
    catalog: Callable[[], list[str]]
    """One line per skill, as ``/skills`` shows it."""
    tool_names: Callable[[], list[tuple[str, str]]]
    """Each tool's name and description."""
    register_hook: Callable[[str, HookHandler, str], None]
    """Run a function when a node with ``:HOOK: name`` changes (kind: action or gate)."""
    register_reflex: Callable[[str, HookHandler], None]
    """Let reflex-tier jobs with ``:REFLEX: name`` run a function."""


def for_agent(agent: Any) -> SkillHost:
    def status() -> dict[str, Any]:
        return dict(agent.status())

    def catalog() -> list[str]:
        return [entry.describe() for entry in agent.loader.report()]

    def tool_names() -> list[tuple[str, str]]:
        return [(str(t.name), str(t.description)) for t in agent.tools()]

    def orchestrator() -> Any:
        found = agent.services.orchestrator
        if found is None:
            raise RuntimeError("the events skill is not loaded: no hooks or reflexes")
        return found

    def register_hook(name: str, fn: HookHandler, kind: str = "action") -> None:
        orchestrator().register_hook(str(name), fn, kind=str(kind))

    def register_reflex(name: str, fn: HookHandler) -> None:
        orchestrator().register_reflex(str(name), fn)

    return SkillHost(status, catalog, tool_names, register_hook, register_reflex)
