"""The scribe on a scratch memex, against the fake model: the day's chat and events
become one cognition-tier call, booked on the scribe's heading, and a dated note with
links back, proposed through org-add-heading; a run with nothing new asks no model;
events of private headings never reach the prompt."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path

import pytest
from background_agent import SimClock, allow_rules, make_agent, run_job, wait_until
from fakellm import FakeLLM
from passepartout.org.eventlog import Entry, EventLog

from passepartout.background.scribe import Scribe, read_events

DIARY = """* Diary                                                           :@personal:
** Mood
:PROPERTIES:
:ID: mood-1
:HOOK: notify
:END:
"""


@pytest.fixture
def model_env(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    return fake_llm


def test_the_days_material_becomes_one_note_with_links_back(
        tmp_path: Path, env: dict[str, str], model_env: FakeLLM) -> None:
    memex = Path(env["MEMEX_DIR"])
    allow_rules(Path(env["PASSEPARTOUT_CONFIG_DIR"]), memex, "org-add-heading")
    clock = SimClock(dt.datetime.now().astimezone())
    agent = make_agent(tmp_path, env, {"projects/diary.org": DIARY}, clock)
    try:
        # The day so far was noted (the start-up's own events among it).
        start = clock.now = (dt.datetime.now().astimezone() + dt.timedelta(seconds=1)
                             ).replace(microsecond=0)
        agent.services["background"].save("scribe", {"since": start.isoformat()})
        time.sleep(max(0.0, start.timestamp() - time.time()))  # chats from now on are new
        sessions = agent.services["sessions"]
        sessions.append("chat-42", {"role": "user", "content": "Book the venue for May 3."},
                        {"role": "assistant", "content": "Booked: Hall B, May 3."})
        events = agent.services["orchestrator"].events
        events.record(Entry("cron", "'Weekly review': done", "Three projects moved.",
                            node_id="review-1"))
        events.record(Entry("hook", "notify: 'Mood' changed", "feeling grim",
                            node_id="mood-1"))
        model_env.for_model("gpt-4o-mini").reply(
            "- The venue is Hall B, May 3.\n* not a heading",
            usage={"prompt_tokens": 900, "completion_tokens": 40})
        clock.now = start + dt.timedelta(seconds=5)  # the run starts after the material
        result = run_job(agent, "scribe")
        assert result == "asked the cognition model for a note of 1 chat session(s) and 1 event(s)"
        notes = memex / "notes" / "scribe.org"
        text = wait_until(lambda: notes.exists() and "notes of the day" in notes.read_text()
                          and notes.read_text(), what="the note")
        assert "- The venue is Hall B, May 3.\n,* not a heading\n" in text
        assert "[[passepartout:chat-42][chat chat-42]] (2 message(s))" in text
        assert "events.org]] (1 event(s))" in text and ":SCRIBE_FROM:" in text
        prompt = json.dumps(model_env.last_request.messages)
        assert "Hall B" in prompt and "Weekly review" in prompt
        assert "grim" not in prompt and "Mood" not in prompt
        calls = agent.services["ledger"].calls()
        assert [(c.heading, c.origin, c.tier) for c in calls] == [
            ("passepartout-scribe", "cron", "cognition")]
        # Nothing new since the note: no model call.
        clock.now += dt.timedelta(seconds=5)
        again = run_job(agent, "scribe")
        assert again.startswith("nothing new since") and model_env.request_count == 1
        assert len(agent.services["ledger"].calls()) == 1
    finally:
        agent.shutdown()


def test_events_are_read_back_as_the_event_log_writes_them(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.org")
    log.record(Entry("cron", "'Digest': done", "line one\n* line two", node_id="d-1",
                     file="/m/x.org"))
    log.record(Entry("hook", "a title: with a colon"))
    items = read_events(tmp_path / "events.org", None)
    assert [(i.kind, i.title, i.node) for i in items] == [
        ("cron", "'Digest': done", "d-1"), ("hook", "a title: with a colon", None)]
    assert items[0].text == "line one\n,* line two"


@pytest.mark.attack
def test_a_notes_file_outside_the_memex_is_never_made(
        tmp_path: Path, env: dict[str, str]) -> None:
    agent = make_agent(tmp_path, env, {})
    try:
        scribe = Scribe(agent.services["background"])
        outside = tmp_path / "elsewhere" / "notes.org"
        scribe.start_notes(outside)
        assert not outside.exists() and not outside.parent.exists()
        memex = Path(env["MEMEX_DIR"])
        (memex / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
        scribe.start_notes(memex / "link" / "notes.org")
        assert not (tmp_path / "elsewhere").exists()
        scribe.start_notes(memex / "notes" / "not-org.txt")
        assert not (memex / "notes").exists()
        scribe.start_notes(memex / "notes" / "day.org")
        assert (memex / "notes" / "day.org").read_text() == "#+TITLE: Scribe notes\n"
    finally:
        agent.shutdown()
