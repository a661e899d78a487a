"""The Emacs channel with a recording peer: events to callbacks, approvals, sessions."""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from passepartout import protocol
from passepartout.errors import PipelineError
from passepartout.loop import Action, ApprovalRequest
from passepartout.loop.actions import Answer
from passepartout.loop.events import (
    ApprovalAsked,
    Chunk,
    Denied,
    Done,
    Error,
    Notice,
    Reply,
    ToolCall,
    ToolResult,
)
from passepartout.server.peer import PeerChannel
from passepartout.signals import Keyword, Signal, Symbol
from passepartout.turn import TurnContext, TurnState


@dataclass
class RecordingPeer:
    approval_timeout: float | None = None
    closed: bool = False
    calls: list[tuple[str, list[Any]]] = field(default_factory=list)
    asked: threading.Event = field(default_factory=threading.Event)

    def call(self, method: str, args: list[Any]) -> bool:
        assert method in protocol.EVENT_NAMES
        if self.closed:
            return False
        self.calls.append((method, args))
        if method == protocol.APPROVAL:
            self.asked.set()
        return True


RECORDS: dict[tuple[str | None, str | None], TurnState] = {}


@pytest.fixture(autouse=True)
def _fresh_records() -> None:
    RECORDS.clear()


def chat(session: str | None = "s1", turn: str | None = "t1") -> Signal:
    """A signal of the turn ``turn``: the signals of one turn share its record, as the
    loop's do."""
    record = RECORDS.setdefault((session, turn), TurnState())
    context = TurnContext(face="emacs", session_id=session, turn_id=turn, state=record)
    return Signal(payload={"sensor": Keyword("user-input"), "text": "hi"}, turn=context)


@pytest.fixture
def bound() -> tuple[PeerChannel, RecordingPeer]:
    channel, peer = PeerChannel(), RecordingPeer()
    channel.peer_opened(peer)
    channel.bind("s1", peer)
    return channel, peer


def test_stream_then_reply_shows_the_text_once(bound: tuple[PeerChannel, RecordingPeer]) -> None:
    channel, peer = bound
    for text in ("Hel", "lo"):
        channel.send(chat(), Chunk(text))
    channel.send(chat(), Reply("Hello"))
    channel.send(chat(), Done(False))
    assert peer.calls == [(protocol.CHUNK, ["s1", "t1", "Hel"]),
                          (protocol.CHUNK, ["s1", "t1", "lo"]),
                          (protocol.DONE, ["s1", "t1", {"cancelled": False}])]


def test_a_reply_longer_than_its_stream_sends_the_rest(
    bound: tuple[PeerChannel, RecordingPeer]
) -> None:
    channel, peer = bound
    channel.send(chat(), Chunk("Hel"))
    channel.send(chat(), Reply("Hello"))
    assert peer.calls[-1] == (protocol.CHUNK, ["s1", "t1", "lo"])


def test_an_unstreamed_reply_is_one_chunk_and_tools_start_a_new_stream(
    bound: tuple[PeerChannel, RecordingPeer]
) -> None:
    channel, peer = bound
    channel.send(chat(), Chunk("Let me look."))
    channel.send(chat(), ToolCall("read-file", {"path": "/x"}, "c"))
    channel.send(chat(), ToolResult("read-file", True, "data", "c"))
    channel.send(chat(), Reply("It says data."))
    names = [c[0] for c in peer.calls]
    assert names == [protocol.CHUNK, protocol.TOOL, protocol.TOOL, protocol.CHUNK]
    assert peer.calls[1][1][2] == {"event": Symbol("tool"), "name": "read-file",
                                   "args": {"path": "/x"}, "call-id": "c"}
    assert peer.calls[2][1][2]["event"] == "tool-result" and peer.calls[2][1][2]["ok"] is True
    assert peer.calls[3][1] == ["s1", "t1", "It says data."]


