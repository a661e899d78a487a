"""The host a skill file gets from ``host()``: one typed registration surface for the
skills that ship and a person's own (the shipped skills plug in through the same calls).

A skill file's top level only declares: ``defskill``, and the registrations it asks of
the host (hook handlers, reflexes, channels, actuators, loop hook points, services).
The engine applies them when it starts the skill and takes every one back when it
stops it (a reload, an unload, the agent's stop); a registration made from a skill's
``start`` applies at once and is taken back the same way.  A channel name is one
skill's: a second registration of it is an error the loader reports, never a silent
override.

A person's skill reaches the read-only calls and the memex's hook handlers and
reflexes.  The calls that wire the agent itself (channels, actuators, loop hook
points, services, the agent) belong to the shipped skills and refuse a person's skill
with a clear error.  The host's fields are closures over the agent, so nothing
reachable from it by plain attributes leads to the agent's tools, files or keys.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from passepartout.errors import SkillError
from passepartout.loop.events import Channel
from passepartout.loop.hooks import HookSpec

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.events.orchestrator import Orchestrator
    from passepartout.loop.actions import Actuator

log = logging.getLogger(__name__)

HookHandler = Callable[[Any], Any]
Undo = Callable[[], None]
F = TypeVar("F", bound=Callable[..., Any])


class RegisterHook(Protocol):
    def __call__(self, name: str, fn: HookHandler, kind: str = "action") -> None: ...


class _State(enum.Enum):
    DECLARING = "declaring"  # the file is running: registrations wait for the start
    LIVE = "live"  # started: a registration applies at once
    STOPPED = "stopped"  # stopped: everything was taken back


class Registrations:
    """What one load of one skill file registered, applied at its start and taken back at
    its stop (the engine's side of a :class:`SkillHost`)."""

    def __init__(self, skill: str) -> None:
        self.skill = skill
        self._state = _State.DECLARING
        self._pending: list[tuple[str, Callable[[], Undo]]] = []
        self._undo: list[Undo] = []
        self._lock = threading.RLock()

    def add(self, what: str, apply: Callable[[], Undo]) -> None:
        """Apply ``apply`` at the start (now, when started); it returns its undoing."""
        with self._lock:
            if self._state is _State.DECLARING:
                self._pending.append((what, apply))
                return
            if self._state is _State.STOPPED:
                raise SkillError(f"skill {self.skill!r} is stopped: {what} refused",
                                 skill=self.skill)
            self._undo.append(_applied(self.skill, what, apply))

    def start(self) -> None:
        """Apply what the file declared; a refused registration raises
        :class:`SkillError` (what was applied before it stays until :meth:`stop`)."""
        with self._lock:
            if self._state is not _State.DECLARING:
                return
            self._state = _State.LIVE
            pending, self._pending = self._pending, []
            for what, apply in pending:
                self._undo.append(_applied(self.skill, what, apply))

    def stop(self) -> None:
        """Take back every registration, the newest first (a failing one is logged)."""
        with self._lock:
            self._state = _State.STOPPED
            self._pending = []
            undo, self._undo = self._undo, []
        for fn in reversed(undo):
            try:
                fn()
            except Exception:
                log.exception("skill %s: taking back a registration failed", self.skill)


def _applied(skill: str, what: str, apply: Callable[[], Undo]) -> Undo:
    try:
        return apply()
    except SkillError:
        raise
    except Exception as err:
        raise SkillError(f"{what} failed: {err}", skill=skill) from err


@dataclass(frozen=True)
class SkillHost:
    """The agent, as a skill sees it: what it may read and what it may register."""

    name: str
    """The skill file's name."""
    shipped: bool
    """Whether the skill is of the shipped set (pinned by its hash)."""
    status: Callable[[], dict[str, Any]]
    """Health, problems and each skill's status (a copy)."""
    catalog: Callable[[], list[str]]
    """One line per skill, as ``/skills`` shows it."""
    tool_names: Callable[[], list[tuple[str, str]]]
    """Each tool's name and description."""
    register_hook: RegisterHook
    """Run a function when a node with ``:HOOK: name`` changes (kind: action or gate)."""
    register_reflex: Callable[[str, HookHandler], None]
    """Let reflex-tier jobs with ``:REFLEX: name`` run a function."""
    register_channel: Callable[[str, Channel], None]
    """Show the events of signals whose source is ``name`` there, and ask their approvals
    there (shipped skills; a name taken already is an error)."""
    register_actuator: Callable[[str, Actuator], None]
    """Carry out the actions whose target is ``name`` (shipped skills)."""
    provide: Callable[[str, object], None]
    """Publish a service under ``name`` in the agent's services (shipped skills)."""
    _attach: Callable[[HookSpec[Any], Any], None]
    _agent: Callable[[], Agent]

    def attach(self, point: HookSpec[F], fn: F) -> None:
        """Attach ``fn`` at one of the loop's hook points (shipped skills)."""
        self._attach(point, fn)

    @property
    def agent(self) -> Agent:
        """The agent itself: only the shipped skills wire it (the security layer, the
        model layer); a person's skill gets an error."""
        return self._agent()


def for_agent(agent: Agent, skill: str, registrations: Registrations, *, shipped: bool,
              channel_owners: dict[str, str] | None = None) -> SkillHost:
    """The host of one load of the skill file ``skill``; what it registers goes through
    ``registrations``.  ``channel_owners``: which skill holds each channel name (shared
    by every host of the agent)."""
    owners = channel_owners if channel_owners is not None else {}

    def only_shipped(what: str) -> None:
        if not shipped:
            raise SkillError(
                f"skill {skill!r}: {what} is for the skills that ship with Passepartout; "
                "a skill of yours registers hooks and reflexes of the memex", skill=skill)

    def status() -> dict[str, Any]:
        return dict(agent.status())

    def catalog() -> list[str]:
        return [entry.describe() for entry in agent.loader.report()]

    def tool_names() -> list[tuple[str, str]]:
        return [(str(t.name), str(t.description)) for t in agent.tools()]

    def orchestrator() -> Orchestrator:
        found = agent.services.orchestrator
        if found is None:
            raise SkillError(f"skill {skill!r}: the events skill is not loaded, so there "
                             "are no hooks or reflexes to register", skill=skill)
        return found

    def register_hook(name: str, fn: HookHandler, kind: str = "action") -> None:
        hook, kind = str(name), str(kind)

        def apply() -> Undo:
            bus = orchestrator()
            bus.register_hook(hook, fn, kind=kind)
            return lambda: bus.hooks.unregister(hook, fn)

        registrations.add(f"the hook handler {hook!r}", apply)

    def register_reflex(reflex: str, fn: HookHandler) -> None:
        reflex = str(reflex)

        def apply() -> Undo:
            bus = orchestrator()
            bus.register_reflex(reflex, fn)
            return lambda: bus.reflexes.unregister(reflex, fn)

        registrations.add(f"the reflex {reflex!r}", apply)

    def register_channel(source: str, channel: Channel) -> None:
        only_shipped("registering a channel")
        source = str(source)

        def apply() -> Undo:
            owner = owners.get(source)
            if owner is not None or source in agent.channels:
                by = f" by the skill {owner!r}" if owner else ""
                raise SkillError(f"skill {skill!r}: the channel {source!r} is registered "
                                 f"already{by}; a channel name is one skill's", skill=skill)
            agent.register_channel(source, channel)
            owners[source] = skill

            def undo() -> None:
                if agent.channels.get(source) is channel:
                    del agent.channels[source]
                if owners.get(source) == skill:
                    del owners[source]

            return undo

        registrations.add(f"the channel {source!r}", apply)

    def register_actuator(target: str, actuator: Actuator) -> None:
        only_shipped("registering an actuator")
        target = str(target)

        def apply() -> Undo:
            agent.loop.register_actuator(target, actuator)

            def undo() -> None:
                if agent.loop.actuators.get(target) is actuator:
                    del agent.loop.actuators[target]

            return undo

        registrations.add(f"the actuator {target!r}", apply)

    def provide(service: str, value: object) -> None:
        only_shipped("publishing a service")
        service = str(service)

        def apply() -> Undo:
            agent.services[service] = value

            def undo() -> None:
                if service in agent.services and agent.services[service] is value:
                    del agent.services[service]

            return undo

        registrations.add(f"the service {service!r}", apply)

    def attach(point: HookSpec[Any], fn: Any) -> None:
        only_shipped("attaching at a hook point of the loop")
        owner = f"skill:{skill}"

        def apply() -> Undo:
            agent.hooks.attach(point, fn, owner=owner)
            return lambda: agent.hooks.detach(owner)

        registrations.add(f"the hook point {point.name!r}", apply)

    def the_agent() -> Agent:
        only_shipped("the agent itself")
        return agent

    return SkillHost(skill, shipped, status, catalog, tool_names, register_hook,
                     register_reflex, register_channel, register_actuator, provide,
                     attach, the_agent)
