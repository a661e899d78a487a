"""Deterministic intent parsing: the commonest org requests as tool calls, no model.

"note: buy milk", "memo: ...", "TODO call the bank" and "remember that ..." capture a
note (``remember``); "every other Tuesday at 10 remind me to ...", "remind me on the 1st
of every month to ...", "ping me in 2 hours ...", "remind me on 28/11 ..." schedule a job
(``schedule``, with an org timestamp and repeater written by
:mod:`passepartout.org.timestamps`; the first date of a recurrence is computed by
``dateutil.rrule``, relative dates by ``dateutil.relativedelta``); "what is due today",
"what's on thursday?" ask the ``agenda``; "search my notes for X", "which notes mention
X" search memory (``memory-search``), "grep for X in DIR" the files (``grep-search``);
"read ~/org/inbox.org" reads a file (``read-file``).  A request these patterns do not
read whole is left to the model.  What is parsed is a proposal like a model's tool
call: the gates judge it.

A bare hour is read as a person means it: with a day named ("Friday at 5", "every day
at 7"), 1 to 6 is the afternoon and 7 to 11 the morning; with none ("remind me at 8"),
the next time the clock shows it in waking hours, so at 18:00 "at 8" is 20:00 tonight
and "at 5" 17:00 tomorrow.

Some requests get words back instead of a call (:attr:`Intent.reply`): a request to
show a secret is refused, any other that names one (``kind="secret"``, see
:mod:`passepartout.llm.secret_requests`) too unless it is a note or reminder about it, a
destructive one is asked about, a reminder with no date or
an ambiguous one ("later", "next week", "weekdays" or "Tuesday and Thursday", which org
cannot repeat, "04/05", which reads two ways) asks when, a file asked for without its
name asks which, and a request for what no offline tool does (messages, the web, whole
documents) says so (``kind="decline"``; the skill gives these last four only when the
turn's model is the local one: a provider's model may know from the conversation which
file is meant).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dateutil import rrule
from dateutil.relativedelta import relativedelta

from passepartout.llm import secret_requests
from passepartout.org.timestamps import Interval, OrgTimestamp, Repeater, RepeaterKind, Unit

TITLE_MAX = 80

OFFLINE_CAN = ("Offline I can capture notes, schedule reminders, show your agenda, search "
               "your notes and files, and read a file; for this, configure a provider "
               "(`passepartout doctor` shows how).")


@dataclass(frozen=True)
class Intent:
    """A tool call read from the person's words, or the words to answer with.

    ``reply`` set means no tool call: ``kind`` says why ("refuse" a secret, "secret" a
    request naming one, "ask" back about an unclear date, "destroy" asks back about a
    destructive request, "which" asks which file is meant, "decline" what offline cannot
    do).
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    reply: str = ""
    kind: str = ""


def _answer(kind: str, reply: str) -> Intent:
    return Intent("", {}, reply, kind)


# -- small readers -----------------------------------------------------------------------

DAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}
_DAY = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
        r"|mon|tues?|wed|thu(?:rs)?|fri|sat|sun)")
MONTHS = {name: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
     ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
     ("september", "sept", "sep"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")], 1) for name in names}
_MONTH_NAMES = dict(enumerate(["January", "February", "March", "April", "May", "June", "July",
                               "August", "September", "October", "November", "December"], 1))
_MONTH = "(?:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?P<{}>\d{{1,2}})(?:st|nd|rd|th)?"
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45,
            "other": 2, "2nd": 2, "second": 2, "3rd": 3, "third": 3}
_COUNT = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve" \
         r"|fifteen|twenty|thirty|forty|forty-five)"
_PARTS_OF_DAY = {"morning": (9, 0), "wake up": (7, 0), "breakfast": (8, 0), "noon": (12, 0),
                 "midday": (12, 0), "lunchtime": (12, 0),
                 "afternoon": (15, 0), "evening": (18, 0), "tonight": (20, 0), "night": (21, 0),
                 "midnight": (0, 0)}
_CLOCK = re.compile(
    r"\b(?:at\s+)?(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)?"
    r"(?:\s*o'?clock)?(?=\W|$)", re.I)
_UNITS = {"minute": Unit.HOUR, "hour": Unit.HOUR, "day": Unit.DAY, "week": Unit.WEEK,
          "month": Unit.MONTH, "year": Unit.YEAR, "fortnight": Unit.WEEK}

