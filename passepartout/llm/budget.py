"""Spending caps, checked before a call is sent (the call that would pass a cap is not
made).

PASSEPARTOUT_BUDGET_USD caps a session.  A ``:BUDGET:`` property on an org heading caps
everything booked on that heading's subtree: the jobs and chats that served it or any
heading below it.  The estimate of a call is its input tokens at the model's input price
plus the expected output at the output price.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from passepartout.errors import BudgetError
from passepartout.llm.ledger import Ledger

log = logging.getLogger(__name__)

BUDGET_PROPERTY = "BUDGET"
_AMOUNT = re.compile(r"^\s*(?:\$|usd)?\s*(\d+(?:\.\d+)?)\s*(?:\$|usd)?\s*$", re.IGNORECASE)
MAX_SUBTREE = 50_000  # headings visited to total a subtree's spend


def parse_amount(text: str) -> float:
    """``"5"``, ``"$5.50"`` or ``"2 USD"`` as a number of dollars."""
    match = _AMOUNT.match(text or "")
    if match is None:
        raise ValueError(f"not an amount in USD: {text!r}")
    return float(match.group(1))


@dataclass(frozen=True)
class HeadingCap:
    """The nearest ``:BUDGET:`` at or above a heading."""

    heading: str
    title: str
    cap: float


class Budgets:
    """The caps of one agent; ``memory`` returns the memory store when there is one."""

    def __init__(
        self,
        ledger: Ledger,
        session_cap: float | None,
        memory: Callable[[], Any] | None = None,
    ) -> None:
        self.ledger = ledger
        self.session_cap = session_cap
        self.memory = memory or (lambda: None)

    def check(self, *, session: str | None, heading: str | None, estimate: float) -> None:
        """Raise :class:`BudgetError` when spending ``estimate`` more would pass a cap."""
        if estimate <= 0:
            return
        if self.session_cap is not None and session is not None:
            spent = self.ledger.session_total(session)
            remaining = self.session_cap - spent
            if estimate > remaining:
                raise BudgetError(
                    f"Budget reached: this session has spent ${spent:.4f} of its "
                    f"${self.session_cap:.4f} (PASSEPARTOUT_BUDGET_USD); the next call "
                    f"would cost about ${estimate:.4f}, so it was not sent.",
                    remaining=max(remaining, 0.0),
                    requested=estimate,
                )
        if heading:
            self._check_heading(heading, estimate)

    def _check_heading(self, heading: str, estimate: float) -> None:
        store = self.memory()
        if store is None:
            return
        cap = self.heading_cap(heading, store)
        if cap is None:
            return
        spent = self.ledger.headings_total(subtree_ids(store, cap.heading))
        remaining = cap.cap - spent
        if estimate > remaining:
            raise BudgetError(
                f"Budget reached: the subtree of {cap.title!r} has spent ${spent:.4f} of its "
                f":BUDGET: ${cap.cap:.4f}; the next call would cost about ${estimate:.4f}, "
                "so it was not sent.",
                remaining=max(remaining, 0.0),
                requested=estimate,
                heading=cap.heading,
            )

    def heading_cap(self, heading: str, store: Any) -> HeadingCap | None:
        """The cap that governs ``heading``: its own ``:BUDGET:`` or its nearest ancestor's."""
        node = store.get(heading)
        if node is None:
            return None
        chain = [node, *reversed(store.ancestors(heading))]
        for candidate in chain:
            raw = candidate.properties.get(BUDGET_PROPERTY)
            if raw is None:
                continue
            try:
                return HeadingCap(candidate.id, candidate.title, parse_amount(raw))
            except ValueError:
                raise BudgetError(
                    f"The :BUDGET: of heading {candidate.title!r} is {raw!r}, not an amount "
                    "in USD (e.g. 5 or $2.50); fix it in the org file.",
                    remaining=0.0,
                    requested=0.0,
                ) from None
        return None


def subtree_ids(store: Any, root: str) -> list[str]:
    """``root`` and every heading below it (breadth first, bounded)."""
    ids = [root]
    frontier = [root]
    while frontier and len(ids) < MAX_SUBTREE:
        children = [c.id for parent in frontier for c in store.children(parent)]
        ids.extend(children)
        frontier = children
    return ids
