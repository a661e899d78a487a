"""The one approval path: every ask goes through ``agent.approvals``, with one time limit."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from security_agent import Script, call, make_agent, user

from passepartout import protocol
from passepartout.events.dispatch import BackgroundChannel, Dispatcher
from passepartout.loop import Action, ApprovalRequest
from passepartout.loop.approvals import Approvals
from passepartout.loop.events import Event
from passepartout.loop.hooks import APPROVAL_ANSWERED, BACKGROUND_APPROVAL
from passepartout.server.peer import PeerChannel
from passepartout.signals import Keyword, Signal


@dataclass
class Face:
    """A channel that answers ``answer`` after ``delay`` seconds."""

    answer: bool = True
    delay: float = 0.0
    asked: list[ApprovalRequest] = field(default_factory=list)

    def send(self, signal: Signal, event: Event) -> None:
        pass

    def approve(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        time.sleep(self.delay)
        return self.answer


def ask(source: str, **meta: Any) -> ApprovalRequest:
    signal = Signal(payload={"sensor": Keyword("user-input")},
                    meta={"source": Keyword(source), "session-id": "s1", **meta})
    return ApprovalRequest(Action("tool", "write-file", {"path": "x"}), ("high-impact",), signal)


def test_the_face_of_the_signal_is_asked_with_the_one_time_limit() -> None:
    face, other = Face(), Face()
    heard: list[bool] = []
    approvals = Approvals({"emacs": face, "terminal": other}, timeout=7.5)
    approvals.hooks.attach(APPROVAL_ANSWERED, lambda r, granted: heard.append(granted),
                           owner="test")
    assert approvals(ask("emacs")) is True
    assert [r.timeout for r in face.asked] == [7.5] and other.asked == []
    assert heard == [True]


def test_a_face_that_does_not_answer_in_time_is_a_no() -> None:
    face = Face(answer=True, delay=2.0)
    heard: list[bool] = []
    approvals = Approvals({"emacs": face}, timeout=0.2)
    approvals.hooks.attach(APPROVAL_ANSWERED, lambda r, granted: heard.append(granted),
                           owner="test")
    assert approvals(ask("emacs")) is False  # not the face's yes, two seconds on
    assert heard == [False]


def test_a_face_that_fails_is_a_no() -> None:
    class Broken(Face):
        def approve(self, request: ApprovalRequest) -> bool:
            raise OSError("connection reset")

    assert Approvals({"emacs": Broken()})(ask("emacs")) is False


@pytest.mark.parametrize("meta", [{"source": "cron"}, {"source": "emacs", "origin": "hook"},
                                  {"source": "telegram"}])
def test_background_or_faceless_asks_go_to_the_background_handler(meta: dict[str, str]) -> None:
    face = Face()
    approvals = Approvals({"emacs": face})
    request = ask(**meta)  # type: ignore[arg-type]
    assert approvals(request) is False  # nobody to ask and no handler: no
    handed: list[ApprovalRequest] = []
    approvals.hooks.attach(BACKGROUND_APPROVAL, lambda r: handed.append(r) or False,
                           owner="test")
    assert approvals(request) is False
    assert len(handed) == 1 and face.asked == []


def test_the_emacs_channel_waits_no_longer_than_the_request_says() -> None:
    class Peer:
        closed = False
        approval_timeout = None

        def __init__(self) -> None:
            self.calls: list[tuple[str, list[Any]]] = []

        def call(self, method: str, args: list[Any]) -> bool:
            self.calls.append((method, args))
            return True

    channel, peer = PeerChannel(), Peer()
    channel.peer_opened(peer)
    channel.bind("s1", peer)
    request = ask("emacs")
    assert Approvals({"emacs": channel}, timeout=0.2)(request) is False
    deadline = time.monotonic() + 2
    while len(peer.calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # the channel's own wait ends at the same limit
    assert [m for m, _ in peer.calls] == [protocol.APPROVAL, protocol.NOTIFY]
    assert "No answer in 0.2 s" in peer.calls[-1][1][1]


def test_the_background_channel_asks_nobody(tmp_path: Path) -> None:
    dispatcher = Dispatcher.__new__(Dispatcher)  # the channel asks nothing of it here
    assert BackgroundChannel(dispatcher).approve(ask("cron")) is False


def test_the_agent_has_one_path_audited_and_flight_plans_for_cron(tmp_path: Path) -> None:
    script = Script([[call("write-file", path="a.txt", content="x")], [],
                     [call("write-file", path="b.txt", content="y")]])
    agent, chan = make_agent(tmp_path, script, PASSEPARTOUT_APPROVAL_TIMEOUT="4")
    try:
        assert agent.loop.approver is agent.approvals and agent.approvals.timeout == 4.0
        chan.answer = True
        agent.loop.process(user("chat"))
        assert [r.timeout for r in chan.asked] == [4.0]
        assert (tmp_path / "work" / "a.txt").read_text() == "x"
        agent.loop.process(user("job", source="cron", origin=Keyword("cron")))
        assert len(chan.asked) == 1  # a cron run asks nobody: a Flight Plan instead
        assert not (tmp_path / "work" / "b.txt").exists()
        assert len(agent.services["security"].book.plans()) == 1
        audit = [(e.decision, e.gate) for e in agent.services["security"].audit.entries()]
        assert ("allow", "approval") in audit and ("ask", "flightplan") in audit
    finally:
        agent.shutdown()


def test_a_hanging_face_is_cut_off_while_the_lane_goes_on(tmp_path: Path) -> None:
    release = threading.Event()
    script = Script([[call("write-file", path="o.txt", content="x")]])
    agent, chan = make_agent(tmp_path, script, PASSEPARTOUT_APPROVAL_TIMEOUT="0.3")
    chan.answer = lambda request: release.wait(10) or True  # a yes, ten seconds on
    try:
        agent.loop.process(user())
        assert not (tmp_path / "work" / "o.txt").exists()  # cut off before the yes
    finally:
        release.set()
        agent.shutdown()
