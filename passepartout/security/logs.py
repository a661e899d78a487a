"""The log boundary: every record leaves masked and safe for a terminal.

A log line quotes what came from outside (a heading's title, a tool's output, a model's
words, a client's request) and is read in a terminal (``tail -f`` of the daemon's log,
the command line's stderr, a journal).  So, whichever logger or handler writes it, a
record's message and traceback have the vault's secrets masked and every character that
acts on a terminal (escape sequences, carriage returns, bidi controls, lone surrogates)
shown escaped by :func:`~passepartout.text.terminal_safe`.

The record factory is wrapped, so records of every logger are made safe where they are
made, also for handlers added later; the root logger's present handlers get the filter
too, for records made before.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from passepartout.security.vault import get_vault
from passepartout.text import terminal_safe


class BoundaryFilter(logging.Filter):
    """A handler filter that makes each record safe to leave (masked and escaped)."""

    def filter(self, record: logging.LogRecord) -> bool:
        make_safe(record)
        return True


def make_safe(record: logging.LogRecord) -> None:
    """Mask secrets and escape terminal controls in ``record``'s message and traceback
    (once: the record factory and the handlers' filter both pass every record here)."""
    if getattr(record, "passepartout_safe", False):
        return
    record.passepartout_safe = True
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: leave it for logging's own error path
        return
    vault = get_vault()
    safe = terminal_safe(vault.mask(message) if vault.masking else message)
    if safe != message:
        record.msg, record.args = safe, None
    if record.exc_info and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        text = record.exc_text
        record.exc_text = terminal_safe(vault.mask(text) if vault.masking else text)


_installed = False
_lock = threading.Lock()


def install() -> None:
    """Make every log record of this process safe to leave, from now on."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        make_safe(record)
        return record

    logging.setLogRecordFactory(factory)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, BoundaryFilter) for f in handler.filters):
            handler.addFilter(BoundaryFilter())
