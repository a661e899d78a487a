"""Every gate, in priority order, on every proposal.  Deny beats ask beats allow.

A gate that raises, returns something that is not a Verdict, or runs past its time
budget denies: a safety check that cannot decide is a no.  The budget is a deadline
kept while the gate runs: a gate that hangs is cut off at it, and the action refused.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from passepartout.loop.actions import Action, Verdict
from passepartout.loop.hooks import GATE_AUDIT, Hooks
from passepartout.signals import Signal

if TYPE_CHECKING:
    from passepartout.engine.registry import Registry
    from passepartout.engine.skill import Gate

log = logging.getLogger(__name__)

_RANK = {"allow": 0, "ask": 1, "deny": 2}

AuditSink = Callable[[Action, Signal, "GateResult"], None]


@dataclass(frozen=True)
class GateResult:
    """The combined decision and each gate's verdict that shaped it."""

    decision: str
    verdicts: tuple[Verdict, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(f"{v.gate}: {v.reason}" for v in self.verdicts if v.decision == self.decision)


class GatePipeline:
    """Runs the registry's gates on an action."""

    def __init__(self, registry: Registry, *, timeout: float = 2.0,
                 hooks: Hooks | None = None) -> None:
        self.registry = registry
        self.timeout = timeout
        self.hooks = hooks or Hooks()

    def evaluate(self, action: Action, signal: Signal) -> GateResult:
        verdicts: list[Verdict] = []
        worst = "allow"
        for skill in self.registry.gates:
            gate = skill.gate
            assert gate is not None
            verdict = self._run(skill.name, gate, action, signal)
            verdict = Verdict(verdict.decision, verdict.reason, skill.name)
            verdicts.append(verdict)
            if _RANK[verdict.decision] > _RANK[worst]:
                worst = verdict.decision
        result = GateResult(worst, tuple(verdicts))
        for audit in self.hooks.chain(GATE_AUDIT):
            try:
                audit(action, signal, result)
            except Exception as err:  # the audit must never let an action through by failing
                log.error("audit log failed: %s", err)
                return GateResult("deny", (*verdicts, Verdict("deny", "audit failed", "audit")))
        return result

    def _run(self, name: str, gate: Gate, action: Action, signal: Signal) -> Verdict:
        """The gate's verdict, or a denial when it fails, gives none or is not done by
        its deadline (it is then left to finish on its own; its verdict is ignored)."""
        outcome: list[Any] = []
        failure: list[BaseException] = []

        def run() -> None:
            try:
                outcome.append(gate(action, signal))
            except Exception as err:
                failure.append(err)

        context = contextvars.copy_context()  # a gate sees the caller's context
        worker = threading.Thread(target=context.run, args=(run,), name=f"gate-{name}",
                                  daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            log.error("gate %s did not decide on %s within %g s", name, action.describe(),
                      self.timeout)
            return Verdict.deny(f"the gate took longer than {self.timeout:g} s")
        if failure:
            err = failure[0]
            log.error("gate %s crashed on %s: %s", name, action.describe(), err)
            return Verdict.deny(f"the gate failed ({type(err).__name__}: {err})")
        verdict = outcome[0] if outcome else None
        if not isinstance(verdict, Verdict):
            return Verdict.deny(f"the gate gave no verdict ({verdict!r})")
        return verdict
