"""The metabolic loop: Perceive -> Reason -> Act (seed 001)."""

from passepartout.loop.actions import (
    Action,
    ApprovalRequest,
    Approver,
    Prompt,
    Think,
    Thought,
    Verdict,
)
from passepartout.loop.core import MAX_DEPTH, AbortCycle, Loop, Recovery, SkipSignal, UseFallback
from passepartout.loop.stimuli import Stimuli

__all__ = [
    "MAX_DEPTH",
    "AbortCycle",
    "Action",
    "ApprovalRequest",
    "Approver",
    "Loop",
    "Prompt",
    "Recovery",
    "SkipSignal",
    "Stimuli",
    "Think",
    "Thought",
    "UseFallback",
    "Verdict",
]
