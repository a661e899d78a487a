"""Hooks: skills register gates or actions for a hook name; when a node carrying
``:HOOK: name`` is added, changed or removed, they run with its old and new content.

A gate judges the change (its answer is a :class:`Verdict`, a bool, or a string that
is a reason to refuse); an action does something and may return text to show.  Both
run in the order they were registered; one that raises is reported and the others
still run.  Every result goes to the event log (log, Emacs, org file).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from passepartout.events.jobs import OrgNode
from passepartout.events.registry import NodeChange
from passepartout.loop.actions import Verdict
from passepartout.org.eventlog import Entry, EventLog

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HookEvent:
    """What a hook handler is given."""

    hook: str
    change: str  # added | changed | removed (for this hook name)
    node_id: str
    heading: str
    file: str
    old: str | None  # the node's text before, None when it is new
    new: str | None  # the node's text after, None when it is gone
    source: str  # the face that sent the edit (emacs) | disk | scan
    old_node: OrgNode | None = None
    new_node: OrgNode | None = None
    # When the change reached the hooks: what a handler did after it (a snapshot of the
    # changed heading) is no record of how things were before it.
    at: float = field(default_factory=time.time)


HookHandler = Callable[[HookEvent], Any]


@dataclass(frozen=True)
class HookResult:
    hook: str
    handler: str
    kind: str  # gate | action
    ok: bool
    decision: str | None  # a gate's allow | deny | ask
    text: str

    def describe(self) -> str:
        what = f"{self.decision}" if self.decision else ("ok" if self.ok else "failed")
        return f"{self.hook} [{self.handler}] {what}" + (f": {self.text}" if self.text else "")


@dataclass(frozen=True)
class _Handler:
    fn: HookHandler
    kind: str
    name: str


class HookBus:
    """The hook handlers by hook name, and their firing."""

    def __init__(self, events: EventLog | None = None) -> None:
        self.events = events
        self._handlers: dict[str, list[_Handler]] = {}
        self._lock = threading.Lock()
        self._fire_lock = threading.Lock()  # edits from Emacs and disk fire one at a time

    def register(self, name: str, fn: HookHandler, *, kind: str = "action",
                 label: str | None = None) -> None:
        """Run ``fn`` when a node with ``:HOOK: name`` changes (``kind``: gate or action)."""
        if kind not in ("gate", "action"):
            raise ValueError(f"a hook handler is a gate or an action, not {kind!r}")
        if not name or not name.strip() or any(c.isspace() for c in name.strip()):
            raise ValueError(f"a hook name is one word, not {name!r}")
        handler = _Handler(fn, kind, label or str(getattr(fn, "__name__", None) or repr(fn)))
        with self._lock:
            self._handlers.setdefault(name.strip().lower(), []).append(handler)
        log.info("hook %s -> %s (%s)", name, handler.name, kind)

    def unregister(self, name: str, fn: HookHandler) -> None:
        with self._lock:
            handlers = self._handlers.get(name.lower(), [])
            self._handlers[name.lower()] = [h for h in handlers if h.fn is not fn]

    def names(self) -> list[str]:
        with self._lock:
            return sorted(n for n, hs in self._handlers.items() if hs)

    def fire(self, change: NodeChange) -> list[HookResult]:
        """Run the handlers of every hook name the changed node carries (or carried)."""
        old_hooks = change.old.hooks if change.old is not None else ()
        new_hooks = change.new.hooks if change.new is not None else ()
        results: list[HookResult] = []
        with self._fire_lock:
            for hook in dict.fromkeys([*old_hooks, *new_hooks]):
                kind = change.kind
                if hook not in old_hooks:
                    kind = "added"
                elif hook not in new_hooks:
                    kind = "removed"
                results += self._fire_one(hook, kind, change)
        return results

    def _fire_one(self, hook: str, kind: str, change: NodeChange) -> list[HookResult]:
        node = change.node
        event = HookEvent(
            hook=hook, change=kind, node_id=node.id, heading=node.heading, file=node.file,
            old=change.old.text if change.old is not None else None,
            new=change.new.text if change.new is not None else None,
            source=change.source, old_node=change.old, new_node=change.new,
        )
        with self._lock:
            handlers = list(self._handlers.get(hook, []))
        if not handlers:
            log.info("hook %s on %r (%s): no handler registered", hook, node.heading, kind)
            return []
        results = [_run(handler, event) for handler in handlers]
        if self.events is not None:
            for result in results:
                level = "info" if result.ok and result.decision in (None, "allow") else "warning"
                self.events.record(Entry(
                    "hook", f"{hook} on {node.heading!r} ({kind}): "
                    f"{result.handler} {result.decision or ('ok' if result.ok else 'failed')}",
                    result.text, level, node.id, node.file))
        return results


def _run(handler: _Handler, event: HookEvent) -> HookResult:
    try:
        answer = handler.fn(event)
    except Exception as err:
        log.exception("hook %s: %s failed", event.hook, handler.name)
        decision = "deny" if handler.kind == "gate" else None  # a gate that crashes denies
        return HookResult(event.hook, handler.name, handler.kind, False, decision,
                          f"{type(err).__name__}: {err}")
    if handler.kind == "action":
        return HookResult(event.hook, handler.name, "action", True, None,
                          "" if answer is None else str(answer))
    decision, reason = _verdict(answer)
    return HookResult(event.hook, handler.name, "gate", True, decision, reason)


def _verdict(answer: Any) -> tuple[str, str]:
    if isinstance(answer, Verdict):
        return str(answer.decision), answer.reason
    if answer is True:
        return "allow", ""
    if answer is False or answer is None:  # a gate that cannot decide denies
        return "deny", "" if answer is False else "the gate gave no verdict"
    if isinstance(answer, str):
        return "deny", answer  # a gate's string is its reason to refuse
    return "deny", f"the gate answered {answer!r}, which is not a verdict"
