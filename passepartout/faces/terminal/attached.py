"""``passepartout chat`` attached to the running daemon (the default).

The chat is one more face of the daemon (:class:`~passepartout.faces.face.Face`):
the same sessions, memory, ledger and cron as Emacs.  Each line read is a prompt sent
in the chat's session; the turn's events (those of :mod:`passepartout.protocol`) are
shown as they come by :class:`~passepartout.faces.terminal.channel.TerminalChannel`, as in
``--standalone``, and an
approval the daemon asks is answered where :mod:`terminal_answers` says (only a yes
approves; the daemon waits as long as the terminal does).  Notifications of the daemon
(a cron job's result, a warning) are shown as they come, between the chat's lines.
End of input closes the connection at once; the daemon keeps running.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TextIO

from passepartout.config import Config
from passepartout.errors import DaemonError
from passepartout.faces.face import Face, Turn
from passepartout.faces.terminal.channel import TURN_TIMEOUT, TerminalChannel
from passepartout.faces.terminal.commands import HELP, ChatState, answer, command_word
from passepartout.faces.terminal.history import LineReader
from passepartout.protocol import Allow, ApprovalAsked, Deny, Disconnected, Done, Event, Notice
from passepartout.services import Services
from passepartout.text import terminal_safe

log = logging.getLogger(__name__)

Attach = Callable[[], Face | None]  # a new face of the running daemon; None when none runs

CANCEL_WAIT = 10.0
REATTACH_WAIT = 5.0  # seconds a prompt waits for a daemon that is restarting
POLL = 0.5  # how often a waiting turn checks for Ctrl-C (and for the connection)


def chat_attached(config: Config, face: Face, *, reader: TextIO, writer: TextIO,
                  channel: TerminalChannel, session: str, interactive: bool,
                  pid: object = "?", reattach: Attach | None = None) -> int:
    """Chat until end of input; 0, or 1 when a turn ended in an error.  When the
    daemon goes away, the next prompt waits a little for it to be back (``reattach``)
    and says so; the daemon is not started again behind the person's back."""
    state = ChatState(config, Services(), session, usage=face.usage, sessions=face.sessions)
    face.listen(_NoticePrinter(face, channel).put)
    lines = LineReader.for_stream(reader, config.home, interactive)
    if interactive:
        writer.write(terminal_safe(
            f"Passepartout (session {session}, attached to the daemon, pid {pid}); "
            "/help lists the commands, "
            "Ctrl-D or /quit ends.\n"))
    try:
        for text in lines.prompts(writer, interactive):
            if face.closed:
                again = _reattach(face, channel, reattach)
                if again is None:
                    continue
                face = again
                state.usage, state.sessions = face.usage, face.sessions
                face.listen(_NoticePrinter(face, channel).put)
            local = command_word(text)
            if local is not None:
                channel.say(answer(state, *local))
                continue
            try:
                turn = face.send(state.session, text, context=state.meta())
            except DaemonError as err:
                channel.error(err.message)
                continue
            follow(face, turn, channel)
            if text.lower().split()[0] == "/help":
                channel.say(HELP)
    finally:
        face.close()
    return 1 if channel.errors else 0


def _reattach(face: Face, channel: TerminalChannel, reattach: Attach | None) -> Face | None:
    """The daemon again, if it is back within :data:`REATTACH_WAIT`; else None (said)."""
    channel.say(f"(the daemon went away: {face.closed_reason}; reconnecting)")
    deadline = time.monotonic() + REATTACH_WAIT
    while reattach is not None:
        try:
            again = reattach()
        except DaemonError as err:
            log.info("reattach failed: %s", err.message)
            again = None
        if again is not None:
            channel.say("(reconnected to the daemon)")
            return again
        if time.monotonic() > deadline:
            break
        time.sleep(0.2)
    channel.error("the daemon is not running, and that prompt was not sent "
                  "(`passepartout daemon --detach` starts it)")
    return None


def follow(face: Face, turn: Turn, channel: TerminalChannel) -> None:
    """Show a turn's events until it is done; Ctrl-C cancels it."""
    channel.begin()
    waited = 0.0
    cancelling = False
    while True:
        event: Event | None = None
        try:
            event = turn.next(POLL)
            if event is not None:
                show(face, event, channel)
        except KeyboardInterrupt:  # while waiting, or while a chunk was being written
            if isinstance(event, Done | Disconnected):
                return
            if not cancelling:
                cancelling, waited = True, 0.0
                _quietly_cancel(face, turn)
            continue
        if event is None:
            waited += POLL
            if waited >= (CANCEL_WAIT if cancelling else TURN_TIMEOUT):
                channel.error("the turn did not end in time")
                return
            continue
        if isinstance(event, Done | Disconnected):
            return


def show(face: Face, event: Event, channel: TerminalChannel) -> None:
    """One event of the daemon: an approval is asked here, the rest shown as they are."""
    if isinstance(event, ApprovalAsked):
        _approve(face, event, channel)
    else:
        channel.show(event)


def _approve(face: Face, event: ApprovalAsked, channel: TerminalChannel) -> None:
    if event.tool == "emacs-eval":
        # Emacs evaluates that code itself, after asking there: a terminal cannot.
        channel.say(f"Refused {event.description}: it needs Emacs, where the code is "
                    "shown and evaluated")
        yes = False
    else:
        yes = channel.ask(event.description)
    try:
        if not face.answer(event.approval_id, Allow() if yes else Deny()):
            channel.say("(too late: the approval had already timed out, and was refused)")
    except DaemonError as err:
        channel.error(f"the answer was not sent: {err.message}")


def _quietly_cancel(face: Face, turn: Turn) -> None:
    try:
        turn.cancel()
    except DaemonError as err:
        log.info("cancel not sent: %s", err.message)


class _NoticePrinter:
    """Prints the daemon's notifications on a thread of its own, so that the face's
    reader never waits for the terminal (an approval question may hold it)."""

    def __init__(self, face: Face, channel: TerminalChannel) -> None:
        self.face = face
        self.channel = channel
        self._queue: queue.SimpleQueue[Event] = queue.SimpleQueue()
        threading.Thread(target=self._run, name="passepartout-notices", daemon=True).start()

    def put(self, event: Event) -> None:
        if isinstance(event, Notice | ApprovalAsked):
            self._queue.put(event)

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if isinstance(event, Notice):
                self.channel.show(event)
            elif isinstance(event, ApprovalAsked):
                # Not a turn of this chat (a job's): no one is at this prompt to be
                # asked, so it is refused at once rather than holding the job.
                self.channel.show(Notice("info", f"refused {event.description}: "
                                                 "asked outside this chat"))
                try:
                    self.face.answer(event.approval_id, Deny())
                except DaemonError as err:
                    log.info("refusal not sent: %s", err.message)
