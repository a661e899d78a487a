"""The one frame codec both sides use (passepartout.wire.frames): a value framed and
read back is the same value, in one piece or byte by byte; a bad head or an oversized
frame is a clear error, never a traceback or a hang."""

from __future__ import annotations

from typing import Any

import pytest

from passepartout.errors import DaemonError, ProtocolError
from passepartout.signals import ATTACHMENT_MIN, Keyword, Symbol
from passepartout.wire import client, frames

VALUES: list[Any] = [
    [Symbol("call"), 1, Symbol("chat-send"), ["s", "t", "héllo \"q\" \\ 日本", None]],
    [Symbol("return"), 7, [Keyword("version"), "0.1.0", Keyword("ready"), True]],
    [Symbol("return-error"), 3, [Symbol("bad-arguments"), "ping takes 0 argument(s)"]],
    [Symbol("call"), 2, Symbol("chunk"), ["s", "t", "x" * (ATTACHMENT_MIN + 5)]],
    None,
    42,
]


@pytest.mark.parametrize("attachments", [False, True])
@pytest.mark.parametrize("value", VALUES)
def test_a_frame_reads_back_as_its_value(value: Any, attachments: bool) -> None:
    data = frames.frame(value, attachments=attachments)
    assert frames.length(data[:frames.HEAD]) == len(data) - frames.HEAD
    assert frames.read_payload(data[frames.HEAD:]) == frames.read_payload(
        frames.frame(value)[frames.HEAD:])


def test_frames_fed_byte_by_byte_come_out_whole_and_in_order() -> None:
    stream = b"".join(frames.frame(v, attachments=True) for v in VALUES)
    buffer = frames.Buffer()
    got = []
    for byte in stream:
        buffer.feed(bytes([byte]))
        while buffer.missing() == 0:
            got.append(buffer.take())
    assert got == [frames.read_payload(frames.frame(v)[frames.HEAD:]) for v in VALUES]
    assert buffer.missing() == frames.HEAD


@pytest.mark.parametrize("head", [b" 0x1f0", b"+00001", b"00001g", b"-00001"])
def test_a_head_that_is_not_six_hex_digits_is_a_frame_error(head: bytes) -> None:
    with pytest.raises(frames.FrameError, match="6 hex digits"):
        frames.length(head)
    buffer = frames.Buffer()
    buffer.feed(head + b"()")
    with pytest.raises(frames.FrameError):
        buffer.missing()


def test_a_frame_over_the_limit_is_refused_by_its_head() -> None:
    with pytest.raises(frames.FrameError, match="over the limit"):
        frames.length(b"%06x" % (frames.MAX_FRAME + 1))
    assert frames.length(b"%06x" % 100, limit=100) == 100


def test_a_value_too_large_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(frames.TooLarge) as refused:
        frames.frame(["x" * 200], limit=100)
    assert refused.value.kind == "too-large" and refused.value.size > 100
    assert isinstance(refused.value, ProtocolError)
    with pytest.raises(DaemonError, match="at most 8 MB") as err:
        client.frame(["x" * (frames.MAX_FRAME + 1)])
    assert err.value.kind == "too-large"


def test_a_malformed_payload_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError):
        frames.read_payload(b"(unbalanced")