# Phrases that say when; each is cut out of the request to leave the task.
_WHEN = [
    rf"\b(?:on\s+)?the\s+(?:first|second|third|fourth|last|1st|2nd|3rd|4th)\s+{_DAY}s?"
    r"\s+of\s+(?:every|each|the)\s+month\b",
    rf"\b(?:on\s+)?(?:the\s+)?{_ORD.format('md')}(?:\s+day)?\s+of\s+(?:every|each|the)\s+month\b",
    rf"\b(?:every|each)\s+(?=(?:{_MONTH}\s+\d|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}))"
    rf"|\b(?:(?:every|each)\s+(?:(?:other|2nd|second|3rd|third|\d+|{_COUNT})\s+)?"
    rf"(?:{_DAY}|hour|day|week|fortnight|month|year|morning|evening|night|afternoon"
    r"|weekday|weekend|work\s?day)s?|(?:on\s+)?weekdays|daily|weekly|monthly|yearly|annually"
    r"|hourly|fortnightly)\b",
    rf"\bin\s+(?:half\s+an\s+hour|a\s+fortnight|(?:a\s+)?(?:couple|few)\s+(?:of\s+)?"
    rf"(?:minute|min|hour|hr|day|week|month|year)s?"
    rf"|{_COUNT}\s+(?:minute|min|hour|hr|day|week|month|year)s?)\b",
    r"\b(?:today|tonight|tomorrow|the\s+day\s+after\s+tomorrow|this\s+(?:morning|afternoon"
    r"|evening))(?:\s+(?:morning|afternoon|evening|night))?\b",
    rf"\b(?:(?:on|next|this|coming)\s+)*{_DAY}(?:\s+(?:morning|afternoon|evening|night))?\b",
    rf"\b(?:on\s+)?(?:the\s+)?{_ORD.format('d1')}(?:\s+of)?\s+{_MONTH}(?:,?\s+(?P<y1>\d{{4}}))?\b",
    rf"\b(?:on\s+)?{_MONTH}\s+(?:the\s+)?{_ORD.format('d2')}(?:,?\s+(?P<y2>\d{{4}}))?\b",
    r"\b(?:on\s+)?\d{4}-\d{2}-\d{2}\b",
    # -- the day phrases end here (_N_DAY_PHRASES); then new ones, then the times of day
    r"\b(?:on\s+)?\d{1,2}/\d{1,2}(?:/\d{2}(?:\d{2})?)?(?![\d/])"
    r"|\b(?:on\s+)?\d{1,2}\.\d{1,2}\.(?:\d{2}(?:\d{2})?)?(?![\d.])",
    rf"\b(?:on\s+)?the\s+\d{{1,2}}(?:st|nd|rd|th)\b(?!\s+(?:of\b|day\b|{_MONTH}))",
    r"\b(?:on\s+)?(?:christmas(?:\s+(?:eve|day))?|xmas(?:\s+(?:eve|day))?"
    r"|new\s+year'?s(?:\s+(?:eve|day))?|boxing\s+day|halloween|valentine'?s(?:\s+day)?)\b",
    r"\b(?:at\s+)?\d{1,2}(?:[:.h]\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)(?=\W|$)",
    r"\bat\s+\d{1,2}(?:[:.h]\d{2})?(?:\s*o'?clock)?\b",
    r"\b\d{1,2}:\d{2}\b",
    r"\b(?:at\s+|around\s+)?(?:noon|midday|midnight|lunchtime)\b",
    r"\b(?:in\s+the\s+)?(?:morning|afternoon|evening|night)\b",
    r"\b(?:later(?:\s+(?:today|on))?|soon|sometime|some\s+time|next\s+week|next\s+month"
    r"|(?:this|next|the)\s+weekend|at\s+some\s+point|in\s+a\s+(?:bit|while))\b",
]
_WHEN_RE = [re.compile(p, re.I) for p in _WHEN]
_NTH_WEEKDAY_RE, _MONTH_DAY_RE, _EVERY_RE, _IN_RE = _WHEN_RE[:4]
_NUMERIC_DATE_RE, _DAY_OF_MONTH_RE, _HOLIDAY_RE = _WHEN_RE[9:12]
_DAY_PHRASES = _WHEN_RE[:12]  # the phrases that name a day (the rest name a time of day)
_MULTI_DAYS = re.compile(rf"\b{_DAY}s?\s*(?:,|and|&|\+|or)\s*(?:on\s+)?{_DAY}s?\b", re.I)
# Days a person names by their name (month, day).
HOLIDAYS = {"christmas eve": (12, 24), "xmas eve": (12, 24), "christmas": (12, 25),
            "christmas day": (12, 25), "xmas": (12, 25), "xmas day": (12, 25),
            "boxing day": (12, 26), "new year's eve": (12, 31), "new years eve": (12, 31),
            "new year's": (1, 1), "new years": (1, 1), "new year's day": (1, 1),
            "new years day": (1, 1), "halloween": (10, 31), "valentine's": (2, 14),
            "valentines": (2, 14), "valentine's day": (2, 14), "valentines day": (2, 14)}
_VAGUE = re.compile(r"\b(?:later|soon|sometime|some\s+time|next\s+week|next\s+month"
                    r"|(?:this|next|the)\s+weekend"
                    r"|at\s+some\s+point|in\s+a\s+(?:bit|while))\b", re.I)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS.get(word.lower(), 1)


def _clock(text: str) -> tuple[int, int] | None:
    """The time of day in ``text`` ("at 9", "9:30am", "21:00", "noon"), or None."""
    read = _clock_read(text)
    return read[:2] if read else None


def _clock_read(text: str) -> tuple[int, int, bool] | None:
    """The time of day in ``text`` and whether its hour was bare: "at 5", with no am or
    pm and no part of the day, could be 05:00 or 17:00 (see :func:`_bare_hour`)."""
    for word, hm in _PARTS_OF_DAY.items():
        if re.search(rf"\b{word}\b", text, re.I):
            found: tuple[int, int] | None = hm
            break
    else:
        found = None
    morning = found is not None and found < (12, 0)
    for m in _CLOCK.finditer(text):
        if not (m["ampm"] or m["m"] or m.group(0).lower().lstrip().startswith("at")):
            continue  # a bare number is a count ("every 2 weeks"), not a time
        hour, minute = int(m["h"]), int(m["m"] or 0)
        ampm = (m["ampm"] or "").lower().replace(".", "")
        bare = False
        if ampm == "pm" and hour < 12:
            hour += 12
        elif ampm == "am" and hour == 12:
            hour = 0
        elif not ampm and found in ((18, 0), (20, 0), (21, 0), (15, 0)) and hour < 12:
            hour += 12  # "every evening at 7"
        elif not ampm and not morning and 1 <= hour <= 11 and not m["h"].startswith("0"):
            bare = True  # "at 5", "at 6:30"; "08:00" and "9 in the morning" are not
        if hour < 24 and minute < 60:
            return hour, minute, bare
    return (*found, False) if found else None


WAKING = (7, 22)  # the hours a bare "at 8" may mean when no day is named


def _bare_hour(hour: int, minute: int, now: dt.datetime, day_named: bool) -> tuple[int, int]:
    """The hour a person means by a bare "at 5": with a day named ("Friday at 5",
    "every day at 7"), 1 to 6 is the afternoon and 7 to 11 the morning; with none
    ("remind me at 8"), the next time the clock shows it in waking hours (07:00 to
    22:00), so at 18:00 "at 8" is 20:00 tonight and "at 5" 17:00 tomorrow."""
    if day_named:
        return (hour + 12 if hour <= 6 else hour), minute
    naive = now.replace(tzinfo=None, second=0, microsecond=0)
    coming = [naive.replace(hour=h, minute=minute) + dt.timedelta(days=d)
              for d in (0, 1) for h in (hour, hour + 12) if WAKING[0] <= h <= WAKING[1]]
    first = min(t for t in coming if t > naive)
    return first.hour, first.minute


def _next_weekday(today: dt.date, weekday: int, at: tuple[int, int], now: dt.datetime) -> dt.date:
    ahead = (weekday - today.weekday()) % 7
    if ahead == 0 and (now.hour, now.minute) >= at:
        ahead = 7
    return today + dt.timedelta(days=ahead)


def _first(rule: rrule.rrule) -> dt.date:
    """The first occurrence of a recurrence (dateutil counts the month days and leap years)."""
    first: dt.datetime = next(iter(rule))
    return first.date()


