"""Deterministic intent parsing: the commonest org requests as tool calls, no model.

"note: buy milk" and "remember that ..." capture a note (``remember``); "every Monday
at 9 remind me to ..." schedules a job (``schedule``, with an org timestamp and
repeater written by :mod:`passepartout.events.timestamps`); "what is due today" asks
the ``agenda``; "search my notes for X" searches memory (``memory-search``) and "grep
for X in DIR" the files (``grep-search``).  A request these patterns do not read
whole is left to the model.  What is parsed is a proposal like a model's tool call:
the gates judge it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from passepartout.events.timestamps import (
    Interval,
    OrgTimestamp,
    Repeater,
    RepeaterKind,
    Unit,
)

TITLE_MAX = 80


@dataclass(frozen=True)
class Intent:
    """A tool call read from the person's words."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


# -- small readers -----------------------------------------------------------------------

DAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}
_DAY = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
        r"|mon|tues?|wed|thu(?:rs)?|fri|sat|sun)")
_PARTS_OF_DAY = {"morning": (9, 0), "noon": (12, 0), "midday": (12, 0), "afternoon": (15, 0),
                 "evening": (18, 0), "night": (21, 0), "midnight": (0, 0)}
_CLOCK = re.compile(
    r"\b(?:at\s+)?(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)?"
    r"(?:\s*o'?clock)?(?=\W|$)", re.I)
_UNITS = {"hour": Unit.HOUR, "day": Unit.DAY, "week": Unit.WEEK, "month": Unit.MONTH,
          "year": Unit.YEAR, "fortnight": Unit.WEEK}
_EVERY = re.compile(
    rf"\b(?:every|each)\s+(?:(?P<n>\d+|other)\s+)?(?P<what>{_DAY}|hour|day|week|fortnight|month|year"
    r"|morning|evening|night|afternoon|weekday)s?\b|\b(?P<adverb>daily|weekly|monthly|yearly|hourly)\b",
    re.I)
_ONCE = re.compile(rf"\b(?:(?P<rel>today|tonight|tomorrow)|(?:on\s+|next\s+)?(?P<day>{_DAY}))\b",
                   re.I)


def _clock(text: str) -> tuple[int, int] | None:
    """The time of day in ``text`` ("at 9", "9:30am", "21:00", "noon"), or None."""
    for word, hm in _PARTS_OF_DAY.items():
        if re.search(rf"\b{word}\b", text, re.I):
            found = hm
            break
    else:
        found = None
    for m in _CLOCK.finditer(text):
        if not (m["ampm"] or m["m"] or m.group(0).lower().lstrip().startswith("at")):
            continue  # a bare number is a count ("every 2 weeks"), not a time
        hour, minute = int(m["h"]), int(m["m"] or 0)
        ampm = (m["ampm"] or "").lower().replace(".", "")
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        elif not ampm and found in ((18, 0), (21, 0), (15, 0)) and hour < 12:
            hour += 12  # "every evening at 7"
        if hour < 24 and minute < 60:
            return hour, minute
    return found


def _next_weekday(today: dt.date, weekday: int, at: tuple[int, int], now: dt.datetime) -> dt.date:
    ahead = (weekday - today.weekday()) % 7
    if ahead == 0 and (now.hour, now.minute) >= at:
        ahead = 7
    return today + dt.timedelta(days=ahead)


