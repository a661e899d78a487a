"""The terminal channel: ``passepartout chat`` talks to the same loop as Emacs.

By default the chat attaches to the daemon (:mod:`terminal_attached`; one is started
when none runs, and it keeps running after the chat), so it has Emacs's sessions,
memory and ledger; ``--standalone`` runs the agent in this process instead.
Each line read is a turn; the reply streams as it comes; tool calls, refusals and errors
are shown on their own lines.  An approval is asked where :mod:`terminal_answers` says:
on the terminal, refused when standard input is not one, or from standard input with
``--answers-from-stdin``; only a yes approves.  Everything written to the terminal goes
through :func:`~passepartout.text.terminal_safe`, so escape sequences from
a model or a tool are shown, not obeyed.  ``Ctrl-C`` cancels the running turn;
``Ctrl-D`` or ``/quit`` ends the chat.  The session is kept, so the next
``passepartout chat`` resumes it.  On a terminal, prompts are edited with ``readline``
and kept in a history (:mod:`terminal_history`); ``/model``, ``/session`` and ``/cost``
are answered here (:mod:`terminal_commands`).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import threading
from typing import Any, TextIO

from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.faces.terminal.answers import (
    ANSWERS_FLAG,
    Answers,
    FromStream,
    FromTerminal,
    Refuse,
)
from passepartout.faces.terminal.commands import HELP, ChatState, answer, command_word
from passepartout.faces.terminal.history import LineReader
from passepartout.faces.terminal.streams import escaped_output
from passepartout.loop.actions import ApprovalRequest
from passepartout.loop.events import (
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
from passepartout.org.escape import org_line as one_line
from passepartout.signals import Signal
from passepartout.text import terminal_safe

log = logging.getLogger(__name__)

SOURCE = "terminal"
DEFAULT_SESSION = "terminal"
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
                    self._line(f"  [{status}] {one_line(output, OUTPUT_PREVIEW)}")
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
                case ApprovalAsked():
                    pass  # approve() asks

    def approve(self, request: ApprovalRequest) -> bool:
        return self.ask(request.describe())

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
        return " ".join(f"{k}={one_line(v, 60)!r}" for k, v in args.items())
    return str(args or "")


def run_chat(
    config: Config,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    session_id: str | None = None,
    answers_from_stdin: bool = False,
    standalone: bool = True,
) -> int:
    """Chat on the terminal until end of input; 0, or 1 when a turn ended in an error.

    With ``standalone`` the agent runs in this process; else the chat attaches to the
    daemon, which is started when none runs and outlives the chat.  Approvals are
    answered by the next line of ``stdin`` with ``answers_from_stdin``, else on the
    terminal when ``stdin`` is one, else refused."""
    reader = stdin or sys.stdin
    writer = stdout or sys.stdout
    interactive = _isatty(reader)
    session = session_id or config.extra.get("PASSEPARTOUT_SESSION") or DEFAULT_SESSION
    answers = _answers(config, reader, interactive, answers_from_stdin)
    channel = TerminalChannel(writer, answers)
    if not standalone:
        return _attached(config, reader, writer, channel, session, interactive)
    from passepartout.agent import Agent
    from passepartout.llm import install

    agent = Agent(config)
    install(agent)
    agent.register_channel(SOURCE, channel)
    try:
        agent.boot()
    except PassepartoutError as err:
        print(terminal_safe(f"passepartout chat: {err.message}"), file=sys.stderr)
        return 1
    state = ChatState(config, agent.services, session)
    lines = LineReader.for_stream(reader, config.home, interactive)
    try:
        if interactive:
            banner = (f"Passepartout (session {session}); /help lists the commands, "
                      "Ctrl-D or /quit ends.\n")
            writer.write(terminal_safe(banner))
        for text in lines.prompts(writer, interactive):
            local = command_word(text)
            if local is not None:
                channel.say(answer(state, *local))
                continue
            channel.begin()
            turn = agent.submit(text, session_id=state.session, source=SOURCE, **state.meta())
            try:
                channel.wait()
            except KeyboardInterrupt:
                agent.cancel(state.session, turn)
                channel.wait(10.0)
            if text.lower().split()[0] == "/help":
                channel.say(HELP)
    finally:
        agent.shutdown()
    return 1 if channel.errors else 0


def _attached(config: Config, reader: TextIO, writer: TextIO, channel: TerminalChannel,
              session: str, interactive: bool) -> int:
    from passepartout.faces.face import Face
    from passepartout.faces.terminal.attached import chat_attached
    from passepartout.wire.start import ensure_daemon

    def attach() -> Face | None:
        return Face.attach(config.home, client={"approval-timeout": config.approval_timeout})

    try:
        running = ensure_daemon(config)
        face = attach()
    except PassepartoutError as err:
        print(terminal_safe(f"passepartout chat: {err.message} (--standalone runs the agent "
                            "in this process instead)"), file=sys.stderr)
        return 1
    if face is None:
        print("passepartout chat: the daemon stopped as the chat started; try again",
              file=sys.stderr)
        return 1
    return chat_attached(config, face, reader=reader, writer=writer, channel=channel,
                         session=session, interactive=interactive,
                         pid=running.info.get("pid", "?"), reattach=attach)


def _answers(config: Config, reader: TextIO, interactive: bool, from_stdin: bool) -> Answers:
    if from_stdin:
        return FromStream(reader)
    if interactive:
        return FromTerminal(config.approval_timeout)
    return Refuse()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", help=f"the session to resume (default {DEFAULT_SESSION!r})")
    parser.add_argument(
        ANSWERS_FLAG, action="store_true",
        help="answer approvals with lines of standard input (y or yes approves); without "
        "it an approval is asked on the terminal, and refused when standard input is "
        "not a terminal",
    )
    parser.add_argument(
        "--standalone", action="store_true",
        help="run the agent in this process instead of attaching to the daemon (which is "
        "started when none runs, and keeps running after the chat)",
    )


def run(args: argparse.Namespace) -> int:
    from passepartout.server.serve import exit_process

    with escaped_output():
        code = run_chat(
            Config.load(),
            session_id=getattr(args, "session", None),
            answers_from_stdin=bool(getattr(args, "answers_from_stdin", False)),
            standalone=bool(getattr(args, "standalone", False)),
        )
    # The agent has shut down (memory saved); the interpreter is not finalized.  Its
    # finalization took seconds collecting litellm's objects, and a daemon thread still
    # in native code then (an embedding model's torch call) was ended by pthread_exit
    # through a C++ frame: std::terminate, "terminate called without an active
    # exception", status 134.
    exit_process(code)
    return code  # not reached
