"""What the loop tells a face (Emacs, the terminal, the event log): typed events.

Each event is a small frozen value; a face matches on its class, so a new event is a
type error in every face that forgets it, not a string that silently falls through.
:class:`Channel` is what every face implements: it is shown the events of the
sessions it owns and asked their approvals.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from passepartout.loop.actions import ApprovalRequest
    from passepartout.signals import Signal


@dataclass(frozen=True)
class Chunk:
    """A piece of the model's reply, as it streams."""

    kind: ClassVar[str] = "chunk"
    text: str


@dataclass(frozen=True)
class Reply:
    """A whole reply; ``streamed`` when its chunks were already shown."""

    kind: ClassVar[str] = "reply"
    text: str
    streamed: bool = False


@dataclass(frozen=True)
class ToolCall:
    """A tool about to run (it passed the gates)."""

    kind: ClassVar[str] = "tool"
    name: str
    args: dict[str, Any]
    call_id: str | None = None


@dataclass(frozen=True)
class ToolRequested:
    """The model asked for a tool the client offered: the client runs it, never the
    agent (``arguments`` as the model wrote them, JSON text)."""

    kind: ClassVar[str] = "client-tool"
    name: str
    arguments: str
    call_id: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What a tool returned, or why it failed."""

    kind: ClassVar[str] = "tool-result"
    name: str
    ok: bool
    output: str
    call_id: str | None = None


@dataclass(frozen=True)
class Denied:
    """A proposal refused by the gates, or sent to a Flight Plan."""

    kind: ClassVar[str] = "denied"
    action: str
    reason: str
    flightplan: str | None = None


@dataclass(frozen=True)
class ApprovalAsked:
    """A proposal the gates want the person to confirm (the channel's approve asks)."""

    kind: ClassVar[str] = "approval"
    action: str
    reason: str


@dataclass(frozen=True)
class ApprovalAnswered:
    """How the person answered an approval (the face that asked showed it already; it
    is kept so that a resumed chat shows it too): ``description`` as they were asked,
    ``action`` the action described, ``call_id`` the model's call it was about."""

    kind: ClassVar[str] = "approval-answered"
    action: str
    description: str
    granted: bool
    always: bool = False
    by: str = ""
    reason: str = ""
    call_id: str | None = None


@dataclass(frozen=True)
class Error:
    """Something went wrong in the turn, said to the person."""

    kind: ClassVar[str] = "error"
    code: str
    message: str


@dataclass(frozen=True)
class Notice:
    """A word to the person outside the reply (a model fallback, a background result)."""

    kind: ClassVar[str] = "notice"
    text: str
    level: str = "info"


@dataclass(frozen=True)
class Done:
    """The turn ended."""

    kind: ClassVar[str] = "done"
    cancelled: bool = False


Event = (Chunk | Reply | ToolCall | ToolRequested | ToolResult | Denied | ApprovalAsked
         | ApprovalAnswered | Error | Notice | Done)

Emit = Callable[[Event], None]
"""How a stage of one turn says something (the signal is already bound)."""


class Channel(Protocol):
    """A face: where a session's events are shown and its approvals asked."""

    def send(self, signal: Signal, event: Event) -> None: ...

    def approve(self, request: ApprovalRequest) -> bool: ...


def fields(event: Event) -> dict[str, Any]:
    """The event's fields as a dict (for logs and tests)."""
    return {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}


def map_values(event: Event, fn: Callable[[Any], Any]) -> Event:
    """The same event with every field passed through ``fn`` (masking secrets)."""
    changed = {name: fn(value) for name, value in fields(event).items()}
    return dataclasses.replace(event, **changed)