def org_timestamp(text: str, now: dt.datetime) -> OrgTimestamp | None:
    """The org timestamp a phrase such as "every Monday at 9" or "tomorrow at 10" names."""
    at = _clock(text) or (9, 0)
    time = dt.time(*at)
    today = now.date()
    if every := _EVERY.search(text):
        what = (every["what"] or every["adverb"] or "").lower()
        count = every["n"] or "1"
        n = 2 if count.lower() == "other" else int(count)
        adverb = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
                  "hourly": "hour"}
        what = adverb.get(what, what)
        if what == "weekday":
            return None  # org has no repeater for Monday to Friday
        if what in DAYS:
            date = _next_weekday(today, DAYS[what], at, now)
            unit, n = Unit.WEEK, n
        elif what in ("morning", "evening", "night", "afternoon"):
            at = _clock(text) or _PARTS_OF_DAY[what]
            time, unit = dt.time(*at), Unit.DAY
            date = today if (now.hour, now.minute) < at else today + dt.timedelta(days=1)
        else:
            unit = _UNITS[what]
            if what == "fortnight":
                n *= 2
            date = today if (now.hour, now.minute) < at else today + dt.timedelta(days=1)
            if unit is Unit.WEEK and (day := _ONCE.search(text)) and day["day"]:
                date = _next_weekday(today, DAYS[day["day"].lower()], at, now)
        return OrgTimestamp(date, time, repeater=Repeater(RepeaterKind.CUMULATE, Interval(n, unit)))
    once = _ONCE.search(text)
    if once is None:
        return None
    if rel := (once["rel"] or "").lower():
        date = today + dt.timedelta(days=1 if rel == "tomorrow" else 0)
        if rel == "tonight" and not _clock(text):
            time = dt.time(20, 0)
    else:
        date = _next_weekday(today, DAYS[once["day"].lower()], at, now)
    return OrgTimestamp(date, time)


def _clean(text: str) -> str:
    return text.strip().strip(" .!?:;,\"'").strip()


