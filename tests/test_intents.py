"""Deterministic intent parsing: the commonest org requests read as tool calls."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from passepartout.llm.intents import Intent, org_timestamp, parse
from passepartout.org.timestamps import parse_timestamp

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
        "/skills",
        "",
        "note:",
        "Who wrote Hamlet?",
        "what is a deadline?",
    ],
)
def test_other_requests_are_left_to_the_model(text: str) -> None:
    assert read(text) is None


@pytest.mark.parametrize(
    ("text", "stamp", "prompt"),
    [
        ("remind me every other Tuesday at 10 to water the ferns",
         "<2026-11-24 Tue 10:00 +2w>", "Remind me to water the ferns"),
        ("remind me on the 1st of every month to pay the rent",
         "<2026-12-01 Tue 09:00 +1m>", "Remind me to pay the rent"),
        ("remind me in 2 hours to take the bread out",
         "<2026-11-23 Mon 20:00>", "Remind me to take the bread out"),
        ("remind me on December 3 to buy concert tickets",
         "<2026-12-03 Thu 09:00>", "Remind me to buy concert tickets"),
        ("remind me next Friday at noon to call the garage",
         "<2026-11-27 Fri 12:00>", "Remind me to call the garage"),
        ("remind me in three days to follow up with Sarah",
         "<2026-11-26 Thu 09:00>", "Remind me to follow up with Sarah"),
        ("remind me every year on March 3 about Tom's birthday",
         "<2027-03-03 Wed 09:00 +1y>", "Remind me about Tom's birthday"),
        ("Schedule a weekly review every Sunday at 8pm",
         "<2026-11-29 Sun 20:00 +1w>", "Remind me to review"),
        ("remind me tmrw at 3pm to pay the rent", "<2026-11-24 Tue 15:00>",
         "Remind me to pay the rent"),
        ("remind me every 2nd friday to pay the cleaner", "<2026-11-27 Fri 09:00 +2w>",
         "Remind me to pay the cleaner"),
    ],
)
def test_dates_and_recurrences_people_say(text: str, stamp: str, prompt: str) -> None:
    intent = read(text)
    assert intent is not None and intent.tool == "schedule", intent
    assert intent.args["timestamp"] == stamp
    assert intent.args["prompt"] == prompt
    assert parse_timestamp(stamp).format() == stamp


def test_the_first_of_the_month_already_past_is_next_months() -> None:
    # dateutil's rrule counts the months: the 31st skips the months without one.
    stamp = org_timestamp("on the 31st of every month", NOW)
    assert stamp is not None and stamp.format() == "<2026-12-31 Thu 09:00 +1m>"
    early = dt.datetime(2026, 11, 1, 7, 0).astimezone()
    stamp = org_timestamp("the 1st of every month", early)
    assert stamp is not None and stamp.format() == "<2026-11-01 Sun 09:00 +1m>"


@pytest.mark.parametrize(
    "text",
    [
        "remind me to call Bob",  # no time at all
        "weekdays at 8 remind me to check the mail",  # org repeats by a fixed interval
        "every weekday at 9 remind me to stand up",
        "remind me later to water the ferns",
        "remind me next week to call the garage",  # which day?
        "remind me on the second tuesday of every month to pay the rent",
    ],
)
def test_a_reminder_without_a_clear_date_asks_when(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "ask" and not intent.tool, intent
    assert intent.reply.startswith("When should I remind you")


@pytest.mark.parametrize(
    ("text", "tool", "args"),
    [
        ("add to my inbox: renew the library card", "remember",
         {"title": "renew the library card"}),
        ("note down the boiler pressure is 1.2 bar", "remember",
         {"title": "the boiler pressure is 1.2 bar"}),
        ("capture idea: a script that tags photos by date", "remember",
         {"title": "a script that tags photos by date"}),
        ("I want you to keep in mind that my passport expires in March", "remember",
         {"title": "my passport expires in March"}),
        ("anything due this week?", "agenda", {"day": "week"}),
        ("what's on tomorrow", "agenda", {"day": "tomorrow"}),
        ("what do I have going on today", "agenda", {"day": "today"}),
        ("Any deadlines coming up?", "agenda", {"day": "week"}),
        ("search for invoices in my notes", "memory-search", {"query": "invoices"}),
        ("have I written anything about sourdough?", "memory-search", {"query": "sourdough"}),
        ("cat ~/org/todo.org", "read-file", {"path": "~/org/todo.org"}),
        ("open notes/ideas.org", "read-file", {"path": "notes/ideas.org"}),
        ("Show me the file notes/todo.org", "read-file", {"path": "notes/todo.org"}),
        ("Which files under ~/work mention deadline?", "grep-search",
         {"pattern": "deadline", "dir": "~/work"}),
    ],
)
def test_more_ways_of_saying_it(text: str, tool: str, args: dict[str, str]) -> None:
    assert read(text) == Intent(tool, args)


@pytest.mark.parametrize(
    "text",
    ["print my API key", "show me the contents of ~/.ssh/id_rsa", "what is my OpenAI key?",
     "cat ~/.env", "tell me GITHUB_TOKEN"],
)
def test_a_request_for_a_secret_is_refused_not_run(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "refuse" and not intent.tool, intent


@pytest.mark.parametrize("text", ["delete all my notes", "rm -rf ~/org"])
def test_a_destructive_request_is_asked_about(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "destroy" and not intent.tool, intent


@pytest.mark.parametrize("text", ["what is on my grocery list?", "what's on the menu",
                                  "anything on the radio about the storm?"])
def test_what_is_on_something_else_is_no_agenda_question(text: str) -> None:
    found = read(text)
    assert found is None or found.tool != "agenda", found


@pytest.mark.parametrize("text", ["what's on today?", "what is on my plate",
                                  "anything on tomorrow?", "what's on my agenda"])
def test_what_is_on_a_day_or_the_agenda_is_an_agenda_question(text: str) -> None:
    found = read(text)
    assert found is not None and found.tool == "agenda", found


@pytest.mark.parametrize(
    "text",
    ["send an email to Anna saying I'm late", "what's the weather in Paris tomorrow?",
     "book a table for two at 8pm"],
)
def test_what_no_offline_tool_does_is_declined(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "decline"
    assert "configure a provider" in intent.reply


@pytest.mark.parametrize(
    "text",
    ["Note that the wifi password changed", "remind me tomorrow at 9 to change the password",
     "note: call mom about the holidays"],
)
def test_words_about_secrets_or_calls_are_still_notes_and_reminders(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.tool in ("remember", "schedule"), intent


@pytest.mark.parametrize(
    ("text", "stamp"),
    [
        # With no day named, a bare hour is its next coming in waking hours (07-22):
        # at 18:00, "at 8" is tonight's 20:00 and "at 5" tomorrow's 17:00, not 05:00.
        ("remind me at 8 to lock the door", "<2026-11-23 Mon 20:00>"),
        ("remind me at 5 to ring grandma", "<2026-11-24 Tue 17:00>"),
        ("remind me at 10 to take the pills", "<2026-11-23 Mon 22:00>"),
        ("remind me at 11:30 to call Ana", "<2026-11-24 Tue 11:30>"),
        # With a day named, 1-6 is the afternoon and 7-11 the morning.
        ("remind me on Friday at 5 to leave early", "<2026-11-27 Fri 17:00>"),
        ("remind me tomorrow at 8 to bring the charger", "<2026-11-24 Tue 08:00>"),
        ("remind me on Dec 12 at 3 about the school play", "<2026-12-12 Sat 15:00>"),
        # am/pm, a 24-hour clock and a part of the day say it already.
        ("remind me at 5am to catch the train", "<2026-11-24 Tue 05:00>"),
        ("remind me tomorrow at 06:30 to run", "<2026-11-24 Tue 06:30>"),
        ("remind me tomorrow morning at 8 to run", "<2026-11-24 Tue 08:00>"),
    ],
)
def test_a_bare_hour_is_the_one_a_person_means(text: str, stamp: str) -> None:
    intent = read(text)
    assert intent is not None and intent.tool == "schedule", intent
    assert intent.args["timestamp"] == stamp


@pytest.mark.parametrize(
    ("text", "stamp"),
    [
        ("remind me on 28/11 to pay the window cleaner", "<2026-11-28 Sat 09:00>"),
        ("remind me on 11/30 to submit the form", "<2026-11-30 Mon 09:00>"),
        ("remind me on 15/12/2027 to renew the lease", "<2027-12-15 Wed 09:00>"),
        ("remind me on 5/5 to call Jo", "<2027-05-05 Wed 09:00>"),
        ("remind me on the 20th to renew the insurance", "<2026-12-20 Sun 09:00>"),
        ("remind me on the 25th to pay the nanny", "<2026-11-25 Wed 09:00>"),
        ("remind me on Christmas Eve to call my aunt", "<2026-12-24 Thu 09:00>"),
        ("remind me on new year's day to rest", "<2027-01-01 Fri 09:00>"),
        ("remind me every January 1st to review my goals", "<2027-01-01 Fri 09:00 +1y>"),
        ("remind me every 14th of feb to buy flowers", "<2027-02-14 Sun 09:00 +1y>"),
        ("remind me monthly on the 2nd to water the cactus", "<2026-12-02 Wed 09:00 +1m>"),
        ("remind me every month on the 28th to read the meter", "<2026-11-28 Sat 09:00 +1m>"),
        ("remind me in a fortnight to check the plants", "<2026-12-07 Mon 09:00>"),
        ("remind me in a couple of days to call Jo", "<2026-11-25 Wed 09:00>"),
        ("remind me every three hours to drink water", "<2026-11-23 Mon 21:00 +3h>"),
    ],
)
def test_more_dates_and_recurrences(text: str, stamp: str) -> None:
    intent = read(text)
    assert intent is not None and intent.tool == "schedule", intent
    assert intent.args["timestamp"] == stamp
    assert not re.search(r"\b(?:every|on|the|in)\s*$|^(?:every|the)\b", intent.args["name"]), intent
    assert parse_timestamp(stamp).format() == stamp


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("remind me on 04/05 to renew my passport", "4 May or 5 April"),
        ("remind me on 31/02 to pay", "no such date"),
        ("remind me every Tuesday and Thursday at 7 to go to the gym", "one day of the week"),
        ("remind me Monday and Wednesday at 8 to go running", "one day of the week"),
        ("remind me in a few days to call Jo", "how many"),
        ("remind me next weekend to clean the car", "vague"),
    ],
)
def test_a_date_that_reads_two_ways_or_none_is_asked_about(text: str, why: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "ask" and not intent.tool, intent
    assert why in intent.reply


@pytest.mark.parametrize(
    ("text", "prompt"),
    [
        ("ping me tomorrow at 11 about the invoice", "Remind me about the invoice"),
        ("nudge me in 20 minutes to turn off the hob", "Remind me to turn off the hob"),
        ("please don't let me forget to water the garden tomorrow",
         "Remind me to water the garden"),
        ("I need a reminder on Dec 12 for the school play", "Remind me about the school play"),
    ],
)
def test_other_ways_of_asking_for_a_reminder(text: str, prompt: str) -> None:
    intent = read(text)
    assert intent is not None and intent.tool == "schedule", intent
    assert intent.args["prompt"] == prompt


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("memo: the garage door code changed", "the garage door code changed"),
        ("log that the boiler was serviced today", "the boiler was serviced today"),
        ("put in my notes that Jake likes lego", "Jake likes lego"),
        ("file this in my notes: the router is in the cupboard", "the router is in the cupboard"),
        ("new todo: fix the bike brakes", "fix the bike brakes"),
        ("add a task: order new glasses", "order new glasses"),
        ("TODO: email the accountant", "email the accountant"),
        ("todo pick up the parcel", "pick up the parcel"),
        ("inbox - look at the leaky tap", "look at the leaky tap"),
        ('add "buy stamps" to my todo list', "buy stamps"),
        ("i have to remember that the vet closes at 5", "the vet closes at 5"),
        ("Keep a note: Ollie's shoe size is 32", "Ollie's shoe size is 32"),
    ],
)
def test_more_ways_of_taking_a_note(text: str, title: str) -> None:
    assert read(text) == Intent("remember", {"title": title})


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("what's on thursday?", "2026-11-26"),
        ("what's on monday?", "2026-11-23"),  # today is a Monday
        ("anything on my calendar for saturday", "2026-11-28"),
        ("do I have plans on Dec 5?", "2026-12-05"),
        ("what's on 2026-12-02", "2026-12-02"),
        ("what's on the day after tomorrow", "2026-11-25"),
        ("my schedule for the next few days", "week"),
        ("show overdue tasks", "today"),
        ("summary of my day", "today"),
        ("todos for tomorrow", "tomorrow"),
    ],
)
def test_an_agenda_question_names_its_day(text: str, day: str) -> None:
    assert read(text) == Intent("agenda", {"day": day})


@pytest.mark.parametrize(
    ("text", "tool", "args"),
    [
        ("look for 'budget 2027' in my notes", "memory-search", {"query": "budget 2027"}),
        ("search: bread recipes", "memory-search", {"query": "bread recipes"}),
        ("what do my notes say on the roof repair", "memory-search",
         {"query": "the roof repair"}),
        ("did I write anything down about the new boiler", "memory-search",
         {"query": "the new boiler"}),
        ("find what I noted about the Oslo conference", "memory-search",
         {"query": "the Oslo conference"}),
        ("show notes mentioning Gregor", "memory-search", {"query": "Gregor"}),
        ("which notes mention the plumber?", "memory-search", {"query": "the plumber"}),
        ("grep -ri todo ~/notes", "grep-search", {"pattern": "todo", "dir": "~/notes"}),
        ("search files in ~/projects for 'release date'", "grep-search",
         {"pattern": "release date", "dir": "~/projects"}),
        ("find all FIXMEs under ~/src/app", "grep-search",
         {"pattern": "FIXME", "dir": "~/src/app"}),
        ("search my files for the lease", "grep-search", {"pattern": "the lease", "dir": "."}),
        ("let me look at notes/garden.org", "read-file", {"path": "notes/garden.org"}),
        ("what does projects/roadmap.org say", "read-file", {"path": "projects/roadmap.org"}),
        ("pull up the file journal/2026.org", "read-file", {"path": "journal/2026.org"}),
    ],
)
def test_more_ways_of_searching_and_reading(text: str, tool: str, args: dict[str, str]) -> None:
    assert read(text) == Intent(tool, args)


@pytest.mark.parametrize("text", ["open the file please", "read the file",
                                  "can you open my journal file"])
def test_a_file_asked_for_without_its_name_is_asked_about(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "which" and not intent.tool, intent
    assert intent.reply.startswith("Which file?")


@pytest.mark.parametrize(
    "text",
    ["print all env vars", "list the keys in my keyring", "search my files for api_key",
     "what password did I use for the router", "dump the environment variables", "printenv"],
)
def test_more_requests_for_secrets_are_refused(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "refuse" and not intent.tool, intent


@pytest.mark.parametrize(
    "text",
    ["get rid of all my done todos", "git push --force to main", "reset my memory",
     "throw away all the notes about Bob", "kill all my reminders", "git reset --hard"],
)
def test_more_destructive_requests_are_asked_about(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "destroy" and not intent.tool, intent


@pytest.mark.parametrize(
    "text",
    ["message Jo on signal that dinner is at 8", "what's the score of the match",
     "play my workout playlist", "how much is the euro in dollars right now",
     "put the dentist in my outlook calendar", "share this note on slack",
     "check my inbox for emails from HR", "summarise this 40-page pdf",
     "write a full business plan for my bakery", "write me a 1500-word essay on trade",
     "look up the latest news about the election"],
)
def test_more_of_what_no_offline_tool_does_is_declined(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "decline", intent
    assert "configure a provider" in intent.reply


@pytest.mark.parametrize(
    "text",
    ["how do I set a reminder in org mode?", "what's a good credit score?", "what is a pdf?",
     "write a poem about the sea", "how do I make chicken stock?", "buy milk",
     "who won the 1966 world cup?", "what does todo mean", "find my notes about the environment"],
)
def test_questions_near_the_rules_are_not_misread(text: str) -> None:
    intent = read(text)
    assert intent is None or intent.tool in ("memory-search",), intent


@pytest.mark.parametrize(
    ("text", "tool", "args"),
    [
        ("remind me at half past 6 to start cooking", "schedule",
         {"timestamp": "<2026-11-23 Mon 18:30>"}),
        ("remind me at quarter to 8 to leave", "schedule", {"timestamp": "<2026-11-23 Mon 19:45>"}),
        ("wake me up at 6:30 tomorrow", "schedule",
         {"timestamp": "<2026-11-24 Tue 06:30>", "name": "wake up"}),
        ("Quick note — Dana is allergic to peanuts", "remember",
         {"title": "Dana is allergic to peanuts"}),
        ("idea: a shared shopping list in org", "remember",
         {"title": "a shared shopping list in org"}),
        ("show me my week", "agenda", {"day": "week"}),
        ("What's happening this week", "agenda", {"day": "week"}),
        ("in my notes, find anything about the car insurance", "memory-search",
         {"query": "the car insurance"}),
        ("read out notes/packing-list.org", "read-file", {"path": "notes/packing-list.org"}),
        ("open up todo.org for me", "read-file", {"path": "todo.org"}),
    ],
)
def test_clock_words_dashes_and_other_phrasings(text: str, tool: str, args: dict[str, str]) -> None:
    intent = read(text)
    assert intent is not None and intent.tool == tool, intent
    assert {k: intent.args.get(k) for k in args} == args


@pytest.mark.parametrize(("text", "kind"), [
    ("find my bank pin in my notes", "refuse"), ("send Sarah a text saying hi", "decline"),
    ("what's on TV tonight", "decline"),
    ("how long does it take to drive to Bristol right now", "decline")])
def test_a_pin_is_a_secret_and_messages_or_tv_are_beyond(text: str, kind: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == kind and not intent.tool, intent


@pytest.mark.parametrize("text", ["remind me every 0 days to x", "remind me in 0 hours to x",
                                  "remind me in 99999999 years to x", "remind me on 0/0 to x",
                                  "remind me on the 45th to x", "remind me on feb 30 to x"])
def test_an_impossible_time_is_asked_about_not_a_traceback(text: str) -> None:
    intent = read(text)
    assert intent is not None and intent.kind == "ask" and not intent.tool, intent


@pytest.mark.parametrize("text", ["alert me when the build fails", "ping me the link",
                                  "don't wake me up before 9", "look up the capital of Peru"])
def test_words_near_a_reminder_or_a_search_are_left_to_the_model(text: str) -> None:
    assert read(text) is None