def test_errors_denials_and_notices(bound: tuple[PeerChannel, RecordingPeer]) -> None:
    channel, peer = bound
    channel.send(chat(), Error("llm-error", "rate limited"))
    channel.send(chat(), Denied("shell(cmd='rm')", "no"))
    channel.send(chat(), ApprovalAsked("x", "y"))  # approve() asks instead
    channel.send(chat(), Notice("saved", "info"))
    assert peer.calls == [
        (protocol.ERROR, ["s1", "t1", "llm-error", "rate limited"]),
        (protocol.TOOL, ["s1", "t1", {"event": Symbol("denied"), "name": "shell(cmd='rm')",
                                "reason": "no"}]),
        (protocol.NOTIFY, [Symbol("info"), "saved"]),
    ]


def test_events_without_a_chat_become_notices_for_every_connection() -> None:
    channel, first, second = PeerChannel(), RecordingPeer(), RecordingPeer()
    channel.peer_opened(first)
    channel.peer_opened(second)
    channel.send(chat(None, None), Reply("hook ran"))
    channel.send(chat(None, None), Error("pipeline-error", "boom"))
    for peer in (first, second):
        assert peer.calls == [(protocol.NOTIFY, [Symbol("info"), "hook ran"]),
                              (protocol.NOTIFY, [Symbol("error"), "pipeline-error: boom"])]


def test_events_of_a_session_nobody_holds_are_dropped() -> None:
    channel, peer = PeerChannel(), RecordingPeer()
    channel.peer_opened(peer)
    channel.send(chat("other"), Chunk("x"))
    assert peer.calls == []


def test_a_turns_events_go_to_the_client_that_sent_it() -> None:
    """Two clients on one session: each turn's events go to its sender, which its
    record carries (no table of turns in the channel); a sender gone, to the client
    showing the session."""
    channel, first, second = PeerChannel(), RecordingPeer(), RecordingPeer()
    for peer in (first, second):
        channel.peer_opened(peer)
    RECORDS[("s1", "t1")] = channel.sent_by("s1", first)
    RECORDS[("s1", "t2")] = channel.sent_by("s1", second)  # shows the session now
    channel.send(chat("s1", "t1"), Chunk("to the first"))
    channel.send(chat("s1", "t2"), Chunk("to the second"))
    assert first.calls == [(protocol.CHUNK, ["s1", "t1", "to the first"])]
    assert second.calls == [(protocol.CHUNK, ["s1", "t2", "to the second"])]
    first.closed = True
    channel.peer_closed(first)
    channel.send(chat("s1", "t1"), Done(False))
    assert second.calls[-1][0] == protocol.DONE and second.calls[-1][1][1] == "t1"


def request(session: str | None = "s1", name: str = "write-file") -> ApprovalRequest:
    action = Action("tool", name=name, args={"path": "/tmp/f", "code": "(+ 1 1)"})
    return ApprovalRequest(action, ("dispatcher: high-impact",), chat(session))


def answer_when_asked(channel: PeerChannel, peer: RecordingPeer, value: Any) -> threading.Thread:
    def run() -> None:
        assert peer.asked.wait(5)
        approval_id = next(a for m, a in peer.calls if m == protocol.APPROVAL)[0]
        assert channel.answer(approval_id, protocol.decode_answer(value))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.parametrize("value,granted", [(True, True), (None, False), ("t", False),
                                          (1, False), ([Keyword("value"), "x"], False)])
def test_only_t_or_an_evaluation_plist_is_yes(
    bound: tuple[PeerChannel, RecordingPeer], value: Any, granted: bool
) -> None:
    channel, peer = bound
    thread = answer_when_asked(channel, peer, value)
    assert channel.approve(request()) is granted
    thread.join()
    _, session, turn, description, info = peer.calls[0][1]
    assert (session, turn) == ("s1", "t1") and "write-file" in description
    assert info["kind"] == Symbol("write-file") and info["reasons"] == ["dispatcher: high-impact"]
    assert "code" not in info
    assert channel.pending_approvals() == 0


def test_an_emacs_eval_result_comes_with_the_yes(
    bound: tuple[PeerChannel, RecordingPeer]
) -> None:
    channel, peer = bound
    req = request(name="emacs-eval")
    thread = answer_when_asked(channel, peer, [Keyword("ok"), True, Keyword("value"), "2"])
    assert channel.approve(req) is True
    thread.join()
    assert peer.calls[0][1][4]["code"] == "(+ 1 1)"
    assert channel.take_result(req.action.digest()) == {"ok": True, "value": "2"}
    assert channel.take_result(req.action.digest()) is None


