"""The host API: every point of the loop a skill may attach to, declared here, typed.

As simonw/llm declares its hook specifications in one module, each :class:`HookSpec`
below names a point, the type of function that fits it, and whether one function
serves it (the newest attached) or all of them do, in the order attached.  A plain
typed registry rather than pluggy: the points are few and most take exactly one
function, and a ``HookSpec[T]`` lets mypy check every ``attach`` and every call, which
pluggy's name-matched keyword calls cannot.  A skill attaches under its own name
(``owner``); attaching again replaces what that owner had there (a reload does not
stack wrappers), and :meth:`Hooks.detach` removes all of an owner's functions (its
``stop``).  Nothing outside this registry is replaced: the loop reads it on each use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from passepartout.loop.actions import Action, ApprovalRequest, Think

if TYPE_CHECKING:
    from passepartout.loop.events import Event
    from passepartout.loop.gates import GateResult
    from passepartout.signals import Signal

F = TypeVar("F")


@dataclass(frozen=True)
class HookSpec(Generic[F]):
    """One point of the loop: its name, what it is for, one function or a chain."""

    name: str
    doc: str
    chain: bool = False


THINK: HookSpec[Think] = HookSpec(
    "think", "The model: proposes the actions for a skill's prompt (the model layer).")
ROLLBACK: HookSpec[Callable[[], object]] = HookSpec(
    "rollback", "Puts memory back to its last snapshot after a crash mid-turn (memory).")
SHOWN_EVENT: HookSpec[Callable[[Event], Event]] = HookSpec(
    "shown-event", "Changes each event before any face sees it (masking secrets).",
    chain=True)
TOOL_FEEDBACK: HookSpec[Callable[[Signal], Signal]] = HookSpec(
    "tool-feedback", "Changes what an actuator feeds back to the model (masking).",
    chain=True)
BEFORE_ACTION: HookSpec[Callable[[Action, Signal], None]] = HookSpec(
    "before-action", "Runs before an action is carried out (a memory snapshot before a "
    "write); raising refuses it.", chain=True)
GATE_AUDIT: HookSpec[Callable[[Action, Signal, GateResult], None]] = HookSpec(
    "gate-audit", "Hears every combined gate decision (the audit log).", chain=True)
BACKGROUND_APPROVAL: HookSpec[Callable[[ApprovalRequest], bool]] = HookSpec(
    "background-approval",
    "Answers an approval nobody can be asked about now (a Flight Plan; else: no).")
APPROVAL_ANSWERED: HookSpec[Callable[[ApprovalRequest, bool], None]] = HookSpec(
    "approval-answered", "Hears each answer a person gave (audit, clearances).", chain=True)

SPECS: tuple[HookSpec[object], ...] = cast(
    "tuple[HookSpec[object], ...]",
    (THINK, ROLLBACK, SHOWN_EVENT, TOOL_FEEDBACK, BEFORE_ACTION, GATE_AUDIT, BACKGROUND_APPROVAL,
     APPROVAL_ANSWERED),
)


class Hooks:
    """What the skills attached, per point, in the order attached."""

    def __init__(self) -> None:
        self._attached: dict[str, list[tuple[str, object]]] = {s.name: [] for s in SPECS}
        self._lock = threading.Lock()

    def attach(self, spec: HookSpec[F], fn: F, *, owner: str) -> None:
        """Attach ``fn`` at ``spec`` for ``owner`` (replacing the owner's earlier one)."""
        if spec.name not in self._attached:
            raise ValueError(f"no hook point {spec.name!r}")
        with self._lock:
            kept = [(o, f) for o, f in self._attached[spec.name] if o != owner]
            self._attached[spec.name] = [*kept, (owner, fn)]

    def detach(self, owner: str) -> None:
        """Remove every function ``owner`` attached."""
        with self._lock:
            for name, attached in self._attached.items():
                self._attached[name] = [(o, f) for o, f in attached if o != owner]

    def one(self, spec: HookSpec[F]) -> F | None:
        """The newest function at a one-function point."""
        with self._lock:
            attached = self._attached[spec.name]
            return cast("F", attached[-1][1]) if attached else None

    def chain(self, spec: HookSpec[F]) -> list[F]:
        """Every function at a chained point, in the order attached."""
        with self._lock:
            return [cast("F", f) for _, f in self._attached[spec.name]]

    def owners(self, spec: HookSpec[F]) -> list[str]:
        with self._lock:
            return [o for o, _ in self._attached[spec.name]]
