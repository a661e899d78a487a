"""The Signal face against the real daemon, the fake model and a fake of signal-cli's
HTTP JSON-RPC daemon on 127.0.0.1: a message gets its reply in its own session; an
approval is a numbered question, "no N" runs nothing and "yes N" runs it; a stranger's
message, a group's and a receipt get nothing and nothing runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from agents import wait_for
from daemon_proc import Daemons, scratch_daemons
from fake_signal import ACCOUNT, FakeSignal
from fakellm import FakeLLM

ME, ALSO = "+15551234567", "+15557654321"
STRANGER = "+15559999999"
APPROVAL_WAIT = 4  # seconds the daemon waits for an answer from the phone
ME_BY_ACI = "0b0e9a3e-1c6f-4d8e-9a55-2f6f0e6f1a11"  # a person listed by ACI, number hidden


@dataclass
class World:
    daemons: Daemons
    llm: FakeLLM
    signal: FakeSignal
    work: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("signal")
    with FakeLLM() as llm:
        signal = FakeSignal().start()
        try:
            for running in scratch_daemons(tmp, llm.base_url):
                (tmp / "work").mkdir()
                running.env.update(PASSEPARTOUT_WORKSPACE=str(tmp / "work"),
                                   PASSEPARTOUT_SIGNAL_URL=signal.url,
                                   PASSEPARTOUT_SIGNAL_ACCOUNT=ACCOUNT,
                                   PASSEPARTOUT_SIGNAL_NUMBERS=f"{ME},{ALSO};{ME_BY_ACI}",
                                   PASSEPARTOUT_APPROVAL_TIMEOUT=str(APPROVAL_WAIT))
                running.start()
                signal.wait_streaming()  # signal-cli sends no past events to a new client
                yield World(running, llm, signal, tmp / "work")
        finally:
            signal.close()


def test_a_message_gets_its_reply_in_its_own_session(world: World) -> None:
    world.llm.reply("Hello over Signal.")
    world.llm.reply("Hello, number hidden.")
    world.signal.says(ALSO, "hi")
    reply = world.signal.wait_sent(lambda s: s.recipient == ALSO)
    assert reply.message == "Hello over Signal." and reply.account == ACCOUNT
    typing = [r for r in world.signal.requests if r["method"] == "sendTyping"]
    assert typing and typing[0]["params"] == {"account": ACCOUNT, "recipient": [ALSO]}
    started = time.monotonic()
    world.signal.says(None, "hi", uuid=ME_BY_ACI)
    assert world.signal.wait_sent(lambda s: s.recipient == ME_BY_ACI).message == \
        "Hello, number hidden."
    took = time.monotonic() - started
    print(f"signal: message to reply, daemon warm: {took * 1000:.0f} ms")
    assert took < 5.0
    sessions = world.daemons.cli("sessions").stdout
    assert "signal-15557654321" in sessions and f"signal-{ME_BY_ACI}" in sessions


def test_an_approval_is_a_numbered_question_no_runs_nothing_yes_runs(world: World) -> None:
    llm, signal = world.llm, world.signal
    llm.tool_call("shell", {"cmd": "touch refused.txt"})
    llm.reply("Left alone.")
    llm.tool_call("shell", {"cmd": "touch granted.txt"})
    llm.reply("Touched.")

    signal.says(ME, "make a file")
    question = signal.wait_sent(lambda s: s.recipient == ME and "Approval" in s.message)
    assert "touch refused.txt" in question.message and '"yes 1"' in question.message
    signal.says(STRANGER, "yes 1")  # not theirs to answer
    signal.says(ME, "no 1")
    reply = signal.wait_sent(lambda s: "Left alone." in s.message)
    assert "[denied] shell" in reply.message
    assert any(s.message == "Approval 1 denied." for s in signal.to(ME))
    assert not (world.work / "refused.txt").exists()

    signal.says(ME, "make the other one")
    question = signal.wait_sent(lambda s: "touch granted.txt" in s.message)
    signal.says(ME, "Yes")  # bare: the one approval waiting in this chat
    reply = signal.wait_sent(lambda s: "Touched." in s.message)
    assert "[shell] touch granted.txt (ok)" in reply.message
    assert (world.work / "granted.txt").exists()
    signal.says(ME, "yes 2")  # answered already: nothing waits
    signal.wait_sent(lambda s: s.message == "No approval 2 is waiting here.")
    assert signal.to(STRANGER) == []


def test_an_approval_left_unanswered_is_refused_and_the_chat_is_told(world: World) -> None:
    llm, signal = world.llm, world.signal
    llm.tool_call("shell", {"cmd": "touch forgotten.txt"})
    llm.reply("Nothing done.")
    signal.says(ALSO, "make a file")
    question = signal.wait_sent(lambda s: "touch forgotten.txt" in s.message)
    number = question.message.split(":")[0].split()[-1]
    started = time.monotonic()
    reply = signal.wait_sent(lambda s: "Nothing done." in s.message, timeout=APPROVAL_WAIT + 20)
    assert time.monotonic() - started >= APPROVAL_WAIT - 1  # the phone's timeout, not 60 s
    assert f"(approval {number} was not answered, so it was refused)" in reply.message
    assert not (world.work / "forgotten.txt").exists()
    signal.says(ALSO, f"yes {number}")  # too late
    signal.wait_sent(lambda s: s.message == f"No approval {number} is waiting here.")
    assert not (world.work / "forgotten.txt").exists()


@pytest.mark.attack
def test_a_stranger_a_group_and_a_receipt_get_nothing_and_nothing_runs(world: World) -> None:
    llm, signal = world.llm, world.signal
    llm.reply("Just you.")
    before, sent = llm.request_count, len(signal.sent)
    signal.says(STRANGER, "run something for me")
    signal.says(ME, "in the group", group=True)
    signal.receipt(ME)
    signal.says(ME, "hello")  # handled after them: once answered, they were seen
    signal.wait_sent(lambda s: s.message == "Just you.")
    assert signal.to(STRANGER) == [] and len(signal.sent) == sent + 1
    assert llm.request_count == before + 1
    logs = wait_for(lambda: (lambda t: t if f"chat {STRANGER}" in t else None)(
        world.daemons.log()), 10, "the log line of the ignored message")
    assert "not an allowed chat" in str(logs)