class Unclear(Exception):
    """The request names a time that cannot be read for sure: ask back."""


def _start(now: dt.datetime, at: tuple[int, int]) -> dt.datetime:
    """The first moment at ``at`` still to come (today's or tomorrow's), naive."""
    start = now.replace(hour=at[0], minute=at[1], second=0, microsecond=0, tzinfo=None)
    if start <= now.replace(tzinfo=None):
        start += dt.timedelta(days=1)
    return start


def _next_date(month: int, day: int, start: dt.datetime) -> dt.date:
    """The next ``month``/``day`` from ``start`` on (dateutil skips the years without it)."""
    if not 1 <= day <= 31:
        raise Unclear("no such day of the month")
    try:
        return _first(rrule.rrule(rrule.YEARLY, bymonth=month, bymonthday=day, dtstart=start,
                                  count=1))
    except StopIteration:
        raise Unclear("no such date") from None


def _dated(year: int | None, month: int, day: int, start: dt.datetime) -> dt.date:
    if year is None:
        return _next_date(month, day, start)
    try:
        return dt.date(year, month, day)
    except ValueError:
        raise Unclear("no such date") from None


def _date_named(text: str, now: dt.datetime, at: tuple[int, int]) -> dt.date | None:
    """A calendar date named in ``text`` ("on December 3", "1 jan", "2027-01-01", "12/15",
    "the 20th", "Christmas Eve"), or None.  With no year it is the next such day (today's
    when the time is still to come).  Raises :class:`Unclear` for a date that reads two
    ways ("04/05": 4 May or 5 April?) or none ("31/02")."""
    start = _start(now, at)
    if iso := re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text):
        return _dated(int(iso[1]), int(iso[2]), int(iso[3]), start)
    for pattern in _WHEN_RE[6:8]:
        if m := pattern.search(text):
            day = int(m["d1"] or 0) if "d1" in pattern.groupindex else int(m["d2"] or 0)
            year = m["y1"] if "y1" in pattern.groupindex else m["y2"]
            month_word = re.search(_MONTH, m.group(0), re.I)
            assert month_word is not None
            month = MONTHS[month_word.group(0).lower().rstrip(".")]
            return _dated(int(year) if year else None, month, day, start)
    if m := _NUMERIC_DATE_RE.search(text):
        a, b, *rest = (int(n) for n in re.findall(r"\d+", m.group(0)))
        year = (rest[0] + 2000 if rest[0] < 100 else rest[0]) if rest else None
        if a > 12 and b <= 12:
            day, month = a, b  # 28/11
        elif b > 12 and a <= 12:
            month, day = a, b  # 11/30
        elif a == b:
            day = month = a
        elif a <= 12 and b <= 12:
            raise Unclear(f"{m.group(0).replace('on ', '').strip()} could be {a} "
                          f"{_MONTH_NAMES[b]} or {b} {_MONTH_NAMES[a]}")
        else:
            raise Unclear("no such date")
        return _dated(year, month, day, start)
    if m := _HOLIDAY_RE.search(text):
        name = " ".join(re.sub(r"^on\s+", "", m.group(0).lower().replace("\u2019", "'")).split())
        return _next_date(*HOLIDAYS[name], start)
    if m := _DAY_OF_MONTH_RE.search(text):
        day = int(re.findall(r"\d+", m.group(0))[0])
        if not 1 <= day <= 31:
            raise Unclear("no such day of the month")
        return _first(rrule.rrule(rrule.MONTHLY, bymonthday=day, dtstart=start))
    return None


_YEARLY_DATE = re.compile(rf"\b(?:every|each)\s+(?:{_MONTH}\s+\d|\d{{1,2}}(?:st|nd|rd|th)?\s+"
                          rf"(?:of\s+)?{_MONTH})", re.I)


