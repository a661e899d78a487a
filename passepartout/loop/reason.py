"""Stage 2: the owning skill proposes (its reflex, or the model through ``think``);
every gate disposes; a refusal goes back as a trace for self-correction, at most 3 times.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from passepartout.errors import GateError, PassepartoutError, PipelineError, SkillError
from passepartout.loop.actions import (
    Action,
    Answer,
    ApprovalRequest,
    Approver,
    Prompt,
    Think,
    Thought,
)
from passepartout.loop.events import ApprovalAnswered, ApprovalAsked, Denied, Emit
from passepartout.loop.gates import GatePipeline, GateResult
from passepartout.signals import Signal

if TYPE_CHECKING:
    from passepartout.engine.registry import Registry
    from passepartout.engine.skill import Skill

log = logging.getLogger(__name__)

MAX_RETRIES = 3


class Reasoner:
    def __init__(self, registry: Registry, gates: GatePipeline, think: Think) -> None:
        self.registry = registry
        self.gates = gates
        self.think = think
        self.approver: Approver | None = None
        # Why no skill may answer (the skills that did not load), for the person waiting.
        self.unanswered: Callable[[], str] = lambda: ""

    def reason(self, signal: Signal, emit: Emit, cancel: threading.Event) -> list[Action]:
        skill = self.registry.triggered(signal)
        if skill is None:
            if signal.sensor == "user-input" and signal.turn.turn_id is not None:
                why = self.unanswered()
                raise SkillError("no skill answers a chat" + (f": {why}" if why else "")
                                 + " (`passepartout doctor` says more)")
            return []
        trace: list[str] = []
        refused: list[tuple[Action, GateResult]] = []
        for _attempt in range(MAX_RETRIES + 1):
            actions = self._propose(skill, signal, trace, emit, cancel)
            if cancel.is_set():
                return []
            refused = []
            approved: list[Action] = []
            for action in actions:
                result = self.gates.evaluate(action, signal)
                if result.decision == "allow" or (
                    result.decision == "ask" and self._ask(action, result, signal, emit)
                ):
                    approved.append(action)
                else:
                    refused.append((action, result))
            if not refused:
                return approved
            for action, result in refused:
                why = "; ".join(result.reasons) or result.decision
                emit(Denied(action.describe(), why))
                trace.append(f"{action.describe()} was refused ({result.decision}): {why}")
            if skill.prompt is None or skill.reflex is not None:
                break  # a deterministic reflex would propose the same thing again
        action, result = refused[0]
        raise GateError(
            f"stopped {action.describe()}: {'; '.join(result.reasons) or result.decision}",
            gate_name=result.verdicts[-1].gate if result.verdicts else "",
            rejected_action=action,
            signal=signal,
        )

    def _propose(
        self,
        skill: Skill,
        signal: Signal,
        trace: list[str],
        emit: Emit,
        cancel: threading.Event,
    ) -> list[Action]:
        if skill.reflex is not None:
            proposed = _call(skill, "reflex", skill.reflex, signal)
            return _as_actions(proposed, skill)
        assert skill.prompt is not None
        prompt = _call(skill, "prompt", skill.prompt, signal)
        if isinstance(prompt, str):
            prompt = Prompt(prompt)
        if not isinstance(prompt, Prompt):
            raise PipelineError(f"skill {skill.name} built no prompt", skill=skill.name)
        thought = Thought(
            prompt=prompt,
            signal=signal,
            system=self.registry.augments(signal),
            gate_trace=list(trace),
            emit=emit,
            cancel=cancel,
        )
        return _as_actions(self.think(thought), skill)

    def _ask(self, action: Action, result: GateResult, signal: Signal, emit: Emit) -> bool:
        if self.approver is None:
            return False
        heard: list[Answer] = []
        request = ApprovalRequest(action, result.reasons, signal, heard=heard.append)
        emit(ApprovalAsked(action.describe(), "; ".join(result.reasons)))
        try:
            granted = self.approver(request) is True
        except Exception as err:  # an approval that fails is a denial
            log.warning("approval of %s failed: %s", action.describe(), err)
            granted = False
        log.info("approval of %s: %s", action.describe(), "granted" if granted else "denied")
        if heard:  # a face asked the person: how they answered is kept with the turn
            answer = heard[0]
            if answer.granted != granted:  # the face's yes came too late
                answer = Answer(granted, by="", reason="no answer in time")
            emit(ApprovalAnswered(action.describe(), request.describe(), granted,
                                  answer.always, answer.by,
                                  "" if granted else answer.reason or "refused",
                                  action.call_id))
        return granted


def _call(skill: Skill, stage: str, fn: Callable[[Signal], Any], signal: Signal) -> Any:
    try:
        return fn(signal)
    except PassepartoutError:
        raise
    except Exception as err:
        raise PipelineError(
            f"skill {skill.name} failed in its {stage}: {type(err).__name__}: {err}",
            skill=skill.name,
            stage=stage,
        ) from err


def _as_actions(proposed: Any, skill: Skill) -> list[Action]:
    if proposed is None:
        return []
    if isinstance(proposed, Action):
        return [proposed]
    if isinstance(proposed, list) and all(isinstance(a, Action) for a in proposed):
        return proposed
    raise PipelineError(f"skill {skill.name} proposed {proposed!r}, not actions", skill=skill.name)
