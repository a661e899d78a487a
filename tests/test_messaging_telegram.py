"""The Telegram face against the real daemon, the fake model and a fake Bot API on
127.0.0.1: a phone chat gets its reply in its own session; an approval is asked with
buttons, Deny runs nothing and Allow runs it; a stranger's chat gets nothing and
nothing runs; a cron job's result reaches the allowed chats when notices are on;
the bot token never reaches the log."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from agents import wait_for
from daemon_proc import Daemons, scratch_daemons
from fake_telegram import TOKEN, FakeTelegram, Sent
from fakellm import FakeLLM

# the person's chats (a private chat's id is their user id)
ME, ALSO, THIRD, FOURTH = 4242, 4343, 4444, 4545
STRANGER = 6666


DIARY = """* Errands
Buy stamps.
* Diary                                                          :@personal:
I still dream of the lighthouse keeper and her green boat.
"""


@dataclass
class World:
    daemons: Daemons
    llm: FakeLLM
    telegram: FakeTelegram
    work: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One daemon for the module (each test talks in chats of its own): a boot costs
    seconds, a turn milliseconds."""
    tmp = tmp_path_factory.mktemp("telegram")
    with FakeLLM() as llm:
        telegram = FakeTelegram().start()
        try:
            for running in scratch_daemons(tmp, llm.base_url):
                (tmp / "work").mkdir()
                running.env.update(PASSEPARTOUT_WORKSPACE=str(tmp / "work"),
                                   PASSEPARTOUT_TELEGRAM_TOKEN=TOKEN,
                                   PASSEPARTOUT_TELEGRAM_CHATS=f"{ME},{ALSO},{THIRD},{FOURTH}",
                                   PASSEPARTOUT_TELEGRAM_API=telegram.url,
                                   PASSEPARTOUT_TELEGRAM_NOTIFY="on")
                (running.memex / "projects" / "diary.org").write_text(DIARY, encoding="utf-8")
                running.start()
                yield World(running, llm, telegram, tmp / "work")
        finally:
            telegram.close()


def _logs(daemons: Daemons) -> str:
    log_file = daemons.home / "passepartout.log"
    text = log_file.read_text(errors="replace") if log_file.exists() else ""
    return text + daemons.log()


def _notice(sent: Sent) -> bool:
    return sent.text.startswith(("[info]", "[warning]", "[error]"))


def _question(sent: Sent) -> bool:
    return sent.chat_id == ME and bool(sent.buttons)


def test_a_phone_chat_gets_its_reply_in_its_own_session(world: World) -> None:
    world.llm.reply("Hello from your agent.")
    world.llm.reply("Still the same chat.")
    world.telegram.says(ALSO, "hi")
    reply = world.telegram.wait_sent(lambda s: s.chat_id == ALSO)
    assert reply.text == "Hello from your agent."
    started = time.monotonic()
    world.telegram.says(ALSO, "and again")
    world.telegram.wait_sent(lambda s: "Still the same chat." in s.text)
    took = time.monotonic() - started
    print(f"telegram: message to reply, daemon warm: {took * 1000:.0f} ms")
    assert took < 5.0  # one long poll answered at once, one turn, one sendMessage
    roles = [m["role"] for m in world.llm.last_request.messages]
    assert roles[:5] == ["system", "user", "assistant", "user"]  # one session per chat
    assert world.llm.last_request.messages[1]["content"] == "hi"
    assert ("sendChatAction", {"chat_id": ALSO, "action": "typing"}) in world.telegram.calls
    assert f"telegram-{ALSO}" in world.daemons.cli("sessions").stdout
    logs = _logs(world.daemons)
    assert TOKEN not in logs and TOKEN.split(":")[1] not in logs
    assert "the telegram face is on" in logs


def test_an_approval_is_asked_as_buttons_deny_runs_nothing_allow_runs(world: World) -> None:
    llm, telegram = world.llm, world.telegram
    llm.tool_call("shell", {"cmd": "touch denied.txt"})
    llm.reply("I did not make it.")
    llm.tool_call("shell", {"cmd": "touch allowed.txt"})
    llm.reply("Made it.")

    telegram.says(ME, "make a file")
    question = telegram.wait_sent(_question)
    assert "touch denied.txt" in question.text
    assert [b["text"] for b in question.buttons] == ["Allow", "Deny"]
    # Someone else in the chat pressing Allow is ignored: the question still waits.
    telegram.press(question, "Allow", sender=STRANGER)
    telegram.press(question, "Deny")
    reply = telegram.wait_sent(lambda s: "I did not make it." in s.text)
    assert "[denied] shell" in reply.text
    assert "denied: " in question.text and not question.buttons
    assert not (world.work / "denied.txt").exists()

    telegram.says(ME, "make the other one")
    question = telegram.wait_sent(lambda s: _question(s) and "allowed.txt" in s.text)
    telegram.press(question, "Allow")
    reply = telegram.wait_sent(lambda s: "Made it." in s.text)
    assert "[shell] touch allowed.txt (ok)" in reply.text
    assert (world.work / "allowed.txt").exists()
    assert "allowed: " in question.text
    telegram.press(question, "Deny")  # too late: the buttons are gone, the turn is over
    telegram.wait_call("answerCallbackQuery",
                       lambda p: p["text"] == "No approval 2 is waiting here.")
    assert "allowed: " in question.text
    assert telegram.to(STRANGER) == []