def org_timestamp(text: str, now: dt.datetime) -> OrgTimestamp | None:
    """The org timestamp a phrase such as "every Monday at 9" or "tomorrow at 10" names,
    or None when it names none.  Raises :class:`Unclear` when it names one vaguely."""
    day_named = any(p.search(text) for p in _DAY_PHRASES)
    read = _clock_read(text)
    at = (9, 0) if read is None else (
        _bare_hour(read[0], read[1], now, day_named) if read[2] else read[:2])
    time = dt.time(*at)
    today = now.date()
    start = _start(now, at)  # the first moment at that time still to come
    if _NTH_WEEKDAY_RE.search(text):
        raise Unclear("org cannot repeat on the nth weekday of a month")
    if _MULTI_DAYS.search(text):
        raise Unclear("an org timestamp repeats on one day of the week: one reminder for "
                      "each day?")
    if m := _MONTH_DAY_RE.search(text):
        day = int(m["md"])
        if not 1 <= day <= 31:
            raise Unclear("no such day of the month")
        first = _first(rrule.rrule(rrule.MONTHLY, bymonthday=day, dtstart=start))
        return OrgTimestamp(first, time, repeater=Repeater(RepeaterKind.CUMULATE,
                                                           Interval(1, Unit.MONTH)))
    if _YEARLY_DATE.search(text) and (named := _date_named(text, now, at)):
        return OrgTimestamp(named, time, repeater=Repeater(RepeaterKind.CUMULATE,
                                                           Interval(1, Unit.YEAR)))
    every = re.search(
        rf"\b(?:every|each)\s+(?:(?P<n>other|2nd|second|3rd|third|\d+|{_COUNT})\s+)?"
        rf"(?P<what>{_DAY}|hour|day|week"
        r"|fortnight|month|year|morning|evening|night|afternoon|weekday|weekend|work\s?day)s?\b"
        r"|\b(?P<adverb>daily|weekly|monthly|yearly|annually|hourly|fortnightly)\b"
        r"|\b(?P<weekdays>(?:on\s+)?weekdays)\b", text, re.I)
    if every:
        what = (every["what"] or every["adverb"] or every["weekdays"] or "").lower()
        n = _number(every["n"] or "1")
        if n < 1:
            raise Unclear("every how often?")
        what = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
                "annually": "year", "hourly": "hour", "fortnightly": "fortnight"}.get(what, what)
        if "weekday" in what or "work" in what or what == "weekend":
            raise Unclear("org timestamps repeat by a fixed interval, not on weekdays only")
        if what in DAYS:
            first = _first(rrule.rrule(rrule.WEEKLY, byweekday=DAYS[what], dtstart=start))
            return OrgTimestamp(first, time, repeater=Repeater(
                RepeaterKind.CUMULATE, Interval(n, Unit.WEEK)))
        if what in ("morning", "evening", "night", "afternoon"):
            at = _clock(text) or _PARTS_OF_DAY[what]
            time, what = dt.time(*at), "day"
        unit = _UNITS[what]
        if what == "fortnight":
            n *= 2
        date = today if (now.hour, now.minute) < (time.hour, time.minute) else (
            today + dt.timedelta(days=1))
        if unit is Unit.WEEK and (named_day := re.search(rf"\b{_DAY}\b", text, re.I)):
            date = _next_weekday(today, DAYS[named_day.group(0).lower()], at, now)
        if unit in (Unit.MONTH, Unit.YEAR) and (named := _date_named(text, now, at)):
            date = named
        if unit is Unit.HOUR:
            moment = now + dt.timedelta(hours=n)
            date, time = moment.date(), dt.time(moment.hour, moment.minute)
        return OrgTimestamp(date, time, repeater=Repeater(RepeaterKind.CUMULATE, Interval(n, unit)))
    if rel := re.search(rf"\bin\s+(?:(?P<half>half\s+an\s+hour)|(?P<fortnight>a\s+fortnight)"
                        r"|(?:a\s+)?(?P<vague>couple|few)\s+(?:of\s+)?"
                        r"(?P<vunit>minute|min|hour|hr|day|week|month|year)s?"
                        rf"|(?P<n>{_COUNT})\s+(?P<unit>minute|min|hour|hr|day|week|month|year)s?)\b",
                        text, re.I):
        if rel["vague"] and rel["vague"].lower() == "few":
            raise Unclear("how many?")
        if rel["half"]:
            delta, unit_word = relativedelta(minutes=30), "minute"
        elif rel["fortnight"]:
            delta, unit_word = relativedelta(weeks=2), "week"
        else:
            unit_word = (rel["unit"] or rel["vunit"]).lower()
            word = {"min": "minute", "hr": "hour"}.get(unit_word, unit_word)
            unit_word = word
            count = 2 if rel["vague"] else _number(rel["n"])
            if count < 1:
                raise Unclear("in how long?")
            delta = relativedelta(**{word + "s": count})
        try:
            moment = now + delta
        except (ValueError, OverflowError):
            raise Unclear("that is too far off") from None
        if unit_word in ("minute", "hour"):
            return OrgTimestamp(moment.date(), dt.time(moment.hour, moment.minute))
        return OrgTimestamp(moment.date(), time)
    if _VAGUE.search(text):
        raise Unclear("the time is vague")
    if named := _date_named(text, now, at):
        return OrgTimestamp(named, time)
    once = re.search(rf"\b(?P<rel>today|tonight|tomorrow|the\s+day\s+after\s+tomorrow)\b"
                     rf"|\b(?P<day>{_DAY})\b", text, re.I)
    if once is not None:
        if rel_day := (once["rel"] or "").lower():
            ahead = {"today": 0, "tonight": 0, "tomorrow": 1}.get(rel_day, 2)
            if rel_day == "tonight" and not _clock(text):
                time = dt.time(20, 0)
            return OrgTimestamp(today + dt.timedelta(days=ahead), time)
        return OrgTimestamp(_next_weekday(today, DAYS[once["day"].lower()], at, now), time)
    if read is not None:  # a time alone: its next coming
        return OrgTimestamp(start.date(), time)
    return None


def _clean(text: str) -> str:
    return text.strip().strip(" .!?:;,\"'-").strip()


def _title(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first if len(first) <= TITLE_MAX else first[: TITLE_MAX - 1].rstrip() + "…"


# Common typos and short forms, read as the words they stand for.
_TYPOS = [
    (r"\b(?:tmrw|tmrow|tmr|tomorow|tommorow|tommorrow|2moro|2morrow)\b", "tomorrow"),
    (r"\b(?:remeber|rember|remmeber|rememeber|remembr)\b", "remember"),
    (r"\b(?:remind|remnd|rmind|remid|reminde)\s+me\b", "remind me"),
    (r"\b(?:ping|nudge|alert|buzz)\s+me(?=\s+(?:in|at|on|tomorrow|tonight|today|every|each|next"
     r"|this|to|about)\b)", "remind me"),
    (r"\b(?:don'?t|do\s+not)\s+let\s+me\s+forget(?=\s+(?:to|that|about)\b)", "remind me"),
    (r"\bmake\s+sure\s+i\s+(?:remember|don'?t\s+forget)(?=\s+to\b)", "remind me"),
    (r"(?<!n't\s)(?<!not\s)\bwake\s+me(?:\s+up)?\b", "remind me to wake up"),
    (r"\s*[\u2014\u2013]\s*", " - "),  # an em or en dash between words
    (r"\b(?:pls|plz|plese|pleas)\b", "please"),
    (r"\b(?:tonite|tonigth)\b", "tonight"),
    (r"\b(?:agneda|agend)\b", "agenda"),
    (r"\bwhats\b", "what's"),
    (r"\b(?:wat|wht)\b", "what"),
]


def _quarter(m: re.Match[str]) -> str:
    """"half past 6" as 6:30, "quarter to 8" as 7:45."""
    hour = int(m["h"])
    minutes = {"half past": 30, "quarter past": 15, "quarter to": -15}[
        " ".join(m["what"].lower().replace("a quarter", "quarter").split())]
    if minutes < 0:
        hour = hour - 1 if hour > 1 else 12
    return f"{hour}:{minutes % 60:02d}"


def _normalize(text: str) -> str:
    for pattern, word in _TYPOS:
        text = re.sub(pattern, word, text, flags=re.I)
    return re.sub(r"\b(?P<what>half\s+past|(?:a\s+)?quarter\s+(?:past|to))\s+(?P<h>1[0-2]|[1-9])\b",
                  _quarter, text, flags=re.I)


# -- refusals and questions back ---------------------------------------------------------------

_DESTROY = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+|just\s+|now\s+|run\s+|go\s+ahead\s+and\s+)*"
    r"(?:delete|remove|erase|wipe|rm\s|rm$|rmdir|drop|purge|destroy|shred|trash|clear\s+(?:out\s+)?"
    r"(?:all|my|the|every)|empty\s+(?:my|the)|format|overwrite|truncate|forget\s+(?:all|every)"
    r"|get\s+rid\s+of|throw\s+(?:away|out)|bin\s+(?:all|my|the|every)|reset\s+(?:all|my|the|every)"
    r"|kill\s+(?:all|my|the|every)|nuke|discard|cancel\s+(?:all|every)|unschedule"
    r"|git\s+(?:push\s+(?:.*\s)?(?:-f|--force)|reset\s+--hard|clean\s+-\w*f|checkout\s+--?\s*\.)"
    r"|dd\s|mkfs|chmod\s+-R|chown\s+-R|mv\s+\S+\s+/dev/null|>\s*\S+)",
    re.I)


