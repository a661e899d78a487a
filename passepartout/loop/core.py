"""The loop itself: Perceive -> Reason -> Act until no feedback is left (seed 001).

Recoveries (the seeds' restarts) are exceptions a skill's error handler may return:
skip the signal, use a fallback reply, abort the cycle; an unexpected (critical) error
rolls memory back through the hook the memory store provides.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from passepartout import workspace
from passepartout.errors import GateError, PassepartoutError, PipelineError, ProtocolError
from passepartout.loop.actions import Action, Actuator, Approver, Thought
from passepartout.loop.events import Done, Error, Event, Reply
from passepartout.loop.gates import GatePipeline
from passepartout.loop.hooks import (
    BEFORE_ACTION,
    ROLLBACK,
    SHOWN_EVENT,
    THINK,
    TOOL_FEEDBACK,
    Hooks,
)
from passepartout.loop.perceive import perceive
from passepartout.loop.reason import Reasoner
from passepartout.loop.turns import Turns
from passepartout.signals import Keyword, Signal

if TYPE_CHECKING:
    from passepartout.engine.registry import Registry

log = logging.getLogger(__name__)

MAX_DEPTH = 10
_TERMINAL_SENSORS = frozenset({"loop-error", "tool-error", "syntax-error"})


class Recovery(Exception):
    """Base of the recoveries an error handler can choose."""


class SkipSignal(Recovery):
    """Drop the current signal and go on."""


class UseFallback(Recovery):
    """Answer with this text instead of the model's."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class AbortCycle(Recovery):
    """End this cycle cleanly, feedback included."""


ErrorHandler = Callable[[BaseException, Signal], Recovery | None]
Emitter = Callable[[Signal, Event], None]


@dataclass(frozen=True)
class Report:
    """Something the person was told went wrong."""

    kind: str
    message: str
    session_id: str | None


def _no_model(thought: Thought) -> list[Action]:
    raise PipelineError("no model is configured for this loop")


def _log_emit(signal: Signal, event: Event) -> None:
    log.debug("emit %s: %s", signal.session_id, event)


