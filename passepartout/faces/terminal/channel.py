"""How a terminal shows a turn: the events of :mod:`passepartout.protocol` as lines (the
reply as it streams, tool calls, refusals, errors), and an approval asked where the
answers come from.  ``passepartout chat`` attached to the daemon shows the daemon's
events as they come; ``--standalone`` runs the loop here, and its events become the
protocol's once (:func:`~passepartout.loop.protocol_events.to_protocol`), as the
server's are, so the two chats show a turn the same way."""

from __future__ import annotations

import re
import threading
import time
from typing import Any, TextIO

from passepartout.faces.answered import local_mark
from passepartout.faces.terminal.answers import Answers
from passepartout.loop import events as loop_events
from passepartout.loop.actions import Answer, ApprovalRequest
from passepartout.loop.protocol_events import to_protocol
from passepartout.protocol import (
    ApprovalAsked,
    Chunk,
    Disconnected,
    Done,
    Event,
    Notice,
    OrgEdited,
    StatusChanged,
    ToolCalled,
    ToolDenied,
    ToolFinished,
    ToolRequested,
    TurnError,
)
from passepartout.signals import Signal
from passepartout.text import one_line, terminal_safe

OUTPUT_PREVIEW = 200
TURN_TIMEOUT = 3600.0


def failed_command(output: str) -> bool:
    """Whether a tool's output is a command that ran and failed (a non-zero exit code):
    the tool did its work, the command did not."""
    match = re.match(r"exit code (-?\d+)", output or "")
    return match is not None and match.group(1) != "0"


class TerminalChannel:
    """Prints a session's events on ``stdout`` and asks its approvals of ``answers``."""

    def __init__(self, stdout: TextIO, answers: Answers) -> None:
        self.stdout = stdout
        self.answers = answers
        self.errors = 0
        self._done = threading.Event()
        self._turn_streams: dict[tuple[str, str], str] = {}  # --standalone's turns
        self._column = 0
        self._began = time.monotonic()  # when the running turn was sent
        self._lock = threading.RLock()

    # -- the loop's Channel protocol (--standalone) -----------------------------------

    def send(self, signal: Signal, event: loop_events.Event) -> None:
        """A loop event of a turn run in this process, shown as its protocol event."""
        key = (signal.session_id or "", str(signal.turn.turn_id or ""))
        answered: tuple[str | None, bool | None] = (None, None)
        if isinstance(event, loop_events.Done) and signal.turn.state is not None:
            from passepartout.llm.provider import answered_by  # only once a turn ends

            answered = answered_by(signal.turn.state.models)
        with self._lock:
            sent, streamed = to_protocol(*key, event, self._turn_streams.pop(key, ""),
                                         answered)
            if streamed:
                self._turn_streams[key] = streamed
        if sent is not None:
            self.show(sent)

    # -- protocol events ----------------------------------------------------------------

    def show(self, event: Event) -> None:
        """Print one event of the protocol."""
        with self._lock:
            match event:
                case Chunk(text=text):
                    self._write(text)
                case ToolCalled(name=name, args=args):
                    self._line(f"  [tool] {name} {_args(args or {})}")
                case ToolFinished(ok=ok, output=output):
                    output = output or ""
                    status = "ok" if ok and not failed_command(output) else "failed"
                    self._line(f"  [{status}] {one_line(output, OUTPUT_PREVIEW, shown=True)}")
                case ToolDenied(name=name, reason=reason):
                    self._line(f"  [refused] {name}: {reason or ''}")
                case Notice(text=text):
                    self._line(f"  ({text})")
                case TurnError(kind=kind, message=message):
                    self.error(message or kind)
                case Done(cancelled=cancelled):
                    if cancelled:
                        self._line("(cancelled)")
                    mark = local_mark(event, time.monotonic() - self._began)
                    if mark is not None:
                        self._line(mark)
                    self._end_line()
                    self._done.set()
                case Disconnected(reason=reason):
                    self.error(f"the daemon went away: {reason}")
                    self._end_line()
                    self._done.set()
                case ApprovalAsked() | ToolRequested() | StatusChanged() | OrgEdited():
                    pass  # asked by approve() or the chat; not shown on a terminal

    def error(self, message: str) -> None:
        """An error line (the chat then ends with status 1)."""
        with self._lock:
            self.errors += 1
            self._line(f"error: {message}")

    def approve(self, request: ApprovalRequest) -> bool:
        yes = self.ask(request.describe())
        if request.heard is not None:
            request.heard(Answer(yes, by="terminal", reason="" if yes else "refused"))
        return yes

    def ask(self, description: str) -> bool:
        """Ask where the answers come from; only "y" or "yes" is a yes."""
        with self._lock:
            self._end_line()
            yes = self.answers.ask(f"Allow {description}? [y/N] ", self._write)
            self._column = 0
        return yes

    def say(self, text: str) -> None:
        """A line of the chat itself (a terminal command's answer), escaped."""
        with self._lock:
            self._line(text)

    # -- turns ------------------------------------------------------------------------

    def begin(self) -> None:
        self._done.clear()
        self._began = time.monotonic()

    def wait(self, timeout: float = TURN_TIMEOUT) -> bool:
        return self._done.wait(timeout)

    # -- output -----------------------------------------------------------------------

    def _write(self, text: str) -> None:
        if not text:
            return
        self.stdout.write(terminal_safe(text))
        self.stdout.flush()
        self._column = 0 if text.endswith("\n") else self._column + len(text)

    def _end_line(self) -> None:
        if self._column:
            self._write("\n")

    def _line(self, text: str, *, newline: bool = True) -> None:
        self._end_line()
        self._write(text + ("\n" if newline else ""))


def _args(args: Any) -> str:
    if isinstance(args, dict):
        return " ".join(f"{k}={one_line(v, 60, shown=True)!r}" for k, v in args.items())
    return str(args or "")
