"""What the loop passes between its stages: proposals, verdicts, and thinking requests."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from passepartout.loop.events import Emit
from passepartout.signals import Signal

Decision = Literal["allow", "ask", "deny"]


@dataclass
class Action:
    """A proposal: a reply to the chat, a tool call, or a verb for another actuator."""

    target: str
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    call_id: str | None = None

    def canonical(self) -> str:
        """A stable text of exactly what would run (approvals are bound to its hash)."""
        return json.dumps(
            {"target": self.target, "name": self.name, "args": self.args, "text": self.text},
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )

    def digest(self) -> str:
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()

    def describe(self) -> str:
        if self.target == "tool":
            args = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
            return f"{self.name}({args})"
        if self.target == "chat":
            return f"reply: {self.text[:80]!r}"
        if self.target == "job" and self.args.get("job"):
            return f"{self.target}:{self.name}: {self.args['job']}"  # what is approved
        return f"{self.target}:{self.name}"


@dataclass(frozen=True)
class Verdict:
    """A gate's decision on one action, and why."""

    decision: Decision
    reason: str = ""
    gate: str = ""

    @classmethod
    def allow(cls, reason: str = "") -> Verdict:
        return cls("allow", reason)

    @classmethod
    def ask(cls, reason: str) -> Verdict:
        return cls("ask", reason)

    @classmethod
    def deny(cls, reason: str) -> Verdict:
        return cls("deny", reason)


@dataclass
class Prompt:
    """What a skill asks of the model: the text, and the tier that should answer."""

    text: str
    tier: str = "reasoning"
    use_tools: bool = True


@dataclass
class Thought:
    """Everything ``think`` needs for one proposal."""

    prompt: Prompt
    signal: Signal
    system: list[str]
    gate_trace: list[str]
    emit: Emit
    cancel: threading.Event


Think = Callable[[Thought], list[Action]]
Actuator = Callable[[Action, Signal], Signal | None]


@dataclass(frozen=True)
class Answer:
    """How a face answered an approval: yes or no, kept as a standing grant
    (``always``) or once, ``by`` the face that answered ("" when nobody did), and
    ``reason``, why a no (refused, refused always, no answer in time)."""

    granted: bool
    always: bool = False
    by: str = ""
    reason: str = ""


@dataclass(frozen=True)
class ApprovalRequest:
    """An action a gate wants the person to confirm, with the reasons shown to them."""

    action: Action
    reasons: tuple[str, ...]
    signal: Signal
    timeout: float | None = None
    """Seconds the person has to answer (set by the approval path; a face never waits
    longer)."""
    heard: Callable[[Answer], None] | None = field(default=None, compare=False, repr=False)
    """Told how the face answered, when a face asked the person (the answer itself is
    what the approver returns)."""

    def describe(self) -> str:
        return f"{self.action.describe()} — {'; '.join(self.reasons)}"


Approver = Callable[[ApprovalRequest], bool]
