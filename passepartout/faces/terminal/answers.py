"""Where ``passepartout chat`` takes the answer to an approval from.

Only the person at the terminal answers.  With standard input a terminal, the
question is asked on the terminal itself (``/dev/tty``): what was typed before it
appeared is discarded, and only ``y`` or ``yes`` typed after it approves; no answer
within the approval timeout is a no.  Standard input that is not a terminal (a pipe,
a file, another program) answers nothing: every approval is refused, whatever its
later lines say, unless the chat was started with ``--answers-from-stdin``, which
reads one line of standard input per approval instead (for scripts that mean it).
"""

from __future__ import annotations

import contextlib
import os
import select
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TextIO

from passepartout.text import terminal_safe

ANSWERS_FLAG = "--answers-from-stdin"
YES = frozenset({"y", "yes"})
MAX_ANSWER = 4096  # bytes: an answer is a word, not a paste

Say = Callable[[str], None]  # writes to the chat's output, escaped


def is_yes(answer: str) -> bool:
    return answer.strip().lower() in YES


class Answers(Protocol):
    """Asks ``question`` (one line, ending where the answer is typed); True for a yes."""

    def ask(self, question: str, say: Say) -> bool: ...


@dataclass(frozen=True)
class Refuse:
    """Standard input is not a terminal and no flag named it: nothing answers."""

    why: str = f"standard input is not a terminal (start with {ANSWERS_FLAG} to answer from it)"

    def ask(self, question: str, say: Say) -> bool:
        say(f"{question}refused: {self.why}\n")
        return False


@dataclass(frozen=True)
class FromStream:
    """``--answers-from-stdin``: the next line of ``stream`` answers."""

    stream: TextIO

    def ask(self, question: str, say: Say) -> bool:
        say(question)
        try:
            answer = self.stream.readline()
        except (OSError, ValueError):
            answer = ""
        if not answer:
            say("(no answer: refused)\n")
        elif not answer.endswith("\n"):
            say("\n")
        return is_yes(answer)


@dataclass(frozen=True)
class FromTerminal:
    """The controlling terminal answers, typed after the question is shown."""

    timeout: float
    path: str = "/dev/tty"

    def ask(self, question: str, say: Say) -> bool:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_NOCTTY)
        except OSError as err:
            say(f"{question}refused: the terminal cannot be opened ({err.strerror})\n")
            return False
        try:
            with contextlib.suppress(termios.error):
                termios.tcflush(fd, termios.TCIFLUSH)  # type-ahead is not an answer
            os.write(fd, terminal_safe(question).encode(errors="replace"))
            answer = _read_line(fd, time.monotonic() + self.timeout)
            if answer is None:
                os.write(fd, b"\n(no answer in time: refused)\n")
            elif not answer:
                os.write(fd, b"\n(no answer: refused)\n")
            return answer is not None and is_yes(answer)
        except OSError as err:
            say(f"(the terminal failed: {err.strerror}; refused)\n")
            return False
        finally:
            os.close(fd)


def _read_line(fd: int, deadline: float) -> str | None:
    """One line typed on ``fd``; "" at end of input, None when ``deadline`` passes."""
    data = b""
    while not data.endswith(b"\n") and len(data) < MAX_ANSWER:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, MAX_ANSWER)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")
