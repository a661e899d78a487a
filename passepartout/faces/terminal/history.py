"""Line editing and a kept history for ``passepartout chat`` on a terminal.

With standard input a terminal, prompts are read with the standard library's
``readline`` (arrows, Ctrl-R, Emacs keys) and kept in ``$PASSEPARTOUT_HOME/chat_history``
(mode 0600, the last :data:`HISTORY_LENGTH` lines).  Only what :meth:`LineReader.read`
returns as a prompt is recorded, and only by an explicit ``add_history``: automatic
history is off, so an approval's answer (read from ``/dev/tty`` or standard input
elsewhere) never lands in it.  A prompt starting with a space is not recorded (as in
bash's ``ignorespace``); Tab completes the slash commands.  Standard input that is not
a terminal is read line by line, with neither editing nor history.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TextIO

log = logging.getLogger(__name__)

HISTORY_FILE = "chat_history"
HISTORY_LENGTH = 1000
PROMPT = "> "
COMMANDS = ("/cost", "/help", "/model", "/quit", "/session", "/skills", "/status", "/tools")


@dataclass
class LineReader:
    """Reads the person's prompts: ``None`` at end of input."""

    stream: TextIO
    history: Path | None = None  # set only when editing on a terminal
    _readline: ModuleType | None = field(default=None, repr=False)

    @classmethod
    def for_stream(cls, stream: TextIO, home: Path, interactive: bool) -> LineReader:
        """Editing and history only on the process's own terminal standard input."""
        if not interactive or not _is_process_stdin(stream):
            return cls(stream)
        try:
            import readline
        except ImportError:  # a Python built without it: plain lines still work
            return cls(stream)
        reader = cls(stream, home / HISTORY_FILE, readline)
        reader._load()
        return reader

    def read(self, writer: TextIO, interactive: bool) -> str | None:
        if self._readline is None:
            if interactive:
                writer.write(PROMPT)
                writer.flush()
            line = self.stream.readline()
            return line if line else None
        try:
            line = input(PROMPT)
        except EOFError:
            writer.write("\n")
            return None
        self._remember(line)
        return line + "\n"

    def prompts(self, writer: TextIO, interactive: bool) -> Iterator[str]:
        """Each prompt, stripped, until end of input or ``/quit``; a blank line is
        skipped and Ctrl-C at the prompt gives a fresh one, as in a shell."""
        while True:
            try:
                line = self.read(writer, interactive)
            except KeyboardInterrupt:
                writer.write("\n")
                continue
            if line is None:
                return
            text = line.strip()
            if text in ("/quit", "/exit"):
                return
            if text:
                yield text

    def _load(self) -> None:
        rl = self._readline
        assert rl is not None and self.history is not None
        rl.set_auto_history(False)  # recorded only by _remember, never an answer
        rl.set_history_length(HISTORY_LENGTH)
        rl.clear_history()
        rl.set_completer(complete)
        rl.set_completer_delims(" \t\n")
        rl.parse_and_bind("tab: complete")
        if self.history.is_file():
            try:
                rl.read_history_file(str(self.history))
            except OSError as err:
                log.warning("chat history %s not read: %s", self.history, err)

    def _remember(self, line: str) -> None:
        rl = self._readline
        assert rl is not None and self.history is not None
        if not line.strip() or line.startswith(" "):
            return
        count = rl.get_current_history_length()
        if count and rl.get_history_item(count) == line:
            return
        rl.add_history(line)
        try:
            self.history.parent.mkdir(parents=True, exist_ok=True)
            # Created 0600 before readline writes into it, and kept so.
            os.close(os.open(self.history, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600))
            os.chmod(self.history, 0o600)
            rl.write_history_file(str(self.history))
        except OSError as err:
            log.warning("chat history %s not written: %s", self.history, err)


def complete(text: str, state: int) -> str | None:
    """Tab completes the chat's slash commands (readline's completer protocol)."""
    found = [c for c in COMMANDS if c.startswith(text)] if text.startswith("/") else []
    return found[state] if state < len(found) else None


def _is_process_stdin(stream: TextIO) -> bool:
    """``input()`` reads the process's fd 0; a stream given by a caller is read as is."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        return stream.fileno() == 0
    return False