def test_the_emacs_eval_service_returns_what_emacs_evaluated(
    bound: tuple[PeerChannel, RecordingPeer]
) -> None:
    channel, peer = bound
    action = Action("tool", name="emacs-eval", args={"code": "(+ 1 1)"})
    thread = answer_when_asked(channel, peer, [Keyword("ok"), True, Keyword("value"), "2"])
    assert channel.approve(ApprovalRequest(action, ("high-impact",), chat())) is True
    thread.join()
    assert channel.evaluation("(+ 1 1)") == "2"
    with pytest.raises(PipelineError, match="did not evaluate"):
        channel.evaluation("(+ 1 1)")  # a result is used once


def test_no_answer_in_time_is_no_and_says_so(bound: tuple[PeerChannel, RecordingPeer]) -> None:
    channel, peer = bound
    peer.approval_timeout = 0.1
    assert channel.approve(request()) is False
    assert peer.calls[-1][0] == protocol.NOTIFY and "No answer in 0.1 s" in peer.calls[-1][1][1]
    approval_id = peer.calls[0][1][0]
    assert channel.answer(approval_id, protocol.Allow()) is False  # too late


@pytest.mark.parametrize("how", ["close", "stop"])
def test_a_closed_connection_or_a_stop_is_no_at_once(
    bound: tuple[PeerChannel, RecordingPeer], how: str
) -> None:
    channel, peer = bound
    peer.approval_timeout = 30

    def end() -> None:
        assert peer.asked.wait(5)
        if how == "close":
            peer.closed = True
            channel.peer_closed(peer)
        else:
            channel.stop()

    thread = threading.Thread(target=end)
    thread.start()
    started = time.monotonic()
    assert channel.approve(request()) is False
    assert time.monotonic() - started < 5
    thread.join()
    assert channel.approve(request()) is False  # nobody to ask, or stopping


def test_without_a_connection_nothing_is_approved() -> None:
    assert PeerChannel().approve(request()) is False


def test_a_background_approval_asks_the_latest_connection() -> None:
    channel, old, new = PeerChannel(), RecordingPeer(), RecordingPeer()
    channel.peer_opened(old)
    channel.peer_opened(new)
    thread = answer_when_asked(channel, new, True)
    assert channel.approve(request(session=None)) is True
    thread.join()
    assert old.calls == [] and new.calls[0][1][1] is None


def test_closing_forgets_the_sessions_of_the_connection(
    bound: tuple[PeerChannel, RecordingPeer]
) -> None:
    channel, peer = bound
    assert channel.sessions() == ["s1"]
    channel.peer_closed(peer)
    assert channel.sessions() == [] and channel.peers() == []
    assert channel.peer_for("s1") is None


@pytest.mark.parametrize("value,heard", [
    (True, Answer(True, False, "emacs", "")),
    ([Keyword("allow"), True, Keyword("always"), True], Answer(True, True, "emacs", "")),
    ([Keyword("allow"), None, Keyword("always"), True],
     Answer(False, True, "emacs", "refused always")),
    (None, Answer(False, False, "emacs", "refused")),
    ([Keyword("allow"), None, Keyword("reason"), "quit"], Answer(False, False, "emacs", "quit")),
])
def test_the_turn_hears_how_the_face_answered(
    bound: tuple[PeerChannel, RecordingPeer], value: Any, heard: Answer
) -> None:
    channel, peer = bound
    said: list[Answer] = []
    thread = answer_when_asked(channel, peer, value)
    channel.approve(dataclasses.replace(request(), heard=said.append))
    thread.join()
    assert said == [heard]


def test_the_turn_hears_that_nobody_answered(bound: tuple[PeerChannel, RecordingPeer]) -> None:
    channel, peer = bound
    peer.approval_timeout = 0.1
    said: list[Answer] = []
    assert channel.approve(dataclasses.replace(request(), heard=said.append)) is False
    assert said == [Answer(False, by="", reason="no answer in time")]
