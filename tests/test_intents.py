"""Deterministic intent parsing: the commonest org requests read as tool calls."""

from __future__ import annotations

import datetime as dt

import pytest

from passepartout.events.timestamps import parse_timestamp
from passepartout.llm.intents import Intent, org_timestamp, parse

# A Monday evening: "every Monday at 9" is next week's, "tomorrow" is Tuesday.
NOW = dt.datetime(2026, 11, 23, 18, 0).astimezone()


def read(text: str) -> Intent | None:
    return parse(text, NOW)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("note: buy milk", "buy milk"),
        ("Note that the wifi password changed.", "the wifi password changed"),
        ("remember that the dentist moved to Friday", "the dentist moved to Friday"),
        ("remember to buy batteries", "buy batteries"),
        ("take a note: call mom", "call mom"),
        ("jot down: idea for a blog post", "idea for a blog post"),
        ("Please remember: the car is on level 3", "the car is on level 3"),
    ],
)
def test_a_note_is_captured(text: str, title: str) -> None:
    assert read(text) == Intent("remember", {"title": title})


def test_a_long_note_gets_a_short_title_and_keeps_its_text() -> None:
    text = "A first sentence. " + "word " * 40
    intent = read("note: " + text)
    assert intent is not None and intent.tool == "remember"
    assert intent.args["title"] == "A first sentence."
    assert intent.args["body"] == text.strip()


@pytest.mark.parametrize(
    ("text", "stamp", "task"),
    [
        ("every Monday at 9 remind me to water the plants",
         "<2026-11-30 Mon 09:00 +1w>", "water the plants"),
        ("remind me every Friday at 5pm to submit the timesheet",
         "<2026-11-27 Fri 17:00 +1w>", "submit the timesheet"),
        ("every day at 8am remind me to stretch", "<2026-11-24 Tue 08:00 +1d>", "stretch"),
        ("remind me to take out the trash every Tuesday evening",
         "<2026-11-24 Tue 18:00 +1w>", "take out the trash"),
        ("tomorrow at 10 remind me to call the bank", "<2026-11-24 Tue 10:00>", "call the bank"),
        ("every 2 weeks on Sunday at 18:00 remind me to review goals",
         "<2026-11-29 Sun 18:00 +2w>", "review goals"),
        ("daily at 7 remind me to meditate", "<2026-11-24 Tue 07:00 +1d>", "meditate"),
        ("set a reminder for tomorrow at 3pm to pay rent", "<2026-11-24 Tue 15:00>", "pay rent"),
        ("remind me on Thursday to email Anna", "<2026-11-26 Thu 09:00>", "email Anna"),
        ("each month remind me to pay the card", "<2026-11-24 Tue 09:00 +1m>", "pay the card"),
        ("every evening at 7 remind me to read", "<2026-11-23 Mon 19:00 +1d>", "read"),
    ],
)
def test_a_reminder_is_scheduled_with_an_org_timestamp(text: str, stamp: str, task: str) -> None:
    intent = read(text)
    assert intent == Intent("schedule", {"name": task, "timestamp": stamp,
                                         "prompt": f"Remind me to {task}"})
    assert parse_timestamp(stamp).format() == stamp  # what the schedule tool will accept


def test_today_at_a_later_hour_is_today() -> None:
    morning = dt.datetime(2026, 11, 23, 7, 0).astimezone()
    stamp = org_timestamp("every Monday at 9", morning)
    assert stamp is not None and stamp.format() == "<2026-11-23 Mon 09:00 +1w>"


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("what is due today", "today"),
        ("What's due today?", "today"),
        ("what's on my agenda this week?", "week"),
        ("show my agenda", "today"),
        ("what is scheduled for tomorrow?", "tomorrow"),
        ("what do I have today?", "today"),
        ("agenda", "today"),
    ],
)
def test_what_is_due_asks_the_agenda(text: str, day: str) -> None:
    assert read(text) == Intent("agenda", {"day": day})


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("search my notes for python", "python"),
        ("search notes for kubernetes setup", "kubernetes setup"),
        ("what did I write about the garden?", "the garden"),
        ("find notes about taxes", "taxes"),
        ("look up recipes in my notes", "recipes"),
        ("do I have any notes on the Lisbon trip?", "the Lisbon trip"),
    ],
)
def test_searching_the_notes_searches_memory(text: str, query: str) -> None:
    assert read(text) == Intent("memory-search", {"query": query})


@pytest.mark.parametrize(
    ("text", "pattern", "folder"),
    [
        ("grep for TODO in ~/src", "TODO", "~/src"),
        ("find FIXME in ./projects", "FIXME", "./projects"),
        ("search the files in ~/org for invoice", "invoice", "~/org"),
    ],
)
def test_searching_files_greps(text: str, pattern: str, folder: str) -> None:
    assert read(text) == Intent("grep-search", {"pattern": pattern, "dir": folder})


@pytest.mark.parametrize(
    "text",
    [
        "What is 2+2?",
        "Write a haiku about autumn.",
        "remind me to call Bob",  # no time: the model asks when
        "every weekday at 9 remind me to stand up",  # org has no such repeater
        "/skills",
        "",
        "note:",
        "Who wrote Hamlet?",
        "what is a deadline?",
    ],
)
def test_other_requests_are_left_to_the_model(text: str) -> None:
    assert read(text) is None
