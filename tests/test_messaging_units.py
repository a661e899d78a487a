"""The messaging faces' parts on their own: settings, the Bot API's and signal-cli's
messages read, Server-Sent Events, the exit every text takes (secrets masked, private
text withheld, cut to size), the doctor's lines, and the clients against the fakes."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_signal import ACCOUNT, FakeSignal
from fake_telegram import TOKEN, FakeTelegram

from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.faces.messaging.boundary import pieces
from passepartout.faces.messaging.checks import messaging_checks
from passepartout.faces.messaging.relay import TYPED_ANSWER, Relay, _Reply, session_id
from passepartout.faces.messaging.run import configured
from passepartout.faces.messaging.settings import (
    TELEGRAM_API,
    SignalSettings,
    TelegramSettings,
    signal_settings,
    telegram_settings,
)
from passepartout.faces.messaging.signal_cli import SignalRPC, SignalTransport, _sse, parse_event
from passepartout.faces.messaging.telegram import BotAPI, TelegramTransport, parse_update
from passepartout.faces.messaging.transport import Answer, Message, TransportError
from passepartout.protocol import Chunk, ToolCalled, ToolDenied, ToolFinished, TurnError
from passepartout.security.outbound import outbound_text
from passepartout.security.privacy import index as private_index
from passepartout.security.vault import Vault, get_vault, set_vault

ME = "+15551234567"


# -- settings ---------------------------------------------------------------------------


def test_each_face_is_off_until_configured() -> None:
    assert telegram_settings({}) is None and signal_settings({}) is None
    assert configured({}) == []


def test_good_settings_are_read() -> None:
    telegram = telegram_settings({"PASSEPARTOUT_TELEGRAM_TOKEN": TOKEN,
                                  "PASSEPARTOUT_TELEGRAM_CHATS": "42, -1001234;7",
                                  "PASSEPARTOUT_TELEGRAM_NOTIFY": "on"})
    assert telegram == TelegramSettings(TOKEN, frozenset({"42", "-1001234", "7"}),
                                        TELEGRAM_API, True)
    assert TOKEN not in repr(telegram) and TOKEN.split(":")[1] not in repr(telegram)
    signal = signal_settings({"PASSEPARTOUT_SIGNAL_ACCOUNT": ACCOUNT,
                              "PASSEPARTOUT_SIGNAL_NUMBERS": ME,
                              "PASSEPARTOUT_SIGNAL_URL": "http://127.0.0.1:7583/"})
    assert signal == SignalSettings("http://127.0.0.1:7583", ACCOUNT, frozenset({ME}))


@pytest.mark.parametrize(("settings", "variable"), [
    ({"PASSEPARTOUT_TELEGRAM_TOKEN": "not-a-token"}, "PASSEPARTOUT_TELEGRAM_TOKEN"),
    ({"PASSEPARTOUT_TELEGRAM_TOKEN": TOKEN}, "PASSEPARTOUT_TELEGRAM_CHATS"),
    ({"PASSEPARTOUT_TELEGRAM_TOKEN": TOKEN, "PASSEPARTOUT_TELEGRAM_CHATS": "@me"},
     "PASSEPARTOUT_TELEGRAM_CHATS"),
    ({"PASSEPARTOUT_TELEGRAM_TOKEN": TOKEN, "PASSEPARTOUT_TELEGRAM_CHATS": "1",
      "PASSEPARTOUT_TELEGRAM_API": "file:///etc"}, "PASSEPARTOUT_TELEGRAM_API"),
    ({"PASSEPARTOUT_TELEGRAM_TOKEN": TOKEN, "PASSEPARTOUT_TELEGRAM_CHATS": "1",
      "PASSEPARTOUT_TELEGRAM_NOTIFY": "sometimes"}, "PASSEPARTOUT_TELEGRAM_NOTIFY"),
    ({"PASSEPARTOUT_SIGNAL_ACCOUNT": "me"}, "PASSEPARTOUT_SIGNAL_ACCOUNT"),
    ({"PASSEPARTOUT_SIGNAL_ACCOUNT": ACCOUNT}, "PASSEPARTOUT_SIGNAL_NUMBERS"),
    ({"PASSEPARTOUT_SIGNAL_ACCOUNT": ACCOUNT, "PASSEPARTOUT_SIGNAL_NUMBERS": "0612345678"},
     "PASSEPARTOUT_SIGNAL_NUMBERS"),
])
def test_a_bad_setting_is_named(settings: dict[str, str], variable: str) -> None:
    read = telegram_settings if "PASSEPARTOUT_TELEGRAM_TOKEN" in settings else signal_settings
    with pytest.raises(ConfigError) as caught:
        read(settings)
    assert caught.value.fields["variable"] == variable
    assert TOKEN not in caught.value.message


def test_a_face_with_bad_settings_stays_off_and_the_log_and_doctor_say_why(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    extra = {"PASSEPARTOUT_TELEGRAM_TOKEN": TOKEN, "PASSEPARTOUT_TELEGRAM_CHATS": "me",
             "PASSEPARTOUT_SIGNAL_ACCOUNT": ACCOUNT, "PASSEPARTOUT_SIGNAL_NUMBERS": ME}
    with caplog.at_level(logging.ERROR):
        found = configured(extra)
    try:
        assert [transport.name for transport, _, _ in found] == ["signal"]
    finally:
        for transport, _, _ in found:
            transport.close()
    assert "the telegram face is off: PASSEPARTOUT_TELEGRAM_CHATS" in caplog.text
    from passepartout.cli.doctor import Check, _messaging_checks

    config = Config.from_mapping({"PASSEPARTOUT_HOME": str(tmp_path), **extra})
    checks = [Check(*c) for c in _messaging_checks(config)]
    assert [(c.name, c.ok) for c in checks] == [("telegram face", False), ("signal face", True)]
    assert "fix: set PASSEPARTOUT_TELEGRAM_TOKEN" in checks[0].line()
    assert f"on: {ACCOUNT} through http://127.0.0.1:8080" in checks[1].line()
    assert messaging_checks(Config.from_mapping({"PASSEPARTOUT_HOME": str(tmp_path)})) == []


# -- what arrives -----------------------------------------------------------------------


def _message(chat: int, sender: int, **extra: object) -> dict[str, object]:
    return {"update_id": 1, "message": {"message_id": 5, "chat": {"id": chat},
                                        "from": {"id": sender}, **extra}}


def test_telegram_updates_are_read() -> None:
    assert parse_update(_message(42, 42, text="hi"), "n0nce") == Message("42", "42", "hi")
    assert parse_update(_message(-100, 42, photo=[{}]), "n0nce") == Message("-100", "42", "")
    assert parse_update({"update_id": 2, "edited_message": {}}, "n0nce") is None
    assert parse_update(_message(True, 42, text="hi"), "n0nce") is None  # type: ignore[arg-type]

    def press(data: str) -> Answer | Message | None:
        return parse_update({"update_id": 3, "callback_query": {
            "id": "q1", "data": data, "from": {"id": 42},
            "message": {"message_id": 9, "chat": {"id": 42}}}}, "n0nce")

    assert press("approve:n0nce:3:yes") == Answer("42", "42", 3, True, ("q1", "9"))
    assert press("approve:n0nce:3:no") == Answer("42", "42", 3, False, ("q1", "9"))
    assert press("approve:other:3:yes") == Answer("42", "42", 0, True, ("q1", "9"))  # stale
    assert press("approve:n0nce:x:yes") is None and press("approve:n0nce:3:maybe") is None


def test_signal_events_are_read() -> None:
    allowed = frozenset({ME, "aci-1"})
    envelope = {"source": ME, "sourceNumber": ME, "sourceUuid": "aci-1",
                "dataMessage": {"message": "hi"}}
    assert parse_event({"envelope": envelope}, allowed) == Message(ME, ME, "hi")
    wrapped = {"jsonrpc": "2.0", "method": "receive", "params": {"envelope": envelope}}
    assert parse_event(wrapped, allowed) == Message(ME, ME, "hi")
    subscribed = {"params": {"subscription": 0, "result": {"envelope": envelope}}}
    assert parse_event(subscribed, allowed) == Message(ME, ME, "hi")
    hidden = {"envelope": {"sourceUuid": "aci-1", "dataMessage": {"message": "hi"}}}
    assert parse_event(hidden, allowed) == Message("aci-1", "aci-1", "hi")
    by_aci = {"envelope": {**envelope, "sourceNumber": "+15550001111"}}
    assert parse_event(by_aci, allowed) == Message("aci-1", "aci-1", "hi")
    group = {"envelope": {**envelope, "dataMessage": {"message": "hi", "groupInfo": {}}}}
    assert parse_event(group, allowed) is None
    receipt = {"envelope": {"source": ME, "receiptMessage": {"isDelivery": True}}}
    assert parse_event(receipt, allowed) is None


def test_server_sent_events_are_parsed() -> None:
    rpc = SignalRPC("http://127.0.0.1:1", ACCOUNT)
    lines = [":", "id:7", "event:receive", 'data:{"a":', 'data: 1}', "", "event:other",
             'data:{"b":2}', "", "data:not json", "", 'data:{"c":3}', ""]
    assert list(_sse(iter(lines), rpc)) == [{"a": 1}, {"c": 3}]
    assert rpc.last_event_id == "7"
    rpc.close()


def test_a_typed_answer_is_recognised() -> None:
    assert TYPED_ANSWER.fullmatch("yes 3") and TYPED_ANSWER.fullmatch("No #12")
    assert TYPED_ANSWER.fullmatch("Yes.") and TYPED_ANSWER.fullmatch("n")
    assert not TYPED_ANSWER.fullmatch("yes 3 please") and not TYPED_ANSWER.fullmatch("nope")
    assert session_id("signal", "+33 6/12") == "signal-33612"


# -- what leaves --------------------------------------------------------------------------


def test_a_reply_summarises_tool_calls_and_never_their_output() -> None:
    reply = _Reply()
    for event in (Chunk("s", "t", "Let me "), Chunk("s", "t", "look."),
                  ToolCalled("s", "t", "shell", {"cmd": "cat " + "x" * 100}),
                  ToolFinished("s", "t", "shell", True, output="SECRET DATA"),
                  ToolDenied("s", "t", "write-file", reason="refused by policy"),
                  Chunk("s", "t", "Done."), TurnError("s", "t", "llm-error", "too slow")):
        reply.add(event)
    lines = reply.text().splitlines()
    assert lines[0] == "Let me look."
    assert lines[1].startswith("[shell] cat xxx") and lines[1].endswith("... (ok)")
    assert len(lines[1]) < 80
    assert lines[2:] == ["[denied] write-file: refused by policy", "Done.", "Error: too slow"]
    assert "SECRET DATA" not in reply.text()


@pytest.fixture
def vault() -> Iterator[Vault]:
    previous = get_vault()
    try:
        yield set_vault(Vault({"BANK_PASSWORD": "hunter2-correct-horse"}))
    finally:
        set_vault(previous)


@pytest.mark.attack
def test_what_leaves_is_masked_and_private_text_withheld(vault: Vault) -> None:
    index = private_index.current()
    source = "/nonexistent/messaging-test-diary.org"
    index.learn_text(source, "* Diary :@personal:\nI still dream of the lighthouse keeper\n")
    try:
        sent = outbound_text("Your password is hunter2-correct-horse and your diary says: "
                        "I still dream of the lighthouse keeper")
    finally:
        index.learn(source, [])
    assert "hunter2" not in sent and "[secret:BANK_PASSWORD]" in sent
    assert "lighthouse" not in sent and "[private: withheld]" in sent


def test_long_texts_are_cut_at_line_ends() -> None:
    text = "\n".join(f"line {i} " + "word " * 30 for i in range(100))
    cut = pieces(text, 4096)
    assert all(len(p) <= 4096 for p in cut) and len(cut) > 1
    assert "\n".join(cut).split() == text.split()
    assert pieces("x" * 5000, 2000) == ["x" * 2000, "x" * 2000, "x" * 1000]
    assert pieces("   ", 10) == []


# -- the clients against the fakes --------------------------------------------------------


@pytest.fixture
def fake_telegram() -> Iterator[FakeTelegram]:
    fake = FakeTelegram().start()
    try:
        yield fake
    finally:
        fake.close()


@pytest.fixture
def fake_signal() -> Iterator[FakeSignal]:
    fake = FakeSignal().start()
    try:
        yield fake
    finally:
        fake.close()


@pytest.mark.attack
def test_the_bot_api_client_hides_its_token(
    fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "987654321:" + "B" * 35
    api = BotAPI(wrong, fake_telegram.url, poll=0)
    with caplog.at_level(logging.INFO, logger="httpx"), pytest.raises(TransportError) as caught:
        api.call("getMe")
    api.close()
    assert "Unauthorized" in caught.value.message and wrong not in caught.value.message
    assert "B" * 35 not in caplog.text and "[telegram token]" in caplog.text


def test_a_long_reply_goes_as_several_messages(fake_telegram: FakeTelegram) -> None:
    transport = TelegramTransport(TelegramSettings(TOKEN, frozenset({"42"}),
                                                   fake_telegram.url), poll=0)
    fake_telegram.limit_next("sendMessage", retry_after=1)  # the burst is slowed down
    try:
        transport.send("42", "word " * 2000)
    finally:
        transport.close()
    sent = fake_telegram.to(42)
    assert len(sent) == 3 and all(len(s.text) <= 4096 for s in sent)
    assert " ".join(s.text for s in sent).split() == ["word"] * 2000


def test_signal_events_resume_after_the_last_one_seen(fake_signal: FakeSignal) -> None:
    transport = SignalTransport(SignalSettings(fake_signal.url, ACCOUNT, frozenset({ME})))
    try:
        fake_signal.says(ME, "before")  # before the client: never sent to it
        later = threading.Thread(target=lambda: (fake_signal.wait_streaming(),
                                                 fake_signal.says(ME, "first")))
        later.start()
        events = transport.rpc.events()
        assert next(events)["envelope"]["dataMessage"]["message"] == "first"
        later.join()
        events.close()  # the connection drops
        fake_signal.says(ME, "second")
        events = transport.rpc.events()
        assert next(events)["envelope"]["dataMessage"]["message"] == "second"
        events.close()
        transport.send(ME, "hello")
        assert fake_signal.sent[-1].message == "hello"
        transport.rpc.account = "+15559999999"
        with pytest.raises(TransportError, match="does not exist"):
            transport.send(ME, "from nobody")
    finally:
        transport.close()


def test_a_strangers_flood_is_one_log_line_in_ten_minutes(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    class Stub:
        name = "signal"

    clock = [1000.0]
    monkeypatch.setattr("passepartout.faces.messaging.relay.time.monotonic", lambda: clock[0])
    relay = Relay(face=None, transport=Stub(), allowed=frozenset({"+1555"}))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="passepartout.faces.messaging.relay"):
        for _ in range(500):
            relay.handle(Message("+1666", "+1666\n[fake] allowed", "run rm -rf ~"))
        clock[0] += 601
        relay.handle(Message("+1666", "+1666", "again"))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "\n" not in lines[0] and "+1666 [fake] allowed" in lines[0]
    assert lines[1].endswith("; 499 more from it ignored since the last line")


def test_a_message_sent_long_ago_is_answered_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stub:
        name = "signal"

        def __init__(self) -> None:
            self.sent: list[tuple[str, str]] = []

        def send(self, chat: str, text: str) -> None:
            self.sent.append((chat, text))

    stub = Stub()
    relay = Relay(face=None, transport=stub, allowed=frozenset({"+1555"}))  # type: ignore[arg-type]
    ran: list[str] = []
    monkeypatch.setattr(relay, "_chat", lambda chat: type("Q", (), {"put": ran.append})())
    envelope = FakeSignal.envelope_for("+1555", "yes 3", sent_ms=1_000_000)  # 1970
    old = parse_event({"envelope": envelope}, frozenset({"+1555"}))
    assert isinstance(old, Message) and old.sent == 1000.0
    relay.handle(old)
    relay.handle(Message("+1555", "+1555", "now", time.time()))
    relay.handle(Message("+1555", "+1555", "no time said"))
    assert ran == ["now", "no time said"]
    assert len(stub.sent) == 1 and "was not run" in stub.sent[0][1]
