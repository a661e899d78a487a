"""Front ends of the agent: where a session's events are shown and approvals asked."""

from passepartout.server.focus import Focus, FocusHolder
from passepartout.server.peer import EmacsChannel, Peer

__all__ = ["EmacsChannel", "Focus", "FocusHolder", "Peer"]
