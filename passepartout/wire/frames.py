"""The EPC frame, both ways: the one codec the daemon and its clients share.

A frame is six hex digits giving the length of what follows, then one UTF-8
s-expression and a newline.  Our extension, for the Elisp client: strings of 16 KiB or
more may follow the s-expression as raw UTF-8, announced by a leading
``(attachments SIZE...)``; a side sends them only to a peer whose ``hello`` said
``:attachments t``, and reads them from anyone.  Values are those of
:mod:`passepartout.signals` (nil, (), None and False are one value; t is True; a dict
is written as a plist).

:func:`frame` makes one frame of a value (refusing one that is too large before any of
it is sent); :func:`length` checks a frame's six-digit head against a limit;
:func:`read_payload` reads the value of one frame's payload.  How the bytes are read off
a socket (timeouts, the limit before the token) is each side's, with these.
"""

from __future__ import annotations

import re
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.signals import dumps, loads

HEAD = 6  # the length: six hex digits
MAX_LENGTH = 0xFFFFFF  # what six hex digits can say
MAX_FRAME = 8 * 1024 * 1024  # what either side reads once the token is given
MAX_FRAME_BEFORE_HELLO = 64 * 1024  # what the server reads before it

_HEAD = re.compile(rb"[0-9a-fA-F]{6}")
_ATTACHMENTS = re.compile(rb"\(attachments((?: [0-9]{1,8})+)\)")


class FrameError(ProtocolError):
    """The byte stream cannot be trusted any more (a bad head, a frame over the limit):
    the connection is closed."""


class TooLarge(ProtocolError):
    """A value too large for one frame (``size`` bytes): refused before anything is
    sent (the connection stays)."""

    kind = "too-large"


def frame(value: Any, *, attachments: bool = False, limit: int = MAX_LENGTH) -> bytes:
    """One frame of ``value``; with ``attachments``, its long strings follow the
    s-expression as raw bytes.  :class:`TooLarge` over ``limit`` bytes."""
    strings: list[str] | None = [] if attachments else None
    data = dumps(value, strings).encode("utf-8", "replace") + b"\n"
    if strings:
        raw = [text.encode("utf-8", "replace") for text in strings]
        sizes = b" ".join(b"%d" % len(blob) for blob in raw)
        data = b"".join([b"(attachments ", sizes, b")", data, *raw])
    if len(data) > min(limit, MAX_LENGTH):
        raise TooLarge(f"a message of {len(data)} bytes is too large for one frame "
                       f"(at most {min(limit, MAX_LENGTH)})", size=len(data))
    return b"%06x" % len(data) + data


def length(head: bytes, limit: int = MAX_FRAME) -> int:
    """The length a frame's head announces; :class:`FrameError` when it is not six hex
    digits, or over ``limit``."""
    if not _HEAD.fullmatch(head):
        raise FrameError("a frame must start with its length in 6 hex digits")
    size = int(head, 16)
    if size > limit:
        raise FrameError(f"a frame of {size} bytes is over the limit of {limit}")
    return size


def read_payload(data: bytes) -> Any:
    """The message in one frame's payload, its attachments (if any) in place
    (:class:`~passepartout.errors.ProtocolError` when malformed)."""
    match = _ATTACHMENTS.match(data)
    if match is None:
        return loads(data.decode("utf-8", "replace"))
    sizes = [int(size) for size in match.group(1).split()]
    end = len(data) - sum(sizes)
    if end < match.end():
        raise ProtocolError("the attachments are longer than the frame")
    strings, start = [], end
    for size in sizes:
        strings.append(data[start:start + size].decode("utf-8", "replace"))
        start += size
    return loads(data[match.end():end].decode("utf-8", "replace"), strings)


class Buffer:
    """Frames read from a stream of received bytes, as they come (a client's reader)."""

    def __init__(self, limit: int = MAX_FRAME) -> None:
        self.limit = limit
        self._data = b""

    def feed(self, data: bytes) -> None:
        self._data += data

    def missing(self) -> int:
        """How many more bytes the next whole frame needs (0: :meth:`take` has it)."""
        if len(self._data) < HEAD:
            return HEAD - len(self._data)
        return max(0, HEAD + length(self._data[:HEAD], self.limit) - len(self._data))

    def take(self) -> Any:
        """The value of the next whole frame (call when :meth:`missing` is 0)."""
        size = length(self._data[:HEAD], self.limit)
        payload, self._data = self._data[HEAD:HEAD + size], self._data[HEAD + size:]
        return read_payload(payload)


__all__ = ["HEAD", "MAX_FRAME", "MAX_FRAME_BEFORE_HELLO", "MAX_LENGTH", "Buffer",
           "FrameError", "TooLarge", "frame", "length", "read_payload"]
