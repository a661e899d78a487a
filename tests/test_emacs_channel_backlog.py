"""Several clients on one daemon: replies and approvals to the client whose session
asked, notices to every client, and the notices no client saw replayed (bounded, with
the Flight Plans waiting) to the next one that attaches and asks for them."""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout import protocol
from passepartout.config import Config
from passepartout.loop import Action, ApprovalRequest
from passepartout.loop.events import Chunk
from passepartout.server.backlog import Backlog, replay, waiting_flight_plans
from passepartout.server.methods import Bridge
from passepartout.server.peer import PeerChannel as EmacsChannel
from passepartout.signals import Keyword, Signal, Symbol


@dataclass(eq=False)  # peers are told apart by identity, as connections are
class Peer:
    approval_timeout: float | None = 5.0
    closed: bool = False
    calls: list[tuple[str, list[Any]]] = field(default_factory=list)

    def call(self, method: str, args: list[Any]) -> bool:
        assert method in protocol.EVENT_NAMES
        if self.closed:
            return False
        self.calls.append((method, args))
        return True

    def notices(self) -> list[str]:
        return [str(args[1]) for method, args in self.calls if method == protocol.NOTIFY]


def chat(session: str) -> Signal:
    return Signal(payload={"sensor": Keyword("user-input"), "text": "hi"},
                  meta={"source": Keyword("emacs"), "session-id": session, "turn-id": "t1"})


PLANS = """#+TITLE: Passepartout approvals
* TODO Run make
:PROPERTIES:
:ID: fp-1
:END:
* DONE Old one
:PROPERTIES:
:ID: fp-0
:END:
* TODO Delete the cache
:PROPERTIES:
:ID: fp-2
:END:
"""


def test_two_clients_each_get_their_own_replies_and_approvals() -> None:
    channel, a, b = EmacsChannel(), Peer(), Peer()
    for peer, session in ((a, "sa"), (b, "sb")):
        channel.peer_opened(peer)
        channel.face_attached(peer)
        channel.bind(session, peer)
    channel.send(chat("sa"), Chunk("for a"))
    channel.send(chat("sb"), Chunk("for b"))
    assert [args[2] for m, args in a.calls if m == protocol.CHUNK] == ["for a"]
    assert [args[2] for m, args in b.calls if m == protocol.CHUNK] == ["for b"]

    answers: list[bool] = []
    request = ApprovalRequest(Action("tool", name="shell", args={"command": "make"}),
                              ("high-impact",), chat("sb"))
    asking = threading.Thread(target=lambda: answers.append(channel.approve(request)))
    asking.start()
    while not any(m == protocol.APPROVAL for m, _ in b.calls):
        asking.join(0.01)
    assert not any(m == protocol.APPROVAL for m, _ in a.calls)  # only the session's client
    approval_id = next(args[0] for m, args in b.calls if m == protocol.APPROVAL)
    assert channel.answer(approval_id, protocol.Allow())
    asking.join(5)
    assert answers == [True]

    channel.notify("info", "cron: done")
    assert a.notices() == b.notices() == ["cron: done"]  # every client
    assert channel.backlog.take() == ([], 0)  # seen live: nothing kept for later


