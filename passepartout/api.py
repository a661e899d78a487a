"""What a skill imports: the one module of the ``passepartout`` package a person's skill
may use (besides the standard-library modules the vetting allows, see
:mod:`passepartout.engine.vetting`).

``defskill`` declares a skill; ``Prompt``, ``Action``, ``Verdict`` and ``Signal`` are
what its trigger, prompt, reflex and gate take and return; ``make_tool``/``tool`` turn
a typed function into a tool (every call of it passes the gates).  ``host()`` gives
every skill, shipped or a person's, its :class:`SkillHost`: the read calls (status, the
catalog, the tool names) and the registrations (hook handlers and reflexes of the
memex; channels, actuators, loop hook points and services for the shipped skills, which
alone reach the agent).  A skill file's top level only declares: what it registers
applies when the engine starts it and is taken back when the engine stops it.
"""

from passepartout.engine import defskill, host, require
from passepartout.engine.skillhost import SkillHost
from passepartout.loop import Action, ApprovalRequest, Prompt, Thought, Verdict
from passepartout.loop.events import Notice
from passepartout.signals import Keyword, Signal
from passepartout.tools import Tool, make_tool, tool

__all__ = [
    "Action",
    "ApprovalRequest",
    "Keyword",
    "Notice",
    "Prompt",
    "Signal",
    "SkillHost",
    "Thought",
    "Tool",
    "Verdict",
    "defskill",
    "host",
    "make_tool",
    "require",
    "tool",
]