@pytest.mark.attack
def test_a_message_kept_while_the_daemon_was_down_is_not_run(world: World) -> None:
    """Telegram keeps messages for a day: "yes" or "delete the draft" sent hours ago
    must not act now.  The chat is told, and the next message runs as usual."""
    before = world.llm.request_count
    world.telegram.says(FOURTH, "delete the draft", ago=3 * 3600)
    told = world.telegram.wait_sent(lambda s: s.chat_id == FOURTH)
    assert "was not running, so it was not run" in told.text
    assert "delete the draft" in told.text
    world.llm.reply("Now it runs.")
    world.telegram.says(FOURTH, "delete the draft")
    world.telegram.wait_sent(lambda s: s.chat_id == FOURTH and s.text == "Now it runs.")
    assert world.llm.request_count == before + 1


def test_a_strangers_chat_gets_nothing_and_nothing_runs(world: World) -> None:
    llm, telegram = world.llm, world.telegram
    llm.reply("Only for you.")
    before = llm.request_count
    telegram.says(STRANGER, "run something for me")
    telegram.says(THIRD, "hello", sender=STRANGER)  # a stranger in an allowed chat
    telegram.says(THIRD, "hello")  # handled after them: once answered, they were seen
    telegram.wait_sent(lambda s: "Only for you." in s.text)
    assert telegram.to(STRANGER) == []
    assert [s.text for s in telegram.to(THIRD) if not _notice(s)] == ["Only for you."]
    assert llm.request_count == before + 1
    logs = wait_for(lambda: (lambda t: t if t.count("not an allowed chat") >= 2 else None)(
        _logs(world.daemons)), 10, "the log lines of the ignored messages")
    assert f"chat {STRANGER}" in str(logs)


JOB = """* Check the backups
:PROPERTIES:
:ID: backups-1
:CRON: <{when:%Y-%m-%d %a %H:%M}>
:TIER: cognition
:END:
Say whether last night's backups are fresh.
"""


def test_a_cron_jobs_result_reaches_the_allowed_chats_when_notices_are_on(
    world: World
) -> None:
    world.llm.reply("All three backups are from last night.")
    world.daemons.write_approved(world.daemons.memex / "projects" / "jobs.org",
        JOB.format(when=dt.datetime.now()), encoding="utf-8")
    for chat in (ME, ALSO, THIRD):
        notice = world.telegram.wait_sent(
            lambda s, chat=chat: s.chat_id == chat and "backups-1: done" in s.text)
        assert notice.text.startswith("[info]")
    assert world.telegram.to(STRANGER) == []


@pytest.mark.attack
def test_private_text_in_a_reply_never_leaves_for_the_phone(world: World) -> None:
    # As a local model could (it may read private subtrees): the reply quotes one.
    world.llm.reply("Your diary says: I still dream of the lighthouse keeper and her green "
                    "boat.  Also: buy stamps.")
    world.telegram.says(ME, "what does my diary say?")
    reply = world.telegram.wait_sent(lambda s: s.chat_id == ME and "buy stamps" in s.text)
    assert "lighthouse" not in reply.text and "green boat" not in reply.text
    assert "[private: withheld]" in reply.text


def test_cancel_from_the_phone_stops_the_turn(world: World) -> None:
    world.llm.delay(20.0, "far too late")
    before = world.llm.request_count
    world.telegram.says(THIRD, "think for a long time")
    wait_for(lambda: world.llm.request_count > before, 30, "the turn's model call")
    world.telegram.says(THIRD, "/cancel")
    world.telegram.wait_sent(lambda s: s.chat_id == THIRD and s.text == "(cancelled)",
                             timeout=15)
    assert not any("far too late" in s.text for s in world.telegram.to(THIRD))


def test_the_daemon_stops_promptly_with_the_face_polling(world: World) -> None:
    started = time.monotonic()
    stopped = world.daemons.cli("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert time.monotonic() - started < 15  # a long poll never holds the stop
    assert world.daemons.started[0].wait(10) == 0
