"""The text of one run's replies, gathered until its ``Done``: what a skill that
started a prompt (a hook handler, the scribe) is handed at the end."""

from __future__ import annotations

from dataclasses import dataclass, field

from passepartout.loop.events import Done, Error, Event, Reply


@dataclass
class ReplyText:
    """The replies (and errors) of one run so far."""

    parts: list[str] = field(default_factory=list)

    def take(self, event: Event) -> Done | None:
        """Keep what ``event`` says; the ``Done`` when it ends the run."""
        if isinstance(event, Reply):
            self.parts.append(event.text)
        elif isinstance(event, Error):
            self.parts.append(f"error: {event.message}")
        return event if isinstance(event, Done) else None

    @property
    def text(self) -> str:
        return "\n\n".join(t for t in self.parts if t).strip()

    def answer(self, done: Done) -> str | None:
        """The reply, or None when the run was cancelled, said nothing or failed."""
        text = self.text
        return None if done.cancelled or not text or text.startswith("error:") else text
