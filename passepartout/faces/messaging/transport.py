"""What a messaging face receives from a service, and what it asks of one.

A transport speaks one protocol (the Bot API, signal-cli's JSON-RPC) and nothing else:
who may talk, sessions and approvals are :mod:`passepartout.faces.messaging.relay`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from passepartout.errors import PassepartoutError


class TransportError(PassepartoutError):
    """The service refused a call or could not be reached (never holds a token)."""

    kind = "messaging-error"


@dataclass(frozen=True)
class Message:
    """A text from ``sender`` in ``chat`` (the same for a one-to-one chat)."""

    chat: str
    sender: str
    text: str
    sent: float | None = None  # when it was sent (Unix time), when the transport says


@dataclass(frozen=True)
class Answer:
    """A press of Allow or Deny under approval ``number`` (Telegram's buttons);
    ``ref`` is what the transport needs to acknowledge it."""

    chat: str
    sender: str
    number: int
    yes: bool
    ref: tuple[str, ...] = ()


Incoming = Message | Answer


class Transport(Protocol):
    """One messaging service, as a face of the daemon uses it."""

    name: str

    def receive(self, stop: threading.Event) -> Iterator[Incoming]:
        """What arrives, until ``stop`` is set; a failure of the service is retried
        inside (a transport never ends the face for a dropped connection)."""
        ...

    def send(self, chat: str, text: str) -> None:
        """A message (already cut to the service's size)."""
        ...

    def working(self, chat: str) -> None:
        """Show that a reply is on its way ("typing..."); a failure is only logged."""
        ...

    def ask(self, chat: str, number: int, question: str) -> None:
        """Ask approval ``number``: buttons, or a question answered ``yes N``."""
        ...

    def answered(self, answer: Answer, note: str, *, edit: bool = True) -> None:
        """Acknowledge a button press with ``note``, and with ``edit`` put it in place
        of the question (its buttons gone); a transport without buttons does nothing:
        the relay replies in the chat itself."""
        ...

    def close(self) -> None: ...
