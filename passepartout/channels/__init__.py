"""Front ends of the agent: where a session's events are shown and approvals asked."""

from passepartout.channels.emacs import EmacsChannel, Peer
from passepartout.channels.focus import Focus, FocusHolder

__all__ = ["EmacsChannel", "Focus", "FocusHolder", "Peer"]