def _title(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first if len(first) <= TITLE_MAX else first[: TITLE_MAX - 1].rstrip() + "…"


# -- the intents ----------------------------------------------------------------------------

_NOTE = re.compile(
    r"^(?:(?:please\s+)?(?:take|make|add|jot|write|save|capture)\s+(?:down\s+)?(?:a\s+)?note"
    r"(?:\s+(?:that|saying|of|about))?\s*[:,-]?|note(?:\s+that|\s+down)?\s*[:,-]|note\s+that"
    r"|(?:please\s+)?remember(?:\s+that|\s+to|\s*[:,-])|jot\s+down\s*:?|capture\s*:)\s*(?P<text>.+)$",
    re.I | re.S)
_REMIND = re.compile(r"\b(?:remind\s+me|(?:set\s+)?(?:a\s+)?reminder)\s+(?P<rest>.+)", re.I | re.S)
_TASK = re.compile(r"^(?:.*?\s)?(?:to|that|about|:)\s+(?P<what>.+)$", re.I | re.S)
_SCHEDULE_WORDS = re.compile(r"\b(?:every|each|daily|weekly|monthly|yearly|hourly|tomorrow|today"
                             rf"|tonight|on\s+{_DAY}|next\s+{_DAY})\b", re.I)
_AGENDA = re.compile(
    r"^(?:(?:so\s+)?what(?:'s|\s+is|\s+are|\s+do\s+i\s+have)?\s+(?:(?:is|are)\s+)?"
    r"(?:due|scheduled|on\s+my\s+agenda|on\s+the\s+agenda|planned|my\s+deadlines|on)"
    r"(?:\s+(?:for|on|this))?\s*(?P<when>today|tomorrow|this\s+week|week|the\s+week)?"
    r"|(?:show|give|list|open)(?:\s+me)?\s+(?:my\s+|the\s+)?agenda"
    r"(?:\s+(?:for\s+)?(?P<when2>today|tomorrow|this\s+week))?"
    r"|agenda(?:\s+(?P<when3>today|tomorrow|week))?"
    r"|what\s+do\s+i\s+have\s+(?:on\s+|to\s+do\s+)?(?P<when5>today|tomorrow|this\s+week)"
    r"|(?:my\s+)?(?:deadlines|agenda)\s+(?:for\s+)?(?P<when4>today|tomorrow|this\s+week))\s*\??$",
    re.I)
_MEMORY = re.compile(
    r"^(?:please\s+)?(?:search|look\s+through|check)\s+(?:in\s+)?(?:my\s+|the\s+)?"
    r"(?:notes|memory|memex|org\s+notes)\s+(?:for|about|on)\s+(?P<q1>.+)"
    r"|^(?:please\s+)?(?:find|look\s+up|search\s+for)\s+(?:my\s+)?(?:notes?\s+(?:about|on|for|mentioning)\s+)"
    r"(?P<q2>.+)"
    r"|^(?:please\s+)?(?:look\s+up|find|search\s+for)\s+(?P<q3>.+?)\s+in\s+my\s+(?:notes|memory|memex)"
    r"|^what\s+did\s+i\s+(?:write|note|say)\s+(?:about|on)\s+(?P<q4>.+)"
    r"|^do\s+i\s+have\s+(?:any\s+)?notes\s+(?:about|on)\s+(?P<q5>.+)$",
    re.I | re.S)
_GREP = re.compile(
    r"^(?:please\s+)?(?:grep|search|look)\s+(?:for\s+)?(?P<p1>\"[^\"]+\"|'[^']+'|\S+)"
    r"\s+(?:in|under|inside)\s+(?P<d1>[~./]\S*)"
    r"|^(?:please\s+)?(?:grep|search)\s+(?:the\s+)?(?:files\s+)?(?:in|under)\s+(?P<d2>[~./]\S*)"
    r"\s+for\s+(?P<p2>.+)"
    r"|^(?:please\s+)?find\s+(?P<p3>\"[^\"]+\"|'[^']+'|\S+)\s+in\s+(?P<d3>[~./]\S*)",
    re.I | re.S)


def _note(text: str, now: dt.datetime) -> Intent | None:
    m = _NOTE.match(text)
    if m is None:
        return None
    body = _clean(m["text"])
    if not body or _REMIND.search(text):
        return None
    title = _title(body)
    args: dict[str, Any] = {"title": title}
    if title != body:
        args["body"] = body
    return Intent("remember", args)


def _schedule(text: str, now: dt.datetime) -> Intent | None:
    remind = _REMIND.search(text)
    if remind is None or not _SCHEDULE_WORDS.search(text):
        return None
    rest = remind["rest"]
    lead = re.match(r"(?:to|that|about|:)\s+(?P<what>.+)", rest, re.I | re.S)
    task_of = lead or _TASK.match(rest)
    if task_of is None:
        return None
    what = task_of["what"]
    # The time may follow the task ("remind me to stretch every day at 8"): cut it off.
    cut = _SCHEDULE_WORDS.search(what)
    clock = re.search(r"\s+at\s+\d", what)
    ends = [c.start() for c in (cut, clock) if c is not None]
    task = _clean(what[: min(ends)] if ends else what)
    task = re.sub(r"\s+(?:on|at|every)$", "", task, flags=re.I)
    if not task:
        return None
    stamp = org_timestamp(text, now)
    if stamp is None:
        return None
    return Intent("schedule", {"name": _title(task), "timestamp": stamp.format(),
                               "prompt": f"Remind me to {task}"})


def _agenda(text: str, now: dt.datetime) -> Intent | None:
    m = _AGENDA.match(text)
    if m is None:
        return None
    found = (m["when"], m["when2"], m["when3"], m["when4"], m["when5"])
    when = next((g for g in found if g), "today").lower()
    return Intent("agenda", {"day": "week" if "week" in when else when})


def _memory(text: str, now: dt.datetime) -> Intent | None:
    m = _MEMORY.match(text)
    if m is None:
        return None
    query = next(g for g in m.groups() if g)
    query = _clean(query)
    return Intent("memory-search", {"query": query}) if query else None


def _grep(text: str, now: dt.datetime) -> Intent | None:
    m = _GREP.match(text)
    if m is None:
        return None
    pattern = _clean(m["p1"] or m["p2"] or m["p3"] or "")
    folder = (m["d1"] or m["d2"] or m["d3"] or "").rstrip(".,?!")
    if not pattern or not folder:
        return None
    return Intent("grep-search", {"pattern": pattern, "dir": folder})


PARSERS: tuple[Callable[[str, dt.datetime], Intent | None], ...] = (
    _schedule, _agenda, _grep, _memory, _note,
)


def parse(text: str, now: dt.datetime | None = None) -> Intent | None:
    """The tool call ``text`` asks for, or None when it is not one of the common requests."""
    request = " ".join(str(text or "").split())
    if not request or request.startswith("/") or len(request) > 2000:
        return None
    moment = now or dt.datetime.now().astimezone()
    for parser in PARSERS:
        intent = parser(request, moment)
        if intent is not None:
            return intent
    return None
