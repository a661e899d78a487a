"""The loop's events as the events of :mod:`passepartout.protocol`: one conversion.

The server's peer channel sends a turn's loop events to a face with it, and the
terminal's ``--standalone`` chat shows them with it, so that a face renders protocol
events only, whichever side ran the loop.  It is pure: the one thing a turn carries
from event to event, the text its chunks streamed since the last model step, is given
and returned (a whole :class:`~passepartout.loop.events.Reply` becomes the chunk of what
was not streamed yet).
"""

from __future__ import annotations

from typing import assert_never

from passepartout import protocol
from passepartout.loop.events import (
    ApprovalAnswered,
    ApprovalAsked,
    Chunk,
    Denied,
    Done,
    Error,
    Event,
    Notice,
    Reply,
    ToolCall,
    ToolRequested,
    ToolResult,
)

Answered = tuple[str | None, bool | None]  # the model that answered, and whether local


def to_protocol(session: str, turn: str, event: Event, streamed: str = "",
                answered: Answered = (None, None)) -> tuple[protocol.Event | None, str]:
    """The protocol event of ``event`` in ``turn`` of ``session`` (None: nothing to
    send), and the streamed text after it.  ``answered`` goes with :class:`Done`."""
    match event:
        case Chunk(text=text):
            return (protocol.Chunk(session, turn, text) if text else None), streamed + text
        case Reply(text=text):
            rest = unstreamed(streamed, text)
            return (protocol.Chunk(session, turn, rest) if rest else None), ""
        case ToolRequested(name=name, arguments=arguments, call_id=call_id):
            return protocol.ToolRequested(session, turn, name, arguments, call_id), ""
        case ToolCall() | ToolResult() | Denied():
            # the next model step streams a new text
            return tool_event(session, turn, event), ""
        case Error(code=code, message=message):
            return protocol.TurnError(session, turn, code, message), streamed
        case Done(cancelled=cancelled):
            model, local = answered
            return protocol.Done(session, turn, cancelled, model, local), ""
        case ApprovalAsked():
            return None, streamed  # the channel's approve asks, with its own id
        case ApprovalAnswered():
            return None, streamed  # the face that asked shows the answer itself
        case Notice(text=text, level=level):
            return protocol.Notice(level, text), streamed
    assert_never(event)


def unstreamed(streamed: str, reply: str) -> str:
    """The part of a whole reply that its chunks have not shown yet."""
    if not streamed:
        return reply
    return reply[len(streamed):] if reply.startswith(streamed) else ""


def tool_event(session: str, turn: str,
               event: ToolCall | ToolResult | Denied) -> protocol.ToolEvent:
    match event:
        case ToolCall(name=name, args=args, call_id=call_id):
            return protocol.ToolCalled(session, turn, name, dict(args) if args else None,
                                       call_id)
        case ToolResult(name=name, ok=ok, output=output, call_id=call_id):
            return protocol.ToolFinished(session, turn, name, ok, output, call_id)
        case Denied(action=action, reason=reason):
            return protocol.ToolDenied(session, turn, action, reason)
    assert_never(event)
