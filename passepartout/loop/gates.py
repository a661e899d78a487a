"""Every gate, in priority order, on every proposal.  Deny beats ask beats allow.

A gate that raises, returns something that is not a Verdict, or runs past its time
budget denies: a safety check that cannot decide is a no.  For a gate of any skill but
the shipped ones (pinned by hash, the project's own code), the budget is a deadline kept
while the gate runs, on a worker thread of the lane: a gate that hangs is cut off at it
and the action refused.  A shipped gate runs on the lane itself, which costs no
hand-over between threads on every proposal, and a verdict it gives late is a denial.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
        self._local = threading.local()

    def evaluate(self, action: Action, signal: Signal) -> GateResult:
        verdicts: list[Verdict] = []
        for skill in self.registry.gates:
            if skill.gate is None:
                continue
            if skill.shipped:
                verdicts.append(self._inline(skill.name, skill.gate, action, signal))
            else:
                verdicts.append(self._guarded(skill.name, skill.gate, action, signal))
        worst = max((v.decision for v in verdicts), key=_RANK.__getitem__, default="allow")
        result = GateResult(worst, tuple(verdicts))
        for audit in self.hooks.chain(GATE_AUDIT):
            try:
                audit(action, signal, result)
            except Exception as err:  # the audit must never let an action through by failing
                log.error("audit log failed: %s", err)
                return GateResult("deny", (*verdicts, Verdict("deny", "audit failed", "audit")))
        return result

    def _inline(self, name: str, gate: Gate, action: Action, signal: Signal) -> Verdict:
        """A shipped gate, on the lane itself (a hand-over to another thread costs tens
        of microseconds, on every proposal); past its deadline its verdict is a denial."""
        started = time.monotonic()
        verdict = _judge(name, gate, action, signal)
        if time.monotonic() - started > self.timeout:
            log.error("gate %s took longer than %g s on %s", name, self.timeout,
                      action.describe())
            return Verdict("deny", f"the gate took longer than {self.timeout:g} s", name)
        return verdict

    def _guarded(self, name: str, gate: Gate, action: Action, signal: Signal) -> Verdict:
        """Another skill's gate, on this lane's gate worker, cut off at its deadline:
        the action is refused then, and the worker, stuck in the gate, is left to
        finish on its own (its verdict is ignored)."""
        context = contextvars.copy_context()  # a gate sees the caller's context
        job = _Job(lambda: context.run(_judge, name, gate, action, signal))
        self._worker().submit(job)
        if job.done.wait(self.timeout):
            return job.verdict or Verdict("deny", "the gate gave no verdict", name)
        self._local.worker = None  # stuck in that gate: the next proposal gets another
        log.error("gate %s did not decide on %s within %g s", name, action.describe(),
                  self.timeout)
        return Verdict("deny", f"the gate took longer than {self.timeout:g} s", name)

    def _worker(self) -> _Worker:
        """This thread's gate worker: a thread of its own per lane, so that one lane's
        hung gate never holds another's proposal, reused from one gate to the next
        (starting a thread for each gate cost about 90 us)."""
        worker: _Worker | None = getattr(self._local, "worker", None)
        if worker is None or not worker.alive:
            worker = self._local.worker = _Worker(f"gates-{threading.current_thread().name}")
        return worker


@dataclass
class _Job:
    run: Callable[[], Verdict]
    done: threading.Event = field(default_factory=threading.Event)
    verdict: Verdict | None = None


def _judge(name: str, gate: Gate, action: Action, signal: Signal) -> Verdict:
    """One gate's verdict; a denial when it raises or gives no verdict."""
    try:
        verdict = gate(action, signal)
    except Exception as err:
        log.error("gate %s crashed on %s: %s", name, action.describe(), err)
        return Verdict("deny", f"the gate failed ({type(err).__name__}: {err})", name)
    if not isinstance(verdict, Verdict):
        return Verdict("deny", f"the gate gave no verdict ({verdict!r})", name)
    return Verdict(verdict.decision, verdict.reason, name)


class _Worker:
    """A daemon thread that runs gates one after another; it ends after a while idle."""

    IDLE = 60.0

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.alive = True
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def submit(self, job: _Job) -> None:
        with self._lock:
            if not self.alive:  # it ended just now: run this one on a fresh thread
                _Worker("gates-again").submit(job)
                return
            self._jobs.put(job)

    def _loop(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.IDLE)
            except queue.Empty:
                with self._lock:
                    if self._jobs.empty():
                        self.alive = False
                        return
                continue
            try:
                job.verdict = job.run()
            except Exception:  # _judge catches a gate's own errors; this is ours
                log.exception("the gate worker failed")
            job.done.set()
