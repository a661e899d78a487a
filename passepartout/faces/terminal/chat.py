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
import sys
from typing import TextIO

from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.faces.terminal.answers import (
    ANSWERS_FLAG,
    Answers,
    FromStream,
    FromTerminal,
    Refuse,
)
from passepartout.faces.terminal.channel import TerminalChannel
from passepartout.faces.terminal.commands import HELP, ChatState, answer, command_word
from passepartout.faces.terminal.history import LineReader
from passepartout.faces.terminal.streams import escaped_output
from passepartout.text import terminal_safe

SOURCE = "terminal"
DEFAULT_SESSION = "terminal"
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
    from passepartout.views import sessions

    state = ChatState(config, agent.services, session,
                      sessions=lambda: sessions(config.home))
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
    from passepartout.ownplace import exit_process

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
