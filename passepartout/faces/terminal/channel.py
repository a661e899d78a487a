"""How a terminal shows a turn: the events of the loop as lines (the reply as it streams,
tool calls, refusals, errors), and an approval asked where the answers come from.  Both
``passepartout chat`` attached to the daemon and ``--standalone`` show turns with it."""

from __future__ import annotations

import re
import threading
from typing import Any, TextIO

from passepartout.faces.terminal.answers import (
    Answers,
)
from passepartout.loop.actions import Answer, ApprovalRequest
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
    ToolResult,
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
        self._streamed = ""
        self._column = 0
        self._lock = threading.RLock()

    # -- the Channel protocol ---------------------------------------------------------

    def send(self, signal: Signal, event: Event) -> None:
        self.show(event)

    def show(self, event: Event) -> None:
        """Print one event of the loop (a daemon's events are mapped to them)."""
        with self._lock:
            match event:
                case Chunk(text=text):
                    self._streamed += text
                    self._write(text)
                case Reply(text=text, streamed=streamed):
                    self._reply(text, streamed)
                case ToolCall(name=name, args=args):
                    self._line(f"  [tool] {name} {_args(args)}")
                case ToolResult(ok=ok, output=output):
                    status = "ok" if ok and not failed_command(output) else "failed"
                    self._line(f"  [{status}] {one_line(output, OUTPUT_PREVIEW, shown=True)}")
                case Denied(action=action, reason=reason):
                    self._line(f"  [refused] {action}: {reason}")
                case Notice(text=text):
                    self._line(f"  ({text})")
                case Error(message=message):
                    self.errors += 1
                    self._line(f"error: {message}")
                case Done(cancelled=cancelled):
                    if cancelled:
                        self._line("(cancelled)")
                    self._end_line()
                    self._done.set()
                case ApprovalAsked() | ApprovalAnswered():
                    pass  # approve() asks, and the answer was typed here

    def approve(self, request: ApprovalRequest) -> bool:
        yes = self.ask(request.describe())
        if request.heard is not None:
            request.heard(Answer(yes, by="terminal", reason="" if yes else "refused"))
        return yes

    def ask(self, description: str) -> bool:
        """Ask where the answers come from; only "y" or "yes" is a yes."""
        with self._lock:
            self._end_line()
            self._streamed = ""
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
        self._streamed = ""

    def wait(self, timeout: float = TURN_TIMEOUT) -> bool:
        return self._done.wait(timeout)

    # -- output -----------------------------------------------------------------------

    def _reply(self, text: str, streamed: bool) -> None:
        shown, self._streamed = self._streamed, ""
        if (streamed or shown) and text.startswith(shown):
            self._write(text[len(shown):])  # only what the chunks have not shown
        else:
            self._line(text)
        self._end_line()

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
        self._streamed = ""  # a new model step streams a new text
        self._write(text + ("\n" if newline else ""))


def _args(args: Any) -> str:
    if isinstance(args, dict):
        return " ".join(f"{k}={one_line(v, 60, shown=True)!r}" for k, v in args.items())
    return str(args or "")
