"""Front ends of the agent: where a session's events are shown and approvals asked."""

from passepartout.server.focus import Focus, FocusHolder
from passepartout.server.peer import Peer
from passepartout.server.peer import PeerChannel as EmacsChannel

__all__ = ["EmacsChannel", "Focus", "FocusHolder", "Peer"]
