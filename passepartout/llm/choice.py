"""What the person chose for one chat turn: a model, a tier, and a preset's fields.

Emacs sends them in the turn's context (``:model``, ``:tier``, ``:system``, ``:tools``,
``:budget``).  They can only narrow what the configuration allows: the system text is
escaped and appended after the instructions, the tool list filters the tools offered
(the gates still decide every call), and the budget caps this turn's spend below the
session's and the headings' caps.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.org.escape import org_escape

log = logging.getLogger(__name__)

CHOSEN_TIERS = ("cognition", "reasoning")
SYSTEM_MAX = 4000  # a preset's addition is a few lines, not a second prompt


@dataclass(frozen=True)
class TurnChoice:
    """The fields of one turn's meta that steer the model layer."""

    model: str | None = None
    tier: str | None = None
    system: str | None = None
    tools: frozenset[str] | None = None  # None: every offered tool
    budget: float | None = None

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> TurnChoice:
        """Read and check the fields; a malformed one is a :class:`ProtocolError`."""
        return cls(model=_text(meta, "model"), tier=_tier(meta), system=_system(meta),
                   tools=_tools(meta), budget=_budget(meta))

    def system_text(self) -> list[str]:
        """The preset's addition to the system prompt, escaped, or nothing."""
        if not self.system:
            return []
        return ["The person's preset for this turn adds:\n"
                + org_escape(self.system[:SYSTEM_MAX])]

    def allows(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


def _text(meta: Mapping[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ProtocolError(f":{key} must be a string")
    return value.strip() or None


def _tier(meta: Mapping[str, Any]) -> str | None:
    tier = _text(meta, "tier")
    if tier == "reflex":  # a reflex job's own tier: no model is asked, nothing to choose
        return None
    if tier is not None and tier not in CHOSEN_TIERS:
        raise ProtocolError(f":tier must be one of {', '.join(CHOSEN_TIERS)}, not {tier!r}")
    return tier


def _system(meta: Mapping[str, Any]) -> str | None:
    return _text(meta, "system")


def _tools(meta: Mapping[str, Any]) -> frozenset[str] | None:
    value = meta.get("tools")
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise ProtocolError(":tools must be a list of tool names")
    return frozenset(str(t) for t in value)


def _budget(meta: Mapping[str, Any]) -> float | None:
    value = meta.get("budget")
    if value is None or value == "":
        return None
    if isinstance(value, str):
        from passepartout.llm.budget import parse_amount

        try:
            value = parse_amount(value)
        except ValueError as err:
            raise ProtocolError(f":budget: {err}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ProtocolError(":budget must be a non-negative amount in USD")
    return float(value)
