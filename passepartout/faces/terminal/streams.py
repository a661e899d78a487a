"""The chat process's own output streams, escaped at the terminal boundary.

The terminal channel escapes what it writes; this covers the rest of what the
``passepartout chat`` process writes to its terminal while it runs: ``print`` from a
library, a traceback of a thread, a log line quoting a tool's output.  Standard output
and standard error are replaced by streams that pass their text through
:func:`~passepartout.text.terminal_safe`, and the log handlers that wrote
to them write to the escaped streams instead.
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from passepartout.text import terminal_safe


class EscapedStream(io.TextIOBase):
    """A text stream writing through ``terminal_safe`` to ``raw``."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_safe(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.raw.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]  # readline needs it a str
        return self.raw.errors


@contextmanager
def escaped_output() -> Iterator[None]:
    """Within the block, ``sys.stdout``, ``sys.stderr`` and the log handlers writing to
    them are escaped; all are restored afterwards."""
    raw_out, raw_err = sys.stdout, sys.stderr
    out, err = EscapedStream(raw_out), EscapedStream(raw_err)
    swapped: list[tuple[logging.StreamHandler[TextIO], TextIO]] = []
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream in (raw_out, raw_err):
            stream = handler.stream
            handler.setStream(out if stream is raw_out else err)
            swapped.append((handler, stream))
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        sys.stdout, sys.stderr = raw_out, raw_err
        for handler, stream in swapped:
            handler.setStream(stream)