class Loop:
    """One agent loop: its registry, gates, actuators and recoveries."""

    def __init__(
        self,
        registry: Registry,
        *,
        think: Callable[[Thought], list[Action]] | None = None,
        emit: Emitter | None = None,
        rollback: Callable[[], Any] | None = None,
        gate_timeout: float = 2.0,
        hooks: Hooks | None = None,
    ) -> None:
        self.registry = registry
        self.hooks = hooks or Hooks()
        self.gates = GatePipeline(registry, timeout=gate_timeout, hooks=self.hooks)
        # ``think`` and ``rollback`` given here (tests, benches, the scripted server)
        # win over what a skill attaches at THINK and ROLLBACK.
        self.given_think = think
        self.reasoner = Reasoner(registry, self.gates, self._think)
        self.actuators: dict[str, Actuator] = {"chat": self._reply, "system": _noop}
        self.sink: Emitter = emit or _log_emit
        self.rollback = rollback
        self.error_handlers: list[ErrorHandler] = []
        self.reports: collections.deque[Report] = collections.deque(maxlen=200)
        self.stopping = threading.Event()
        self.turns = Turns()  # the running turns' records (passepartout.loop.turns)
        registry.on_skill_error = self._skill_error

    # -- wiring ---------------------------------------------------------------

    @property
    def think(self) -> Callable[[Thought], list[Action]]:
        """What proposes for a prompt: the given one, else the skill's, else no model."""
        return self.given_think or self.hooks.one(THINK) or _no_model

    @think.setter
    def think(self, fn: Callable[[Thought], list[Action]]) -> None:
        self.given_think = fn

    def _think(self, thought: Thought) -> list[Action]:
        return self.think(thought)

    def emit(self, signal: Signal, event: Event) -> None:
        """Show ``event`` to the signal's face, through every SHOWN_EVENT hook first."""
        self.sink(signal, self.shown(event))

    def shown(self, event: Event) -> Event:
        """``event`` as a face may see it (every SHOWN_EVENT hook applied)."""
        for change in self.hooks.chain(SHOWN_EVENT):
            event = change(event)
        return event

    def actuate(self, action: Action, signal: Signal) -> Signal | None:
        """Carry out ``action`` after every BEFORE_ACTION hook; its feedback passes every
        TOOL_FEEDBACK hook."""
        actuator = self.actuators.get(action.target)
        if actuator is None:
            raise PipelineError(f"no actuator for target {action.target!r}", signal=signal)
        for before in self.hooks.chain(BEFORE_ACTION):
            before(action, signal)
        feedback = actuator(action, signal)
        if feedback is not None:
            for change in self.hooks.chain(TOOL_FEEDBACK):
                feedback = change(feedback)
        return feedback

    @property
    def approver(self) -> Approver | None:
        return self.reasoner.approver

    @approver.setter
    def approver(self, fn: Approver | None) -> None:
        self.reasoner.approver = fn

    def register_actuator(self, target: str, actuator: Actuator) -> None:
        self.actuators[target] = actuator

    # -- cancellation -----------------------------------------------------------

    def cancel(self, session_id: str, turn_id: str | None = None) -> None:
        """Cancel a turn (or the session's running turn), even one not started yet."""
        self.turns.cancel(session_id, turn_id)

    # -- the loop ---------------------------------------------------------------

    def process(self, raw: Any) -> list[Action]:
        """Run one stimulus to the end.  Returns the actions that were carried out."""
        try:
            signal = perceive(raw)
        except ProtocolError as err:
            log.warning("dropped malformed input: %s", err.message)
            self.reports.append(Report(err.kind, err.message, None))
            return []
        # The turn's one record (its cancel flag, the models that answered, its spend,
        # what each layer keeps for it), shared by every step: a child shares its context.
        state = self.turns.start(signal)
        signal.turn = dataclasses.replace(signal.turn, state=state)
        done: list[Action] = []
        # The turn's own workspace, when its face named one (passepartout.workspace).
        with workspace.entered(signal.turn.workspace):
            self._run_turn(signal, state.cancel, done)
        return done

    def _run_turn(self, signal: Signal, cancel: threading.Event, done: list[Action]) -> None:
        pending: collections.deque[Signal] = collections.deque([signal])
        try:
            while pending and not self.stopping.is_set() and not cancel.is_set():
                current = pending.popleft()
                if current.depth > MAX_DEPTH:
                    self._report(
                        current,
                        "depth-limit",
                        f"The loop stopped: depth limit ({MAX_DEPTH}) reached.",
                    )
                    break
                try:
                    pending.extend(self._step(current, cancel, done))
                except AbortCycle:
                    break
        finally:
            try:
                if signal.turn.turn_id is not None:
                    self.emit(signal, Done(cancel.is_set()))
            finally:
                if signal.turn.state is not None:
                    self.turns.end(signal.session_id, signal.turn.state)

    def _step(self, signal: Signal, cancel: threading.Event, done: list[Action]) -> list[Signal]:
        def emit(event: Event) -> None:
            self.emit(signal, event)

        try:
            actions = self.reasoner.reason(signal, emit, cancel)
            feedback: list[Signal] = []
            for action in actions:
                if cancel.is_set():
                    return []
                result = self.actuate(action, signal)
                done.append(action)
                if result is not None:
                    feedback.append(result)
            return _merge_tool_outputs(feedback)
        except Exception as err:
            return self._recover(err, signal)

    def _recover(self, err: Exception, signal: Signal) -> list[Signal]:
        for handler in self.error_handlers:
            try:
                choice = handler(err, signal)
            except Exception as handler_err:
                log.error("error handler failed: %s", handler_err)
                continue
            if isinstance(choice, SkipSignal):
                return []
            if isinstance(choice, UseFallback):
                self.emit(signal, Reply(choice.text))
                return []
            if isinstance(choice, AbortCycle):
                raise choice
        if isinstance(err, Recovery):
            return []
        message = (
            err.message if isinstance(err, PassepartoutError) else f"{type(err).__name__}: {err}"
        )
        kind = err.kind if isinstance(err, PassepartoutError) else "internal-error"
        self._report(signal, kind, message)
        sensor = signal.sensor
        # A crash (a bug, also one wrapped by the stage it happened in) may have left
        # memory half-changed; an expected failure (a model error, a gate) has not.
        cause = err.__cause__ if isinstance(err, PassepartoutError) else err
        critical = cause is not None and not isinstance(cause, PassepartoutError)
        if critical:
            log.exception("critical error on %s", sensor, exc_info=err)
            rollback = self.rollback or self.hooks.one(ROLLBACK)
            if sensor not in _TERMINAL_SENSORS and rollback is not None:
                log.error("critical error: rolling memory back")
                try:
                    rollback()
                except Exception as rb_err:
                    log.error("rollback failed: %s", rb_err)
        if isinstance(err, GateError | ProtocolError) or sensor in _TERMINAL_SENSORS:
            return []
        if signal.depth > 2:
            return []
        return [
            signal.child(
                {"sensor": Keyword("loop-error"), "message": message, "depth": signal.depth}
            )
        ]

    def _report(self, signal: Signal, kind: str, message: str) -> None:
        log.warning("%s: %s", kind, message)
        self.reports.append(Report(kind, message, signal.session_id))
        self.emit(signal, Error(kind, message))

    def _skill_error(self, skill: str, stage: str, err: BaseException) -> None:
        self.reports.append(
            Report("skill-error", f"skill {skill} failed in its {stage}: {err}", None)
        )

    def _reply(self, action: Action, signal: Signal) -> Signal | None:
        # A reply the model already streamed is marked, so no channel shows it twice.
        streamed = bool(action.args.get("streamed", False))
        self.emit(signal, Reply(action.text, streamed))
        return None


def _noop(action: Action, signal: Signal) -> Signal | None:
    return None


def _merge_tool_outputs(feedback: list[Signal]) -> list[Signal]:
    """Tool results of one step go back to the model together, as one signal."""
    outputs = [s for s in feedback if s.sensor == "tool-output"]
    if len(outputs) <= 1:
        return feedback
    results: list[Any] = []
    for s in outputs:
        results.extend(s.payload.get("results") or [])
    merged = Signal(
        payload={"sensor": Keyword("tool-output"), "results": results},
        turn=outputs[0].turn,
        depth=outputs[0].depth,
    )
    return [merged, *(s for s in feedback if s.sensor != "tool-output")]