def _secret(text: str, now: dt.datetime) -> Intent | None:
    if secret_requests.asks_to_reveal(text):
        return _answer("refuse", "I won't show secrets (API keys, passwords, tokens, private "
                       "keys, .env files) in a chat: what is shown here may be kept or sent "
                       "on. Open it yourself if you need it; `passepartout doctor` says "
                       "whether a provider key is set without showing it.")
    if secret_requests.offline_refuses(text):
        return _answer("secret", "That is about a secret (a password, key, PIN or code). "
                       "Offline I don't look one up, show it or guess it, and I don't keep "
                       "one in your notes: what is written here may be kept or sent on. A "
                       "note or reminder about it without the secret itself is fine, e.g. "
                       "\"remind me on Friday to change the router password\".")
    return None


def _destructive(text: str, now: dt.datetime) -> Intent | None:
    if not _DESTROY.search(text):
        return None
    what = _clean(re.sub(r"^(?:please\s+|can\s+you\s+|could\s+you\s+|run\s+)*", "", text,
                         flags=re.I))
    return _answer("destroy", f"That would destroy data (\"{what}\") and cannot be undone from "
                   "here, so I have not done it. Which exact file or notes do you mean, and "
                   "have you a copy? You can delete them yourself (dired, or org's archive "
                   "for done tasks), or confirm the exact paths and I will propose it for "
                   "you to approve.")


# -- the intents ----------------------------------------------------------------------------

_NOTE = re.compile(
    r"^(?:(?:please|can\s+you|could\s+you|would\s+you|ok|okay|hey)[\s,]+)*(?:"
    r"(?:take|make|add|jot|write|save|capture|create|store|keep|leave|drop)\s+(?:down\s+)?"
    r"(?:a\s+|this\s+)?(?:quick\s+|new\s+|short\s+)?(?:note|memo)(?:\s+for\s+me)?"
    r"(?:\s+to\s+self)?(?:\s+(?:that|saying|of|about))?\s*[:,-]?"
    r"|memo\s*[:,-]|(?:quick|short|small)\s+note\s*[:,-]?|(?:quick\s+|random\s+|new\s+)?(?:idea|thought)\s*[:,-]|(?:log|record)\s+(?:that|this\s*[:,-]?)|(?:log|record)\s*[:,-]"
    r"|(?:put|file|store|keep|save|add|write)\s+(?:this\s+|it\s+|that\s+)?(?:down\s+)?"
    r"(?:in|into|to|under|among)\s+(?:my\s+|the\s+)?notes?(?:\s+file)?(?:\s+that)?\s*[:,-]?"
    r"|(?:new|add\s+an?|create\s+an?|make\s+an?)\s+(?:todo|to-do|task|item)\s*[:,-]?"
    r"|todo(?!\s*(?:list|lists|s\b|for\b|in\b|items?\b))\s*[:,-]?"
    r"|inbox\s*[:,-]"
    r"|i\s+(?:have|need|want|must|should)\s+to\s+remember(?:\s+that)?\s*[:,-]?"
    r"|(?:take|make|add|jot|write|save|capture|create)\s+(?:down\s+)?(?:a\s+|this\s+)?"
    r"(?:quick\s+)?(?:note|memo)(?:\s+to\s+self)?(?:\s+(?:that|saying|of|about))?\s*[:,-]?"
    r"|note\s+to\s+self\s*[:,-]?|note(?:\s+that|\s+down)?\s*[:,-]|note\s+(?:down\s+)?that"
    r"|note\s+down"
    r"|(?:jot|write)\s+(?:this\s+|it\s+)?down(?:\s+that)?\s*[:,-]?"
    r"|remember(?:\s+that|\s+to|\s*[:,-]|(?=\s+(?:my|the|our|i|we)\b))"
    r"|(?:i\s+want\s+you\s+to\s+|please\s+)?keep\s+in\s+mind(?:\s+that)?\s*[:,-]?"
    r"|(?:save|capture|add|log)\s+(?:this|that|an?\s+idea|idea)\s*[:,-]"
    r"|capture(?:\s+(?:an?\s+)?idea)?\s*[:,-]"
    r"|add\s+to\s+(?:my\s+)?(?:inbox|notes|todo\s+list|to-do\s+list|todos)\s*[:,-]?"
    r"|(?:can\s+you\s+)?note)\s*(?P<text>.+)$",
    re.I | re.S)
_REMIND = re.compile(
    r"\b(?:remind\s+me|(?:set|schedule|add|create|make)\s+(?:me\s+)?(?:a\s+)?reminder"
    r"|reminder)\b(?P<rest>.*)", re.I | re.S)
_SCHEDULE_TASK = re.compile(r"^(?:please\s+)?schedule\s+(?:a\s+|an\s+|my\s+)?(?P<task>.+)$", re.I)


_ADD_TO = re.compile(
    r"^(?:(?:please|can\s+you|could\s+you)\s+)*(?:add|put|write)\s+(?P<text>.+?)\s+(?:to|on|in|into)"
    r"\s+(?:my\s+|the\s+)?(?:todo|to-do|task|shopping)?\s*(?:list|inbox|notes|todos|tasks)"
    r"(?:\s+please)?\s*[.!]*$", re.I | re.S)


def _note(text: str, now: dt.datetime) -> Intent | None:
    m = _NOTE.match(text) or _ADD_TO.match(text)
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


