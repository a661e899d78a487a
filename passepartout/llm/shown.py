"""What a chat turn showed that the model layer did not keep, added to its session.

The model layer keeps each turn it answers (the prompt, the calls, their results, the
reply).  A turn it never saw (answered by the intent parser, or refused before any
call) and an error said to the person would be missing when the session is resumed,
and a resumed chat would not read as it did.  This recorder watches the events of
each turn of a kept session and, when the turn ends, adds what is missing:

- a turn the model never saw: the prompt, each tool call with its result, and the
  reply, as ordinary messages (so the model sees them next time too);
- a refusal the model never saw and an error: an entry of role ``denied`` or
  ``error``, shown when the session is resumed and never sent to a model
  (:data:`SHOWN_ONLY`, see :func:`model_messages`);
- the person's answer to each approval (allowed or not, always or once, by which face):
  an entry of role ``approval``, shown-only too, kept where it came in the turn (at
  once in a turn the model layer keeps, between the call and its result).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from passepartout.llm.translate import Message
from passepartout.loop.events import (
    ApprovalAnswered,
    Denied,
    Done,
    Error,
    Event,
    Reply,
    ToolCall,
    ToolResult,
)
from passepartout.signals import Signal
from passepartout.turn import Kept

log = logging.getLogger(__name__)

SHOWN_ONLY = frozenset({"error", "denied", "approval"})  # roles kept for the person, not the model


def model_messages(messages: Sequence[Message]) -> list[Message]:
    """A session's messages as a model may read them: without the shown-only ones."""
    return [m for m in messages if m.get("role") not in SHOWN_ONLY]


@dataclass
class _Turn:
    prompt: str | None = None
    messages: list[Message] = field(default_factory=list)
    shown_only: list[Message] = field(default_factory=list)
    calls: int = 0
    model_kept: bool = False  # the model layer keeps this turn in its session itself


_SHOWN: Kept[_Turn] = Kept("what the turn showed", _Turn)  # in the turn's record


def model_keeps(signal: Signal) -> None:
    """The model layer keeps the turn of ``signal`` in its session itself (said in the
    turn's record, where :class:`ShownTurns` reads it at the turn's end)."""
    state = signal.turn.state
    if state is not None:
        state.kept(_SHOWN).model_kept = True


class ShownTurns:
    """Follows the turns of kept sessions (``store``, the session store, keeps what a
    turn showed that the model layer did not keep: see :func:`model_keeps`)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = threading.Lock()

    def observe(self, signal: Signal, event: Event) -> None:
        session, turn_id, state = signal.session_id, signal.turn.turn_id, signal.turn.state
        if not session or not turn_id or state is None:
            return
        key = (str(session), str(turn_id))
        turn = state.kept(_SHOWN)  # what this turn showed so far, dropped with the turn
        with self._lock:
            if turn.prompt is None and signal.sensor == "user-input":
                text = signal.payload.get("text")
                turn.prompt = text if isinstance(text, str) else None
            at_once = turn.model_kept  # an answer in a turn the model layer keeps
            if not (at_once and isinstance(event, ApprovalAnswered)):
                self._add(turn, event)
        if at_once and isinstance(event, ApprovalAnswered):
            self._keep(key, [approval_message(event)])  # between the call and its result
            return
        if isinstance(event, Done):
            self._finish(key, turn)

    def _add(self, turn: _Turn, event: Event) -> None:
        match event:
            case Reply(text=text) if text:
                turn.messages.append({"role": "assistant", "content": text})
            case ToolCall(name=name, args=args, call_id=call_id):
                turn.calls += 1
                turn.messages.append({"role": "assistant", "content": "", "tool_calls": [{
                    "id": call_id or f"shown-{turn.calls}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args or {})}}]})
            case ToolResult(name=name, output=output, ok=ok, call_id=call_id):
                turn.messages.append({
                    "role": "tool", "tool_call_id": call_id or f"shown-{turn.calls}",
                    "name": name, "content": output if ok else f"error: {output}"})
            case ApprovalAnswered():
                turn.messages.append(approval_message(event))
            case Denied(action=action, reason=reason):
                turn.shown_only.append({"role": "denied", "content": reason, "name": action})
            case Error(code=code, message=message):
                turn.shown_only.append({"role": "error", "content": f"{code}: {message}"})
            case _:
                pass

    def _finish(self, key: tuple[str, str], turn: _Turn) -> None:
        kept: list[Message] = []
        if not turn.model_kept:
            if turn.prompt is None and not turn.messages and not turn.shown_only:
                return
            if turn.prompt is not None:
                kept.append({"role": "user", "content": turn.prompt})
            kept += turn.messages
            kept += [m for m in turn.shown_only if m["role"] == "denied"]
        kept += [m for m in turn.shown_only if m["role"] == "error"]
        self._keep(key, kept)

    def _keep(self, key: tuple[str, str], kept: list[Message]) -> None:
        session, turn_id = key
        if not kept:
            return
        try:
            self.store.append(session, *kept)
        except Exception as err:  # the turn was shown; only its resume loses it
            log.warning("session %s: could not keep what turn %s showed: %s",
                        session, turn_id, err)


def approval_message(event: ApprovalAnswered) -> Message:
    """The answer to an approval as a session entry: ``content`` the question as asked,
    ``name`` the action, ``answer`` allowed or denied, ``always``, ``by`` the face that
    answered ("" when none did), ``reason`` why a no, ``call_id`` the model's call."""
    message: Message = {"role": "approval", "content": event.description,
                        "name": event.action,
                        "answer": "allowed" if event.granted else "denied",
                        "always": event.always, "by": event.by, "reason": event.reason}
    if event.call_id:
        message["tool_call_id"] = event.call_id
    return message