def test_notices_with_no_face_attached_wait_and_are_replayed_once(tmp_path: Path) -> None:
    config = Config(home=tmp_path / "home", memex_dir=tmp_path / "memex")
    (tmp_path / "memex" / "system").mkdir(parents=True)
    bridge = Bridge(config)
    cli = Peer()  # `passepartout status`: connected, but it shows no notices
    bridge.channel.peer_opened(cli)
    bridge.channel.notify("info", "cron: 'Backups' backups-1: done: fresh")
    bridge.channel.notify("warning", "hook: denied shell make")
    assert cli.notices() == ["cron: 'Backups' backups-1: done: fresh", "hook: denied shell make"]

    emacs = Peer()
    bridge.channel.peer_opened(emacs)
    bridge.welcome(emacs)
    shown = emacs.notices()
    assert len(shown) == 3
    assert shown[0].endswith("while no client was attached] cron: 'Backups' backups-1: done: "
                             "fresh")
    assert [args[0] for m, args in emacs.calls] == [Symbol("info"), Symbol("warning"),
                                                    Symbol("info")]
    assert shown[2] == ("While no client was attached: 2 notices (replayed; events.org has "
                        "them too)")

    bridge.channel.notify("info", "cron: seen live")  # a face is attached: not kept
    other = Peer()
    bridge.channel.peer_opened(other)
    bridge.welcome(other)
    assert other.notices() == []  # replayed once, to the first face only
    assert emacs.notices()[-1] == "cron: seen live"

    emacs.closed = True
    bridge.channel.peer_closed(emacs)
    other.closed = True
    bridge.channel.peer_closed(other)
    bridge.channel.notify("info", "cron: after everyone left")
    assert bridge.channel.backlog.take()[0][0].text == "cron: after everyone left"


def test_the_backlog_is_bounded_and_counts_what_fell_off() -> None:
    clock = iter(dt.datetime(2026, 1, 1, 9, m) for m in range(60))
    backlog = Backlog(size=3, clock=lambda: next(clock))
    for n in range(5):
        backlog.record("info", f"n{n}")
    notices, dropped = backlog.take()
    assert [n.text for n in notices] == ["n2", "n3", "n4"] and dropped == 2
    lines = replay(notices, dropped, 0, Path("/x/approvals.org"))
    assert lines[0] == ("info", "[09:02 while no client was attached] n2")
    assert lines[-1][1] == ("While no client was attached: 3 notices (replayed; 2 earlier "
                            "ones are only in events.org)")
    assert backlog.take() == ([], 0)


def test_waiting_flight_plans_are_counted_at_every_attach(tmp_path: Path) -> None:
    approvals = tmp_path / "approvals.org"
    assert waiting_flight_plans(approvals) == 0  # no file yet
    approvals.write_text(PLANS, encoding="utf-8")
    assert waiting_flight_plans(approvals) == 2
    assert replay([], 0, 2, approvals) == [
        ("info", f"While no client was attached: 2 Flight Plans wait in {approvals}")]
    assert replay([], 0, 1, approvals)[0][1].endswith(f"1 Flight Plan waits in {approvals}")
    assert replay([], 0, 0, approvals) == []  # nothing to say: nothing said

    config = Config(home=tmp_path / "home", memex_dir=tmp_path / "memex")
    (tmp_path / "memex" / "system").mkdir(parents=True)
    (tmp_path / "memex" / "system" / "approvals.org").write_text(PLANS, encoding="utf-8")
    bridge = Bridge(config)
    for _ in range(2):
        peer = Peer()
        bridge.channel.peer_opened(peer)
        bridge.welcome(peer)
        assert peer.notices() == [
            "While no client was attached: 2 Flight Plans wait in "
            f"{tmp_path / 'memex' / 'system' / 'approvals.org'}"]


def test_an_approval_of_no_session_goes_to_a_face_not_to_a_command_line_client() -> None:
    channel, emacs, cli = EmacsChannel(), Peer(), Peer()
    channel.peer_opened(emacs)
    channel.face_attached(emacs)
    channel.peer_opened(cli)  # `passepartout status`, connected after Emacs
    request = ApprovalRequest(Action("tool", name="shell", args={"command": "make"}),
                              ("high-impact",), Signal(payload={}, meta={}))
    answers: list[bool] = []
    asking = threading.Thread(target=lambda: answers.append(channel.approve(request)))
    asking.start()
    while not any(m == protocol.APPROVAL for m, _ in emacs.calls):
        asking.join(0.01)
    assert not any(m == protocol.APPROVAL for m, _ in cli.calls)
    channel.answer(next(args[0] for m, args in emacs.calls if m == protocol.APPROVAL),
                   protocol.Deny())
    asking.join(5)
    assert answers == [False]
