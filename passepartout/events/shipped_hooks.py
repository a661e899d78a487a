"""The hook handlers shipped with passepartout: names a person can put in ``:HOOK:``
without writing a skill.

- ``verify-integrity``: the heading as it is now against the memory store's last
  snapshot (for a change made while the agent was down, the last one from before this
  start); a warning (events.org and a notification) when it changed outside the
  agent.
- ``prompt``: the heading's body is run as a prompt at its ``:TIER:`` (cognition
  unless set); the reply goes to events.org, or with ``:HOOK_OUTPUT: note`` also
  under the heading as a note.
- ``notify``: a notification in every attached client, and a line in events.org.
- ``snapshot``: a memory snapshot named after the heading.
- ``summarize``: the heading's subtree summarised at its ``:TIER:`` into ``:SUMMARY:``,
  or with ``:SUMMARY_OUTPUT: child`` into a child heading "Summary".

A handler decides; what it does is proposed (:class:`HookActions`), so every write,
notification and snapshot passes the gates.  An edit the agent made itself (an
:class:`Echoes` entry) fires none of them.  A prompt of a heading in a private
subtree goes to the local model only (the dispatcher marks it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.events.headingedit import locate, subtree, without_replies
from passepartout.events.hookact import Echoes, HookActions
from passepartout.events.hookreplies import HookReplies
from passepartout.events.hooks import HookEvent
from passepartout.events.jobs import OrgNode, Tier
from passepartout.org.eventlog import Entry, EventLog
from passepartout.security.privacy import DEFAULT_TAG, redact_private

log = logging.getLogger(__name__)

# name -> what it does (``passepartout hooks list`` prints these)
SHIPPED: dict[str, str] = {
    "verify-integrity": "warn when the heading changed outside the agent (memory snapshot)",
    "prompt": "run the heading's body as a prompt at its :TIER:; reply to events or a note",
    "notify": "a notification in every attached client, and a line in events.org",
    "snapshot": "take a memory snapshot",
    "summarize": "summarise the subtree into :SUMMARY: or a child heading",
}
MODEL_HOOKS = frozenset({"prompt", "summarize"})  # they run the heading's tier themselves

SUMMARY_PROMPT = ("Summarize the following org subtree in at most three sentences. "
                  "Answer with the summary only.\n\n")

RunPrompt = Callable[[str, str, Tier, str], bool]  # (node id, prompt, tier, file)


@dataclass
class HookTools:
    """What the handlers reach: the loop (through proposals), the model, memory."""

    actions: HookActions
    replies: HookReplies
    run_prompt: RunPrompt
    events: EventLog
    memory: Callable[[], Any]  # the memory store (waited for while it opens), or None
    memex_dir: Path
    echoes: Echoes
    private_tag: str = DEFAULT_TAG
    started: float = field(default_factory=time.time)  # this start (memory imports after)


class ShippedHooks:
    """The five shipped handlers, over one :class:`HookTools`."""

    def __init__(self, tools: HookTools) -> None:
        self.t = tools

    def handlers(self) -> dict[str, Callable[[HookEvent], str]]:
        return {
            "verify-integrity": self.verify_integrity,
            "prompt": self.prompt,
            "notify": self.notify,
            "snapshot": self.snapshot,
            "summarize": self.summarize,
        }

    # -- the handlers ----------------------------------------------------------------

    def verify_integrity(self, event: HookEvent) -> str:
        node = event.new_node
        if node is None:
            return "removed: nothing to verify"
        if self.t.echoes.ours(node):
            return "the agent's own edit"
        store = self.t.memory()
        if store is None:
            return "memory is not open: not verified"
        relpath = _relative(node.file, self.t.memex_dir)
        if relpath is None:
            return "outside the memex: memory holds no copy to verify against"
        now = _memory_node(Path(node.file).read_text(encoding="utf-8"), relpath, node)
        if now is None:
            return "the heading is no longer in its file"
        # The snapshots from before the change (the snapshot hook may have just made
        # one of the changed heading, which would read as intact).
        snapshots = [s for s in store.snapshots() if s.created < event.at]
        if event.source == "scan":
            # Changed while the agent was down: this start's import has taken the new
            # text into memory, so the copy to compare with is the one from before.
            snapshots = [s for s in snapshots if s.created < self.t.started]
            if not snapshots:
                return "changed while the agent was down; no memory snapshot from before " \
                       "this start to verify against"
        if snapshots:
            from passepartout.memory.store import node_items

            was = _find(node_items(store, snapshots[0].root), now)
            against = f"memory snapshot #{snapshots[0].seq}"
        else:
            was, against = store.get(now.id), "memory"
        if was is None:
            return f"{against} holds no copy of it yet"
        before, after = _digest(was), _digest(now)
        if before == after:
            return f"intact (sha256 {after[:12]} as in {against})"
        text = (f"{node.heading!r} in {relpath} changed outside the agent: {against} "
                f"has sha256 {before[:12]}, the file {after[:12]}")
        self._propose(event, node, "hook-notify",
                      {"level": "warning", "text": text, "file": node.file})
        return text

    def prompt(self, event: HookEvent) -> str:
        node = event.new_node
        if node is None or self.t.echoes.ours(node):
            return "" if node is None else "the agent's own edit"
        tier = self._tier(node)
        if tier is None:
            return "the reflex tier runs no model: set :TIER: cognition or reasoning"
        output = node.properties.get("HOOK_OUTPUT", "events").strip().lower() or "events"
        if output not in ("events", "note"):
            return f":HOOK_OUTPUT: is note or events, not {output!r}: nothing run"
        text = f"{node.heading}\n\n{without_replies(node.body)}".strip()
        on_reply = None
        if output == "note":
            def on_reply(reply: str) -> None:
                self._propose(event, node, "hook-write",
                              {"file": node.file, "node": node.id, "mode": "note",
                               "text": reply})
        return self._ask(node, text, tier, on_reply, f"the reply goes to {output}")

    def notify(self, event: HookEvent) -> str:
        node = event.new_node or event.old_node
        if node is None or self.t.echoes.ours(event.new_node):
            return "" if node is None else "the agent's own edit"
        text = f"{event.heading!r} {event.change} ({event.source})"
        self._propose(event, node, "hook-notify",
                      {"level": "info", "text": text, "file": node.file})
        return "notification proposed"

    def snapshot(self, event: HookEvent) -> str:
        node = event.new_node or event.old_node
        if node is None or self.t.echoes.ours(event.new_node):
            return "" if node is None else "the agent's own edit"
        label = f"hook: {event.heading} {event.change}"
        self._propose(event, node, "hook-snapshot", {"label": label})
        return "snapshot proposed"

    def summarize(self, event: HookEvent) -> str:
        node = event.new_node
        if node is None or self.t.echoes.ours(node):
            return "" if node is None else "the agent's own edit"
        tier = self._tier(node)
        if tier is None:
            return "the reflex tier runs no model: set :TIER: cognition or reasoning"
        where = node.properties.get("SUMMARY_OUTPUT", "property").strip().lower() or "property"
        if where not in ("property", "child"):
            return f":SUMMARY_OUTPUT: is property or child, not {where!r}: nothing run"
        text = Path(node.file).read_text(encoding="utf-8")
        tree = subtree(text, locate(text, node.file, node.id))
        # What the summary is made of: the subtree, less its old summary and the
        # private subtrees under it (a private heading's prompt stays local anyway).
        tree = "\n".join(line for line in tree.split("\n")
                         if not line.strip().upper().startswith(":SUMMARY:"))
        tree = redact_private(tree, self.t.private_tag)

        def on_reply(reply: str) -> None:
            args: dict[str, object] = {"file": node.file, "node": node.id, "text": reply}
            args.update({"mode": "property", "key": "SUMMARY"} if where == "property"
                        else {"mode": "child", "key": "Summary"})
            self._propose(event, node, "hook-write", args)

        return self._ask(node, SUMMARY_PROMPT + tree, tier, on_reply,
                         f"the summary goes to {'SUMMARY' if where == 'property' else 'a child'}")

    # -- helpers ---------------------------------------------------------------------

    def _tier(self, node: OrgNode) -> Tier | None:
        tier = Tier.parse(node.properties.get("TIER") or "cognition")
        return None if tier is Tier.REFLEX else tier

    def _ask(self, node: OrgNode, prompt: str, tier: Tier,
             on_reply: Callable[[str], None] | None, where: str) -> str:
        if on_reply is not None:
            self.t.replies.expect(node.id, on_reply)
        if not self.t.run_prompt(node.id, prompt, tier, node.file):
            if on_reply is not None:
                self.t.replies.forget(node.id)
            return "the agent takes no input: not run"
        return f"asked the {tier.value} model; {where}"

    def _propose(self, event: HookEvent, node: OrgNode, tool: str,
                 args: dict[str, object]) -> None:
        if not self.t.actions.propose(event.hook, node, tool, args):
            self.t.events.record(Entry("hook", f"{event.hook} on {node.heading!r}: "
                                       f"{tool} not proposed", "the agent takes no input",
                                       "warning", node.id, node.file))


def _relative(file: str, memex: Path) -> str | None:
    try:
        return Path(file).resolve().relative_to(memex.resolve()).as_posix()
    except ValueError:
        return None


def _memory_node(text: str, relpath: str, node: OrgNode) -> Any:
    from passepartout.memory.orgimport import parse_org_text

    return _find(parse_org_text(text, relpath), node)


def _find(nodes: Any, want: Any) -> Any:
    """The memory node with ``want``'s id, else the first with its title."""
    by_title = None
    title = getattr(want, "title", None) or getattr(want, "heading", None)
    for candidate in nodes:
        if candidate.id == want.id:
            return candidate
        if by_title is None and candidate.title == title:
            by_title = candidate
    return by_title


def _digest(node: Any) -> str:
    """A memory node's content, without the times the store stamps on it."""
    fields = [node.title, node.todo, list(node.tags), sorted(dict(node.properties).items()),
              node.body.strip(), node.planning]
    return hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()