def _task(text: str) -> str:
    """What a reminder is about: the request with its time phrases and trigger cut out."""
    rest = text
    for pattern in _WHEN_RE:
        rest = pattern.sub(" ", rest)
    rest = " ".join(rest.split())
    rest = re.sub(r"^(?:for|at|on|in|by|,|:|-)\s*", "", rest.strip(), flags=re.I)
    rest = re.sub(r"^(?:for|at|on|in|by|,|:|-)\s*", "", rest.strip(), flags=re.I)
    rest = re.sub(r"\s+(?:on|at|every|each|for|in|by|from|starting)\s*$", "", rest.strip(),
                  flags=re.I)
    return _clean(rest)


_QUESTION = re.compile(r"^(?:how|why|what|which|where|is|are|does|do|can\s+i|could\s+i|should"
                       r"|would\s+it)\b", re.I)


def _schedule(text: str, now: dt.datetime) -> Intent | None:
    if _QUESTION.match(text) and not re.search(r"\bremind\s+me\b", text, re.I):
        return None  # "how do I set a reminder in org?" asks how, not for one
    remind = _REMIND.search(text)
    if remind is not None:
        task = _task(remind["rest"])
        conn = "about"  # "a reminder for the school play"
        if lead := re.match(r"(?P<c>to|that|about|of|:)\s+(?P<what>.+)", task, re.I | re.S):
            conn = lead["c"].lower() if lead["c"] != ":" else "to"
            task = _clean(lead["what"])
        if not task:
            head = _task(text[: remind.start()])  # "every day at 8am remind me to stretch"
            task, conn = head, "to"
            task = re.sub(r"^(?:i\s+(?:need|have|must|want|should|ought)\s+to|i\s+must"
                          r"|i'?ve\s+got\s+to|i\s+gotta)\s+", "", task, flags=re.I)
    elif sched := _SCHEDULE_TASK.match(text):
        if not any(p.search(text) for p in _WHEN_RE[:4]):
            return None  # "schedule a meeting" with no recurrence: the model's
        task, conn = _task(sched["task"]), "to"
        task = re.sub(r"^(?:to|a|an)\s+", "", task, flags=re.I)
    else:
        return None
    prompt_task = task
    try:
        stamp = org_timestamp(text, now)
    except Unclear as why:
        return _ask_when(task, str(why))
    if stamp is None:
        return _ask_when(task, "")
    if not task:
        return None
    verb = f"Remind me {conn}" if conn in ("to", "about", "of", "that") else "Remind me to"
    return Intent("schedule", {"name": _title(task), "timestamp": stamp.format(),
                               "prompt": f"{verb} {prompt_task}"})


def _ask_when(task: str, why: str) -> Intent:
    about = f" to {task}" if task else ""
    because = f" ({why})" if why else ""
    return _answer("ask", f"When should I remind you{about}?{because} Say a day and a time, "
                   "e.g. \"tomorrow at 9\", \"on Friday at 5pm\", \"every Monday at 8\", "
                   "\"every day at 8\" or \"on the 1st of every month\".")


_AGENDA_DAY = re.compile(
    r"\b(?P<when>today|tonight|this\s+(?:morning|afternoon|evening)|tomorrow"
    r"|the\s+day\s+after\s+tomorrow|(?:this|next|the|coming)\s+week(?:'s)?|week"
    r"|(?:this|next|the|coming)\s+weekend|(?:next|coming)\s+(?:few|couple\s+of|\d+|two|three"
    r"|four|five|six|seven)\s+days|my\s+day|the\s+day|today's|my\s+week)\b", re.I)
_AGENDA_WORDS = re.compile(
    r"\b(?:agenda|due|deadlines?|scheduled|schedule|on\s+my\s+plate|coming\s+up|going\s+on"
    r"|planned|plans|free|busy|to\s+do|todo|todos|tasks|appointments?|meetings?|calendar"
    r"|overdue|rundown|summary|overview|left\s+to\s+do|my\s+day|my\s+week|happening"
    r"|what(?:'s|\s+is)\s+on|anything\s+on|have\s+on|what\s+do\s+i\s+have"
    r"|(?:need|have)\s+to\s+do)\b", re.I)
_AGENDA_NOT = re.compile(
    r"\b(?:remind|note|search|find|grep|weather|news|tv|film|movie|meaning|mean|define"
    r"|definition|explain|difference|how\s+do|how\s+to|write|create|add|delete|remove|a\s+"
    r"deadline|an\s+agenda|the\s+word|put|outlook|google|icloud)\b", re.I)


def _agenda_day(text: str, now: dt.datetime) -> str | None:
    """The day an agenda question asks about: today, tomorrow, week or a YYYY-MM-DD."""
    if m := _AGENDA_DAY.search(text):
        word = m["when"].lower()
        if "week" in word or "days" in word:
            return "week"
        if word.startswith("the day after"):
            return (now.date() + dt.timedelta(days=2)).isoformat()
        return "tomorrow" if "tomorrow" in word else "today"
    try:
        named = _date_named(text, now, (23, 59))
    except Unclear:
        named = None
    if named is not None:
        return named.isoformat()
    if m := re.search(rf"\b{_DAY}\b", text, re.I):
        ahead = (DAYS[m.group(0).lower()] - now.weekday()) % 7
        return (now.date() + dt.timedelta(days=ahead)).isoformat()
    return None


_ON_WORDS = {"what's on", "what is on", "anything on", "have on"}
_ON_AGENDA = re.compile(r"\bon\s+(?:my\s+|the\s+)?(?:plate|agenda|calendar|schedule)\b", re.I)


def _agenda(text: str, now: dt.datetime) -> Intent | None:
    words = text.rstrip("?!. ").split()
    if not 1 <= len(words) <= 10:
        return None
    bare = r"(?:show\s+(?:me\s+)?|open\s+|my\s+|the\s+)*agenda(?:\s+please)?"
    if re.fullmatch(bare, text.rstrip("?!. "), re.I):
        return Intent("agenda", {"day": "today"})
    if not _AGENDA_WORDS.search(text) or _AGENDA_NOT.search(text):
        return None
    when = _agenda_day(text, now)
    personal = re.search(r"\b(?:my|i|me|i'm|anything|any|agenda|due|overdue|calendar"
                         r"|deadlines)\b", text, re.I)
    if when is None and personal is None:
        return None
    # "what is on my grocery list" is no agenda question: "what's on" asks about a day
    # or about the agenda itself.
    triggers = {m.group(0).lower() for m in _AGENDA_WORDS.finditer(text)}
    if when is None and triggers <= _ON_WORDS and not _ON_AGENDA.search(text):
        return None
    day = when or ("week" if re.search(r"\bcoming\s+up\b", text, re.I) else "today")
    return Intent("agenda", {"day": day})


