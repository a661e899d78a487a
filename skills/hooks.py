"""Hooks that act: the shipped handlers of ``:HOOK:`` names (verify-integrity, prompt,
notify, snapshot, summarize), so a heading can do something without a skill of its own.

A handler never writes: it proposes a call of one of this skill's tools
(``hook-write``, ``hook-notify``, ``hook-snapshot``) as a ``hook-act`` signal, and
this skill's reflex hands the loop that call, which passes every gate like the
model's (a person's rule in ``policy.toml`` can make any of them ask or deny).  The
tools run only with the one-use ticket of a handler's proposal, so the model cannot
use them.  What each did is recorded in ``events.org``.  See
:mod:`passepartout.events.shipped_hooks` for what each handler does.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from passepartout.api import Action, Notice, Signal, SkillHost, defskill, host, make_tool

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.events.shipped_hooks import Tier
    from passepartout.memory.store import MemoryStore

DEPENDS_ON = ["events"]

HOST = host()
log = logging.getLogger("passepartout.skills.hooks")


MEMORY_WAIT = 60.0  # seconds a hook waits for memory to open (it opens in the background)


def memory_store(agent: Agent) -> MemoryStore | None:
    """The memory store, once open: a hook fired at start waits for it."""
    ready = agent.services.memory_ready
    if ready is not None:
        ready.wait(MEMORY_WAIT)
    return agent.services.memory


class hooks_Kit:
    """The shipped handlers of one agent, their proposals and their tools."""

    def __init__(self, agent: Agent) -> None:
        from passepartout.org.eventlog import EventLog

        from passepartout.events.hookact import Echoes, HookActions
        from passepartout.events.shipped_hooks import HookTools, ShippedHooks

        self.agent = agent
        orchestrator, replies = agent.services.orchestrator, agent.services.hook_replies
        if orchestrator is None or replies is None:
            raise RuntimeError("the events skill is not started")
        self.orchestrator = orchestrator
        # Records without a notification of their own: hook-notify tells every client.
        self.events = EventLog(orchestrator.events.path, clock=orchestrator.scheduler.clock)
        self.actions = HookActions(agent.stimuli.inject)
        self.replies = replies  # the ``hook`` channel, which the events skill registered
        self.echoes = Echoes()

        def run_prompt(node_id: str, prompt: str, tier: Tier, file: str) -> bool:
            return bool(orchestrator.dispatcher.run_prompt(node_id, prompt, tier, "hook", file))

        self.hooks = ShippedHooks(HookTools(
            actions=self.actions, replies=self.replies, run_prompt=run_prompt,
            events=orchestrator.events, memory=lambda: memory_store(agent),
            memex_dir=Path(agent.config.memex_dir), echoes=self.echoes,
            private_tag=orchestrator.private_tag))

    def install(self, host: SkillHost) -> None:
        """Register the handlers (the host takes them back when the skill stops)."""
        from passepartout.events.shipped_hooks import MODEL_HOOKS

        for name, fn in self.hooks.handlers().items():
            host.register_hook(name, fn)
        # These run the heading's tier themselves: the orchestrator must not run it too.
        self.orchestrator.model_hooks.update(MODEL_HOOKS)
        host.provide("hooks", self)

    # -- the tools -------------------------------------------------------------------

    def write(self, ticket: str, file: str, node: str, mode: str, text: str,
              key: str = "") -> str:
        from passepartout.org.escape import timestamp
        from passepartout.org.eventlog import Entry

        from passepartout.events.headingedit import add_note, locate, set_child, set_property
        from passepartout.fsutil import atomic_write

        proposal = self.actions.redeem(ticket, "hook-write", {
            "file": file, "node": node, "mode": mode, "text": text, "key": key})
        path = Path(file)
        before = path.read_text(encoding="utf-8")
        place = locate(before, file, node)
        if mode == "note":
            after = add_note(before, place, text, timestamp())
        elif mode == "property":
            after = set_property(before, place, key or "SUMMARY", text)
        elif mode == "child":
            after = set_child(before, place, key or "Summary", text)
        else:
            raise ValueError(f"mode is note, property or child, not {mode!r}")
        self.echoes.add(locate(after, file, node).node)  # before the watcher sees it
        if path.read_text(encoding="utf-8") != before:
            raise ValueError(f"{file} changed while it was edited; nothing written")
        atomic_write(path, after)
        what = {"note": "a note under", "property": f":{key or 'SUMMARY'}: of",
                "child": f"the child {key or 'Summary'!r} of"}[mode]
        done = f"wrote {what} {place.node.heading!r}"
        self.events.record(Entry("hook", f"{proposal.hook}: {done}", "", "info", node, file))
        return done

    def notify(self, ticket: str, level: str, text: str, file: str = "") -> str:
        from passepartout.org.eventlog import Entry

        proposal = self.actions.redeem(ticket, "hook-notify",
                                       {"level": level, "text": text, "file": file})
        level = level if level in ("info", "warning", "error") else "info"
        self.events.record(Entry("hook", f"{proposal.hook}: {text}", "", level,
                                 proposal.node_id, file or None))
        told = self.agent.notify(Notice(f"hook: {proposal.hook}: {text}", level))
        return f"notified {told} client(s)"

    def snapshot(self, ticket: str, label: str) -> str:
        from passepartout.org.eventlog import Entry

        proposal = self.actions.redeem(ticket, "hook-snapshot", {"label": label})
        store = memory_store(self.agent)
        if store is None:
            raise ValueError("memory is not open: no snapshot taken")
        info = store.snapshot(label[:200])
        done = f"memory snapshot #{info.seq} ({info.nodes} nodes, root {info.root[:12]})"
        self.events.record(Entry("hook", f"{proposal.hook}: {done}", label, "info",
                                 proposal.node_id))
        return done


class hooks_Running:
    """The kit of the started skill."""

    kit: hooks_Kit | None = None


hooks_RUNNING = hooks_Running()


def _kit() -> hooks_Kit:
    if hooks_RUNNING.kit is None:
        raise RuntimeError("the hooks skill is not started")
    return hooks_RUNNING.kit


def hooks_start() -> None:
    assert HOST is not None
    hooks_RUNNING.kit = hooks_Kit(HOST.agent)
    hooks_RUNNING.kit.install(HOST)


def hooks_stop() -> None:
    hooks_RUNNING.kit = None


def hooks_trigger(signal: Signal) -> bool:
    from passepartout.events.hookact import SENSOR

    return bool(signal.meta.get(SENSOR))


def hooks_reflex(signal: Signal) -> Action | None:
    from passepartout.events.hookact import SENSOR, TICKET_ARG

    if signal.sensor != SENSOR:  # the tool's output, or an error: reported already
        return None
    proposal = _kit().actions.take(str(signal.payload.get(TICKET_ARG) or ""))
    return None if proposal is None else proposal.action


if HOST is not None:
    def hook_write(ticket: str, file: str, node: str, mode: str, text: str,
                   key: str = "") -> str:
        """Write a hook's result into a heading (runs only a hook handler's proposal).

        Args:
            ticket: the hook proposal's ticket
            file: the org file
            node: the heading's id
            mode: note, property or child
            text: what to write
            key: the property name, or the child heading's title
        """
        return _kit().write(ticket, file, node, mode, text, key)

    def hook_notify(ticket: str, level: str, text: str, file: str = "") -> str:
        """Notify every attached client (runs only a hook handler's proposal).

        Args:
            ticket: the hook proposal's ticket
            level: info, warning or error
            text: the notification
            file: the org file it is about
        """
        return _kit().notify(ticket, level, text, file)

    def hook_snapshot(ticket: str, label: str) -> str:
        """Take a memory snapshot (runs only a hook handler's proposal).

        Args:
            ticket: the hook proposal's ticket
            label: the snapshot's label
        """
        return _kit().snapshot(ticket, label)

    hooks_TOOLS = [make_tool(hook_write, name="hook-write", offered=False),
                   make_tool(hook_notify, name="hook-notify", offered=False),
                   make_tool(hook_snapshot, name="hook-snapshot", offered=False)]
else:
    hooks_TOOLS = []

defskill("hooks", priority=70, depends_on=DEPENDS_ON, trigger=hooks_trigger,
         reflex=hooks_reflex, tools=hooks_TOOLS, start=hooks_start if HOST else None,
         stop=hooks_stop if HOST else None)
