"""What a skill author imports: one place for the names a skill needs."""

from passepartout.engine import defskill, host, require
from passepartout.loop import Action, ApprovalRequest, Prompt, Thought, Verdict
from passepartout.signals import Keyword, Signal
from passepartout.tools import Tool, make_tool, tool

__all__ = [
    "Action",
    "ApprovalRequest",
    "Keyword",
    "Prompt",
    "Signal",
    "Thought",
    "Tool",
    "Verdict",
    "defskill",
    "host",
    "make_tool",
    "require",
    "tool",
]
