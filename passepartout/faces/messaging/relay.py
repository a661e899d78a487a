"""The generic part of a messaging face: who may talk, one session per chat, replies,
approvals and notices, over a :class:`~passepartout.faces.face.Face`.

- A message whose chat or sender is not allowed is ignored and logged, never answered
  (not even "no"): a stranger learns nothing, and nothing runs.
- Each allowed chat has its session (``telegram-<chat id>``) and a worker thread that
  runs its prompts in order; the reply is sent when the turn is done, its tool calls
  summarised one line each (name, short arguments, ok or failed; never their output).
- An approval the gates ask in a chat's turn is asked in that chat, numbered; only an
  answer from that chat, for that number, while the turn waits, counts, and only
  "allow" / ``yes N`` approves.  ``emacs-eval`` is refused (Emacs shows and evaluates
  that code itself).  An approval of no turn of this face (a job's) is refused at
  once, as the terminal does.  What a phone may run unasked is thus exactly what the
  gates let Emacs run unasked.
- Notices (a cron job's result) go to every allowed chat when the person opted in.

Everything sent passes :func:`~passepartout.security.outbound.outbound_text`.
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import queue
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from passepartout.errors import DaemonError
from passepartout.faces.face import Face
from passepartout.faces.messaging.transport import (
    Answer,
    Incoming,
    Message,
    Transport,
    TransportError,
)
from passepartout.protocol import (
    Allow,
    ApprovalAsked,
    Chunk,
    Deny,
    Disconnected,
    Done,
    Event,
    Notice,
    ToolCalled,
    ToolDenied,
    ToolFinished,
    TurnError,
)
from passepartout.security.outbound import outbound_text
from passepartout.text import one_line

log = logging.getLogger(__name__)

EVENT_WAIT = 900.0  # the longest a turn may go without an event (an approval waits)
ARG_CHARS = 60
STALE_AFTER = 600.0  # seconds: an older message is not run (it waited for the daemon)
STRANGER_LOG_EVERY = 600.0  # seconds between two log lines about one unknown chat
STRANGERS_KEPT = 1024  # unknown chats remembered for that
TYPED_ANSWER = re.compile(r"(?i)(yes|y|allow|no|n|deny)(?:\s+#?(\d{1,6}))?[.!]?")
HELP = ("This is Passepartout.  Write to chat with your agent; approvals are asked "
        "here.  /cancel stops the current turn.")


def session_id(face: str, chat: str) -> str:
    return f"{face}-{re.sub(r'[^A-Za-z0-9._:@-]', '', chat)}"[:128]


@dataclass
class _Asked:
    approval_id: str
    chat: str
    question: str


@dataclass
class Relay:
    """One connection's worth of a messaging face (see the module's docstring)."""

    face: Face
    transport: Transport
    allowed: frozenset[str]
    notify: bool = False
    numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    ended: threading.Event = field(default_factory=threading.Event)
    _asked: dict[int, _Asked] = field(default_factory=dict)
    _chats: dict[str, queue.SimpleQueue[str | None]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _background: queue.SimpleQueue[Event | None] = field(default_factory=queue.SimpleQueue)
    # chat -> (when its last ignored message was logged, how many since): a stranger
    # sending a flood fills no log
    _strangers: dict[str, tuple[float, int]] = field(default_factory=dict)

    def serve(self) -> None:
        """Relay until the face's connection ends (or :attr:`ended` is set)."""
        self.face.listen(self._on_event)
        threading.Thread(target=self._background_loop, daemon=True,
                         name=f"{self.transport.name}-notices").start()
        try:
            for incoming in self.transport.receive(self.ended):
                if self.ended.is_set():
                    break
                try:
                    self.handle(incoming)
                except (DaemonError, TransportError) as err:
                    log.warning("%s: %s", self.transport.name, err.message)
        finally:
            self.ended.set()
            self._background.put(None)
            with self._lock:
                chats = list(self._chats.values())
            for chat_queue in chats:
                chat_queue.put(None)

    # -- what arrives --------------------------------------------------------------

    def handle(self, incoming: Incoming) -> None:
        if incoming.chat not in self.allowed or incoming.sender not in self.allowed:
            self._ignored(incoming)
            return
        if isinstance(incoming, Answer):
            self._answer(incoming.chat, incoming.number, incoming.yes, incoming)
            return
        if self._stale(incoming):
            return
        text = incoming.text.strip()
        typed = TYPED_ANSWER.fullmatch(text)
        waiting = self._waiting(incoming.chat)
        command = text.lower().split("@")[0]  # "/cancel@SomeBot" in a group
        if typed and (typed.group(2) or waiting):
            # A bare "yes" answers the one approval waiting here; with none, it is a prompt.
            if not typed.group(2) and len(waiting) > 1:
                self.say(incoming.chat, f"Approvals {', '.join(map(str, waiting))} wait "
                                        "here: answer \"yes N\" or \"no N\".")
                return
            number = int(typed.group(2)) if typed.group(2) else waiting[0]
            self._answer(incoming.chat, number,
                         typed.group(1).lower() in ("yes", "y", "allow"), incoming)
        elif not text:
            self.say(incoming.chat, "Only text messages are understood here.")
        elif command in ("/start", "/help"):
            self.say(incoming.chat, HELP)
        elif command == "/cancel":
            self.face.cancel(session_id(self.transport.name, incoming.chat))
            self.say(incoming.chat, "Cancelling the current turn.")
        else:
            self._chat(incoming.chat).put(text)

    def _stale(self, message: Message) -> bool:
        """A message sent long before it came (kept by the service while the daemon was
        down) is not run: what was meant then may be wrong now.  The chat is told."""
        if message.sent is None or time.time() - message.sent <= STALE_AFTER:
            return False
        when = dt.datetime.fromtimestamp(message.sent).astimezone()
        log.info("%s: a message of chat %s sent at %s came late; not run",
                 self.transport.name, message.chat, when.isoformat(timespec="seconds"))
        self.say(message.chat, f"Your message of {when:%Y-%m-%d %H:%M} (\"{message.text[:40]}"
                               f"{'...' if len(message.text) > 40 else ''}\") came while I "
                               "was not running, so it was not run. Send it again to run "
                               "it now.")
        return True

    def _waiting(self, chat: str) -> list[int]:
        with self._lock:
            return sorted(n for n, asked in self._asked.items() if asked.chat == chat)

    def say(self, chat: str, text: str) -> None:
        try:
            self.transport.send(chat, outbound_text(text))
        except TransportError as err:
            log.warning("%s: a message to chat %s was not sent: %s", self.transport.name,
                        chat, err.message)

    # -- one chat ------------------------------------------------------------------

    def _chat(self, chat: str) -> queue.SimpleQueue[str | None]:
        with self._lock:
            found = self._chats.get(chat)
            if found is None:
                found = self._chats[chat] = queue.SimpleQueue()
                threading.Thread(target=self._chat_loop, args=(chat, found), daemon=True,
                                 name=f"{self.transport.name}-chat").start()
            return found

    def _chat_loop(self, chat: str, prompts: queue.SimpleQueue[str | None]) -> None:
        while not self.ended.is_set():
            text = prompts.get()
            if text is None:
                return
            try:
                reply = self.run_turn(chat, text)
            except DaemonError as err:
                reply = f"The agent could not take this: {err.message}"
            except Exception:  # one turn's bug must not end the chat
                log.exception("%s: a turn failed", self.transport.name)
                reply = "Something went wrong here; the daemon's log says what."
            if reply:
                self.say(chat, reply)

    def run_turn(self, chat: str, text: str) -> str:
        """Send ``text`` in the chat's session; the reply to send once it is done."""
        turn = self.face.send(session_id(self.transport.name, chat), text)
        self.transport.working(chat)
        reply = _Reply()
        asked: list[int] = []
        try:
            while True:
                event = turn.next(EVENT_WAIT)
                if event is None:
                    turn.cancel()
                    reply.line("(the turn did not end in time and was cancelled)")
                    break
                if isinstance(event, ApprovalAsked):
                    number = self._ask(chat, event)
                    if number is not None:
                        asked.append(number)
                    else:
                        reply.line(f"[refused] {event.description}: it needs Emacs")
                elif isinstance(event, Done):
                    if event.cancelled:
                        reply.line("(cancelled)")
                    break
                elif isinstance(event, Disconnected):
                    reply.line(f"(the agent went away: {event.reason})")
                    break
                else:
                    reply.add(event)
        finally:
            with self._lock:
                unanswered = [n for n in asked if self._asked.pop(n, None) is not None]
        for number in unanswered:  # the daemon's approval timeout passed: it said no
            reply.line(f"(approval {number} was not answered, so it was refused)")
        return reply.text()

    # -- approvals -----------------------------------------------------------------

    def _ask(self, chat: str, event: ApprovalAsked) -> int | None:
        if event.tool == "emacs-eval":
            self.face.answer(event.approval_id, Deny())
            return None
        number = next(self.numbers)
        with self._lock:
            self._asked[number] = _Asked(event.approval_id, chat, event.description)
        try:
            self.transport.ask(chat, number, outbound_text(event.description))
        except TransportError as err:
            log.warning("%s: approval %d not asked (%s): refused", self.transport.name,
                        number, err.message)
            with self._lock:
                self._asked.pop(number, None)
            self.face.answer(event.approval_id, Deny())
        return number

    def _ignored(self, incoming: Incoming) -> None:
        """Log a stranger's message: the first, then at most once per chat every
        :data:`STRANGER_LOG_EVERY` seconds, with how many were ignored meanwhile."""
        now = time.monotonic()
        logged, since = self._strangers.get(incoming.chat, (None, 0))
        if logged is not None and now - logged < STRANGER_LOG_EVERY:
            self._strangers[incoming.chat] = (logged, since + 1)
            return
        more = f"; {since} more from it ignored since the last line" if since else ""
        log.warning("%s: ignored a message from chat %s (sender %s): not an allowed chat%s",
                    self.transport.name, one_line(incoming.chat, 80),
                    one_line(incoming.sender, 80), more)
        self._strangers.pop(incoming.chat, None)
        self._strangers[incoming.chat] = (now, 0)
        while len(self._strangers) > STRANGERS_KEPT:
            self._strangers.pop(next(iter(self._strangers)))

    def _answer(self, chat: str, number: int, yes: bool, incoming: Incoming) -> None:
        with self._lock:
            asked = self._asked.get(number)
            if asked is not None and asked.chat == chat:
                del self._asked[number]
            else:
                asked = None
        if asked is None:
            note = (f"No approval {number} is waiting here." if number
                    else "That question is no longer waiting.")
        elif self.face.answer(asked.approval_id, Allow() if yes else Deny()):
            note = f"Approval {number} {'allowed' if yes else 'denied'}: {asked.question}"
        else:
            note = f"Approval {number}: too late, it had timed out and was refused."
        if isinstance(incoming, Answer) and incoming.ref:
            # A press on a question no longer waiting leaves its message as it is.
            self.transport.answered(incoming, outbound_text(note), edit=asked is not None)
        elif not isinstance(incoming, Message) or asked is None:
            self.say(chat, note)
        else:
            self.say(chat, f"Approval {number} {'allowed' if yes else 'denied'}.")

    # -- what the daemon sends outside a turn ----------------------------------------

    def _on_event(self, event: Event) -> None:
        # The face's reader calls this: anything that calls the daemon waits elsewhere.
        if isinstance(event, Disconnected):
            self.ended.set()
            self._background.put(None)
        elif isinstance(event, ApprovalAsked) or (isinstance(event, Notice) and self.notify):
            self._background.put(event)

    def _background_loop(self) -> None:
        while True:
            event = self._background.get()
            if event is None or self.ended.is_set():
                return
            try:
                if isinstance(event, ApprovalAsked):
                    # No chat of this face asked it (a job's): nobody here to ask.
                    self.face.answer(event.approval_id, Deny())
                elif isinstance(event, Notice):
                    for chat in sorted(self.allowed):
                        self.say(chat, f"[{event.level}] {event.text}")
            except DaemonError as err:
                log.info("%s: %s", self.transport.name, err.message)


