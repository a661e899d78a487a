"""Every gate, in priority order, on every proposal.  Deny beats ask beats allow.

A gate that raises, returns something that is not a Verdict, or runs past its time
budget denies: a safety check that cannot decide is a no.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passepartout.loop.actions import Action, Verdict
from passepartout.signals import Signal

if TYPE_CHECKING:
    from passepartout.engine.registry import Registry

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

    def __init__(self, registry: Registry, *, timeout: float = 2.0) -> None:
        self.registry = registry
        self.timeout = timeout
        self.audit: AuditSink | None = None

    def evaluate(self, action: Action, signal: Signal) -> GateResult:
        verdicts: list[Verdict] = []
        worst = "allow"
        for skill in self.registry.gates:
            gate = skill.gate
            assert gate is not None
            started = time.perf_counter()
            try:
                verdict = gate(action, signal)
            except Exception as err:
                log.error("gate %s crashed on %s: %s", skill.name, action.describe(), err)
                verdict = Verdict.deny(f"the gate failed ({type(err).__name__}: {err})")
            else:
                if not isinstance(verdict, Verdict):
                    verdict = Verdict.deny(f"the gate gave no verdict ({verdict!r})")
                elif time.perf_counter() - started > self.timeout:
                    verdict = Verdict.deny(f"the gate took longer than {self.timeout:g} s")
            verdict = Verdict(verdict.decision, verdict.reason, skill.name)
            verdicts.append(verdict)
            if _RANK[verdict.decision] > _RANK[worst]:
                worst = verdict.decision
        result = GateResult(worst, tuple(verdicts))
        if self.audit is not None:
            try:
                self.audit(action, signal, result)
            except Exception as err:  # the audit must never let an action through by failing
                log.error("audit log failed: %s", err)
                return GateResult("deny", (*verdicts, Verdict("deny", "audit failed", "audit")))
        return result