_MEMORY = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:search|look\s+through|check|look\s+in|grep)"
    r"\s+(?:in\s+|through\s+)?(?:my\s+|the\s+)?(?:notes|memory|memex|org\s+notes|org)\s+"
    r"(?:for|about|on)\s+(?P<q1>.+)"
    r"|^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:find|look\s+up|search\s+for|show\s+me"
    r"|show|list|pull\s+up|bring\s+up|get|dig\s+up|give\s+me)\s+"
    r"(?:me\s+)?(?:all\s+)?(?:my\s+|the\s+|any\s+)?(?:notes?\s+(?:about|on|for|mentioning"
    r"|regarding|with|that\s+mention)\s+)(?P<q2>.+)"
    r"|^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:look\s+up|look\s+for|find|search\s+for"
    r"|search|check\s+for)\s+(?P<q3>.+?)\s+in\s+(?:my|the)\s+(?:notes|memory|memex)"
    r"|^what\s+do\s+(?:my|the)\s+notes\s+say\s+(?:about|on|regarding)\s+(?P<q8>.+)"
    r"|^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:find|show\s+me|get|pull\s+up|look\s+up)"
    r"\s+what\s+i\s+(?:wrote|noted|saved|said|jotted)(?:\s+down)?\s+(?:about|on|regarding)"
    r"\s+(?P<q9>.+)"
    r"|^(?:which|what)\s+(?:of\s+my\s+)?(?:notes?|org\s+files|org\s+notes)\s+(?:mention|talk"
    r"\s+about|are\s+about|is\s+about|refer\s+to|contain)s?\s+(?P<q10>.+)"
    r"|^did\s+i\s+(?:write|note|save|jot|put)\s+(?:anything|something|any\s+notes?)?\s*"
    r"(?:down\s+)?(?:about|on|regarding)\s+(?P<q11>.+)"
    r"|^in\s+my\s+(?:notes|memory|memex)\s*,?\s+(?:please\s+)?(?:find|search\s+for|look\s+for"
    r"|look\s+up|show\s+me)\s+(?:anything\s+|something\s+|everything\s+)?(?:about\s+|on\s+)?"
    r"(?P<q12>.+)"
    r"|^(?:what|where)\s+did\s+i\s+(?:write|note|say|put|jot\s+down|save)"
    r"(?:\s+down)?\s+(?:about|on|regarding)\s+(?P<q4>.+)"
    r"|^where\s+did\s+i\s+(?:put|leave|keep|save)\s+(?:the\s+|my\s+)?notes?\s+"
    r"(?:from|about|on|of)\s+(?P<q7>.+)"
    r"|^(?:do|did)\s+i\s+(?:have|write|take)\s+(?:any\s+)?notes?\s+(?:about|on|regarding)\s+"
    r"(?P<q5>.+)$"
    r"|^have\s+i\s+(?:written|noted|saved|got)\s+(?:anything|something|any\s+notes?)\s+"
    r"(?:about|on|regarding)\s+(?P<q6>.+)$",
    re.I | re.S)
_PATH = r"(?P<{}>\"[^\"]+\"|'[^']+'|[~./\w-]*[\w-]+\.[A-Za-z0-9]{{1,6}}|[~.]?/\S+|~\S*)"
_GREP = re.compile(
    r"^(?:please\s+)?(?:grep|search)\s+(?:through\s+)?(?:the\s+)?(?:files\s+)?(?:in\s+|under\s+)?"
    r"(?P<d2>[~./]\S*)\s+for\s+(?P<p2>.+)"
    r"|^(?:please\s+)?(?:grep|search|look)\s+(?:(?:-\w+|--[\w-]+)\s+)*(?:for\s+)?"
    r"(?P<p1>\"[^\"]+\"|'[^']+'|\S+)\s+(?:(?:in|under|inside)\s+)?(?P<d1>[~./]\S*)"
    r"|^(?:please\s+)?find\s+(?:all\s+|every\s+|any\s+)?(?:the\s+)?"
    r"(?P<p3>\"[^\"]+\"|'[^']+'|\S+)\s+(?:in|under|inside)\s+(?P<d3>[~./]\S*)"
    r"|^(?:which|what)\s+files\s+(?:in|under|inside)\s+(?P<d4>[~./]\S*)\s+"
    r"(?:mention|contain|have|say)s?\s+(?P<p4>.+)"
    r"|^(?:please\s+)?(?:grep|search)\s+(?:through\s+)?(?:all\s+)?(?:my\s+|the\s+)?(?P<d5>files)"
    r"\s+for\s+(?P<p5>.+)",
    re.I | re.S)
_READ = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:read(?:\s+out)?|open(?:\s+up)?|show"
    r"|display|cat|view|print(?:\s+out)?|pull\s+up|bring\s+up|let\s+me\s+(?:see|look\s+at|read|view)|look\s+at"
    r"|what(?:'s|\s+is)\s+in|show\s+me\s+what(?:'s|\s+is)\s+in)\s+(?:me\s+)?(?:the\s+)?"
    r"(?:(?:contents?|text)\s+of\s+)?(?:the\s+)?(?:file\s+)?(?:called\s+|named\s+)?"
    + _PATH.format("path") +
    r"(?:\s+(?:for\s+me|please|and\s+show\s+(?:it|me)(?:\s+to\s+me)?))*\s*[?.!]*$",
    re.I | re.S)


# "search: bread recipes", "search for X" with no folder named: the notes.
_SEARCH_BARE = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)*search(?:\s+for)?\s*[:,-]?\s+"
    r"(?P<q>(?!.*\b(?:web|internet|online|google|wikipedia|amazon|youtube)\b).+)$", re.I | re.S)


def _memory(text: str, now: dt.datetime) -> Intent | None:
    m = _MEMORY.match(text)
    if m is None and not _BEYOND.search(text):
        m = _SEARCH_BARE.match(text)
    if m is None:
        return None
    query = _clean(next(g for g in m.groups() if g))
    query = re.sub(r"^(?:anything|something|stuff)\s+(?:about|on|regarding)\s+", "", query,
                   flags=re.I)
    return Intent("memory-search", {"query": _clean(query)}) if _clean(query) else None


