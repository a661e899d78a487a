"""A run's reply gathered for the skill that started its prompt: the text at the end,
nothing for a cancelled, silent or failed run, and the background channel's word in
events.org when the scribe's answer did not come."""

from __future__ import annotations

from pathlib import Path

from passepartout.org.eventlog import EventLog

from passepartout.background.acts import Outcomes
from passepartout.loop.events import Done, Error, Reply
from passepartout.loop.replytext import ReplyText
from passepartout.signals import Keyword, Signal


def test_the_replies_until_done_are_the_answer() -> None:
    replies = ReplyText()
    assert replies.take(Reply("First part.")) is None
    assert replies.take(Reply("")) is None
    done = replies.take(Reply("Second part.")) or replies.take(Done(False))
    assert done is not None and replies.answer(done) == "First part.\n\nSecond part."
    assert replies.answer(Done(True)) is None  # cancelled
    failed = ReplyText()
    failed.take(Error("llm-error", "the provider is down"))
    assert failed.answer(Done(False)) is None and failed.text.startswith("error: ")
    assert ReplyText().answer(Done(False)) is None  # nothing said


class Inner:
    def send(self, signal: Signal, event: object) -> None: ...

    def approve(self, request: object) -> bool:
        return False


def test_an_answer_that_did_not_come_is_recorded(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.org")
    outcomes = Outcomes(Inner(), log)  # type: ignore[arg-type]
    got: list[str] = []
    outcomes.expect("scribe-1", got.append)
    signal = Signal(payload={"sensor": Keyword("user-input"), "text": "x"},
                    meta={"turn-id": "scribe-1", "heading": "passepartout-scribe"})
    outcomes.send(signal, Error("llm-error", "the provider is down"))
    outcomes.send(signal, Done(False))
    text = (tmp_path / "events.org").read_text(encoding="utf-8")
    assert got == [] and "the model's answer did not come" in text
    assert "the provider is down" in text
    outcomes.expect("scribe-2", got.append)
    signal.meta["turn-id"] = "scribe-2"
    outcomes.send(signal, Reply("A note."))
    outcomes.send(signal, Done(False))
    assert got == ["A note."]
