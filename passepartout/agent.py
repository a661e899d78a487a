"""The agent assembled: configuration, skills, loop, stimuli, tools and channels.

A channel is where the events of a sender's signals go and where their approvals are
asked: the faces' channel (:attr:`Agent.faces`, the daemon's one channel to every
client: Emacs, the terminal, the TUI, ACP, MCP, messaging), the standalone chat's own,
or a log for background jobs.  Everything a front end needs is here, so the EPC server
and ``passepartout chat`` are thin.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout import protocol
from passepartout.config import Config
from passepartout.engine import Registry, SkillLoader, Status
from passepartout.engine.loader import SHIPPED_SKILLS_DIR
from passepartout.errors import PassepartoutError
from passepartout.loop import Action, Loop, Stimuli, Thought
from passepartout.loop.approvals import Approvals
from passepartout.loop.events import Channel, Event, Notice, ToolCall, ToolResult
from passepartout.services import Services
from passepartout.signals import Keyword, Signal
from passepartout.tools import Tool, ToolBelt
from passepartout.turn import DAEMON, TurnContext

log = logging.getLogger(__name__)

_BACKGROUND = frozenset({"cron", "hook"})  # channels of jobs, not of a person


@dataclass
class Health:
    status: str = "unknown"  # healthy | degraded | unhealthy
    problems: list[str] = field(default_factory=list)


class Agent:
    """One running agent."""

    def __init__(
        self,
        config: Config,
        *,
        think: Callable[[Thought], list[Action]] | None = None,
        skill_dirs: list[Path] | None = None,
    ) -> None:
        self.config = config
        self.registry = Registry()
        dirs = skill_dirs or [
            SHIPPED_SKILLS_DIR,
            *([config.skills_dir] if config.skills_dir else []),
        ]
        self.loader = SkillLoader(
            self.registry,
            dirs,
            mandatory=config.mandatory_skills,
            timeout=config.skill_load_timeout,
            host=self,
        )
        self.loop = Loop(self.registry, think=think, emit=self._emit)
        self.loop.reasoner.unanswered = self._skills_not_ready
        self.channels: dict[str, Channel] = {}  # by sender: a face, a job's kind
        # The channel to every person's face (the daemon's peer channel), once attached.
        self.faces: Channel | None = None
        # Who else hears every event as shown (the model layer keeps what a turn showed).
        self.observers: list[Callable[[Signal, Event], None]] = []
        self.hooks = self.loop.hooks  # where skills attach (passepartout.loop.hooks)
        self.approvals = Approvals(self.channels, hooks=self.hooks,
                                   timeout=config.approval_timeout)
        self.loop.approver = self.approvals
        self.loop.register_actuator("tool", self._run_tool)
        self.stimuli = Stimuli(self.loop, heartbeat_interval=config.heartbeat_interval)
        self.health = Health()
        self.services = Services()  # what skills share: memory, ledger, orchestrator...
        self.booted = threading.Event()  # set once every skill is loaded
        self._shutdown_hooks: list[Callable[[], None]] = []

    # -- life cycle ---------------------------------------------------------------

    def boot(self, *, start_threads: bool = True) -> Agent:
        """Load the skills (a broken mandatory one raises BootError) and start."""
        self.config.home.mkdir(parents=True, exist_ok=True)
        self.services.agent = self
        self.loader.load_all()
        self.booted.set()  # every skill has registered what it registers at load
        self.check_health()
        if start_threads:
            self.stimuli.start()
        return self

    def check_health(self) -> Health:
        """Skills that are not ready, and what any service reports as wrong (seed 001)."""
        problems = [e.describe() for e in self.loader.report() if e.error]
        for name, service in list(self.services.items()):
            report = getattr(service, "problems", None)
            if name == "agent" or not callable(report):
                continue
            try:
                problems += [f"{name}: {p}" for p in report()]
            except Exception as err:
                problems.append(f"{name}: cannot report its state ({err})")
        mandatory_broken = any(
            e.mandatory and e.status is not Status.READY for e in self.loader.report()
        )
        status = "unhealthy" if mandatory_broken else "degraded" if problems else "healthy"
        self.health = Health(status, problems)
        return self.health

    def on_shutdown(self, hook: Callable[[], None]) -> None:
        self._shutdown_hooks.append(hook)

    def shutdown(self) -> None:
        self.stimuli.stop()
        self.loader.stop_all()  # each skill closes what its start opened
        for hook in reversed(self._shutdown_hooks):
            try:
                hook()
            except Exception as err:
                log.error("shutdown hook failed: %s", err)

    # -- input ----------------------------------------------------------------------

    def submit(
        self,
        text: str,
        *,
        session_id: str,
        source: str,
        turn_id: str | None = None,
        context: TurnContext | None = None,
        **meta: Any,
    ) -> str:
        """Queue a person's prompt for the session's lane; returns the turn id.
        ``source`` is the face that sent it.

        The rest of the turn's context is ``context`` (read and checked already) or
        ``meta`` (read here: a :class:`ProtocolError` when a field is malformed)."""
        turn = turn_id or uuid.uuid4().hex[:12]
        if context is not None and meta:
            raise TypeError("submit takes a context or meta fields, not both")
        base = context if context is not None else TurnContext.from_meta(meta)
        signal = Signal(
            payload={"sensor": Keyword("user-input"), "text": text},
            turn=dataclasses.replace(base, face=source, session_id=session_id, turn_id=turn),
        )
        self.stimuli.inject(signal)
        return turn

    def cancel(self, session_id: str, turn_id: str | None = None) -> None:
        self.loop.cancel(session_id, turn_id)

    def tools(self) -> list[Tool]:
        """Every ready skill's tools, by name."""
        return self._belt().all()

    def tool(self, name: str) -> Tool | None:
        return self._belt().get(name)

    def _belt(self) -> ToolBelt:
        belt = ToolBelt()
        belt.add(*[t for t in self.registry.tools() if isinstance(t, Tool)])
        return belt

    def _skills_not_ready(self) -> str:
        return "; ".join(e.describe() for e in self.loader.report()
                         if e.status not in (Status.READY, Status.DISCOVERED))

    def status(self) -> dict[str, Any]:
        self.check_health()
        return {
            "health": self.health.status,
            "problems": list(self.health.problems),
            "skills": {e.name: str(e.status) for e in self.loader.report()},
        }

    # -- channels -------------------------------------------------------------------

    def register_channel(self, source: str, channel: Channel) -> None:
        """Where the events of ``source``'s signals go (a face attaching again replaces
        its own); a name a skill registered stays that skill's."""
        owner = self.loader.channel_owners.get(source)
        if owner is not None and self.channels.get(source) is not channel:
            raise PassepartoutError(f"the channel {source!r} belongs to the skill {owner!r}")
        self.channels[source] = channel

    def attach_faces(self, channel: Channel, names: Iterable[str] = protocol.FACES) -> None:
        """``channel`` reaches every person's face (the daemon's peer channel): the
        signals of each face in ``names`` and the daemon's own questions
        (:data:`~passepartout.turn.DAEMON`) go there, and so do :meth:`notify`'s."""
        for name in (*names, DAEMON):
            self.register_channel(name, channel)
        self.faces = channel

    def _channel(self, signal: Signal) -> Channel | None:
        face = signal.turn.face
        return self.channels.get(face) if face is not None else None

    def _emit(self, signal: Signal, event: Event) -> None:
        for observe in list(self.observers):
            try:
                observe(signal, event)
            except Exception:  # an observer's fault never stops the face hearing it
                log.exception("an event observer failed")
        channel = self._channel(signal)
        if channel is None:
            log.info("[%s] %s", signal.session_id or "-", event)
            return
        try:
            channel.send(signal, event)
        except Exception as err:  # a front end that went away must not stop the loop
            log.warning("channel send failed: %s", err)

    def notify(self, notice: Notice, *, faces_only: bool = False) -> int:
        """A word to every person's face bound to no chat (with ``faces_only``, to the
        faces' channel alone, not a standalone chat's); how many were told."""
        signal = Signal(payload={"sensor": Keyword("notify")}, turn=TurnContext(origin="notify"))
        shown = self.loop.shown(notice)
        seen: list[Channel] = []
        for source, channel in list(self.channels.items()):
            if source in _BACKGROUND or any(channel is c for c in seen) or (
                faces_only and channel is not self.faces
            ):
                continue
            seen.append(channel)
            try:
                channel.send(signal, shown)
            except Exception as err:  # a client gone: the others and the log have it
                log.warning("notice to %s failed: %s", source, err)
                seen.pop()
        return len(seen)

    # -- the tool actuator --------------------------------------------------------------

    def _run_tool(self, action: Action, signal: Signal) -> Signal | None:
        tool = self.tool(action.name)
        self.loop.emit(signal, ToolCall(action.name, dict(action.args), action.call_id))
        if tool is None:
            output, ok = f"unknown tool {action.name!r}", False
        else:
            try:
                output, ok = _as_text(tool.run(action.args)), True
            except PassepartoutError as err:
                output, ok = err.message, False
            except Exception as err:
                log.exception("tool %s failed", action.name)
                output, ok = f"{type(err).__name__}: {err}", False
        self.loop.emit(signal, ToolResult(action.name, ok, output, action.call_id))
        return signal.child(
            {
                "sensor": Keyword("tool-output"),
                "results": [
                    {
                        "call-id": action.call_id or "",
                        "tool": action.name,
                        "ok": ok,
                        "output": output,
                    }
                ],
            }
        )


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, default=str, indent=1)