def _grep(text: str, now: dt.datetime) -> Intent | None:
    m = _GREP.match(text)
    if m is None:
        return None
    pattern = _clean(m["p1"] or m["p2"] or m["p3"] or m["p4"] or m["p5"] or "")
    pattern = re.sub(r"^([A-Z]{2,})s$", r"\1", pattern)  # "find all FIXMEs": FIXME
    folder = (m["d1"] or m["d2"] or m["d3"] or m["d4"] or "").rstrip(".,?!")
    if m["d5"]:
        folder = "."  # "search my files for X": the workspace
    if not pattern or not folder:
        return None
    return Intent("grep-search", {"pattern": pattern, "dir": folder})


_READ_SAYS = re.compile(
    r"^what\s+(?:does|is)\s+(?:in\s+)?(?:the\s+file\s+)?" + _PATH.format("path")
    + r"\s+(?:say|contain|have\s+in\s+it)\s*[?.!]*$", re.I | re.S)
# "open the file", "read my journal file": a file asked for without its name.
_WHICH_FILE = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:read|open|show|display|cat|view|print"
    r"|pull\s+up)\s+(?:me\s+)?(?:the|that|this|a|my)\s+(?:[\w-]+\s+)?file(?:\s+please"
    r"|\s+for\s+me)?\s*[?.!]*$", re.I)


def _which_file(text: str, now: dt.datetime) -> Intent | None:
    if not _WHICH_FILE.match(text):
        return None
    return _answer("which", "Which file? Give its name or path, e.g. \"~/org/inbox.org\" or "
                   "\"notes/todo.org\".")


def _read(text: str, now: dt.datetime) -> Intent | None:
    m = _READ.match(text) or _READ_SAYS.match(text)
    if m is None:
        return None
    path = m["path"].strip("\"'").rstrip(".,?!")
    if not path or ("/" not in path and "." not in path):
        return None
    return Intent("read-file", {"path": path})


_BEYOND = re.compile(
    r"\b(?:e-?mails?|gmail|whatsapp|sms|text\s+message|send\s+(?:a\s+)?(?:message|text|mail)"
    r"|tweet|twitter|post\s+on|post\s+(?:this|it|that)\s+(?:to|on)|share\s+(?:this|it|that|my)\b.*"
    r"\b(?:on|with|via|to)|slack|discord|microsoft\s+teams|messenger|imessage"
    r"|send\s+\w+\s+(?:a\s+|an\s+)?(?:text|message|mail|e-?mail|sms|dm)|\btv\b|television"
    r"|on\s+the\s+radio|showtimes|cinema\s+times|how\s+long\s+(?:does|will|would)\s+it\s+take"
    r"\s+to\s+(?:drive|get|walk|cycle|fly|travel)|(?:on|via|over|through)\s+(?:signal|telegram)|(?:outlook|google|icloud|apple)\s+calendar"
    r"|(?:the|match|game|football|soccer|cricket|rugby|live)\s+scores?|match\s+results?|traffic|directions\s+to|route\s+to|near\s+me"
    r"|flight\s+status|price\s+of|prices?|bitcoin|crypto|share\s+price"
    r"|(?:euros?|dollars?|pounds?|yen|francs?)\s+(?:in|to|into)\s+(?:euros?|dollars?|pounds?|yen"
    r"|francs?)|playlist|spotify|podcast|youtube|netflix|tl;?dr"
    r"|(?:this|the|my|that)\s+(?:[\w-]+\s+){0,2}pdf|summari[sz]e\s+(?:this|that|these|the|my)\s+"
    r"(?:[\w-]+\s+){0,2}(?:article|document|doc|book|paper|pdf|page|e-?mail|thread|video"
    r"|report|chapter|podcast|website|site|link)"
    r"|weather|forecast|news|headlines|stock\s+price|exchange\s+rate|order\s+(?:more\s+)?\w+"
    r"|amazon|buy\s+(?:me\s+)?(?:a|some|more)|book\s+(?:a|me\s+a)\s+(?:table|flight|hotel|train"
    r"|taxi|room|ticket)|call\s+(?:the|my)\s+\w+|phone\s+\w+|ring\s+\w+|browse|website"
    r"|https?://|google\s|look\s+up\s+online|on\s+the\s+(?:web|internet)|latest\s+\w+)\b",
    re.I)


# Whole documents: a 135M model cannot write them well, and says so.
_LONG_WRITING = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:write|draft|compose|generate|create|prepare)"
    r"\s+(?:me\s+|us\s+)?(?:a|an|the|my)\s+(?:[\w-]+\s+){0,3}?(?:essay|business\s+plan|report"
    r"|article|novel|chapter|thesis|dissertation|paper|speech|cover\s+letter|blog\s+post"
    r"|proposal|book|contract|cv|resume|presentation|whitepaper)\b"
    r"|\b\d{3,}[\s-]*words?\b|\b\d+[\s-]*pages?\b"
    r"|^(?:please\s+)?translate\s+(?:this|the|my)\s+(?:whole|entire|full)\b", re.I)
# Messaging someone, playing, installing: what no offline tool does.
_BEYOND_VERB = re.compile(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)*(?:(?:text|message|msg|dm|whatsapp|sms)\s+"
    r"(?!me\b)\w+|play\s+\w+|install\s+\w+|download\s+\w+|upgrade\s+\w+|stream\s+\w+"
    r"|pay\s+\w+|transfer\s+\w+|print\s+(?:out\s+)?(?:a\s+)?(?:copy|page|photo)"
    r"|turn\s+(?:on|off)\s+the\s+\w+)", re.I)


def _beyond(text: str, now: dt.datetime) -> Intent | None:
    if not (_BEYOND.search(text) or _LONG_WRITING.search(text) or _BEYOND_VERB.search(text)):
        return None
    return _answer("decline", OFFLINE_CAN)


PARSERS: tuple[Callable[[str, dt.datetime], Intent | None], ...] = (
    _secret, _destructive, _schedule, _note, _read, _which_file, _agenda, _grep, _memory,
    _beyond,
)


def parse(text: str, now: dt.datetime | None = None) -> Intent | None:
    """The tool call ``text`` asks for (or the words to answer it with), or None when it
    is not one of the common requests."""
    request = " ".join(str(text or "").split())
    if not request or request.startswith("/") or len(request) > 2000:
        return None
    request = _normalize(request)
    moment = now or dt.datetime.now().astimezone()
    for parser in PARSERS:
        intent = parser(request, moment)
        if intent is not None:
            return intent
    return None