class _Reply:
    """A turn's reply: its text and one line per tool call, in order."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self._text = False  # is the last part reply text (chunks join it)?

    def line(self, text: str) -> None:
        self.parts.append(text)
        self._text = False

    def add(self, event: Event) -> None:
        if isinstance(event, Chunk):
            if self._text:
                self.parts[-1] += event.text
            else:
                self.parts.append(event.text)
                self._text = True
        elif isinstance(event, ToolCalled):
            self.line(f"[{event.name}] {_short(event.args)}".rstrip())
        elif isinstance(event, ToolFinished):
            mark = "ok" if event.ok else "failed"
            if self.parts and self.parts[-1].startswith(f"[{event.name}]"):
                self.parts[-1] += f" ({mark})"
            else:
                self.line(f"[{event.name}] ({mark})")
        elif isinstance(event, ToolDenied):
            self.line(f"[denied] {event.name}: {event.reason or 'refused'}")
        elif isinstance(event, TurnError):
            self.line(f"Error: {event.message or event.kind}")

    def text(self) -> str:
        return "\n".join(p.strip() for p in self.parts if p.strip())


def _short(args: dict[str, Any] | None) -> str:
    if not args:
        return ""
    value = " ".join(str(v) for v in args.values())
    value = " ".join(value.split())
    return value if len(value) <= ARG_CHARS else value[:ARG_CHARS - 3] + "..."
