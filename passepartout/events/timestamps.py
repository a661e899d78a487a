"""Org timestamps, read and written as org-mode does.

An org timestamp is ``<2026-05-02 Sat 10:00-11:30 +1w -3d>``: a date, a day
name (ignored when reading: org writes it from the date), an optional time of
day or time range, an optional repeater (``+1w``, ``++1d``, ``.+2h``, with a
habit bound as in ``.+1d/3d``) and an optional warning delay (``-3d``, or
``--3d`` for the first occurrence only). Angle brackets make it active (it
schedules), square brackets inactive. Two timestamps joined by ``--`` form a
date range; its start is what schedules.

This module is pure: no I/O apart from finding the system's time zone.
The repeat arithmetic lives in :mod:`passepartout.org.repeaters`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

log = logging.getLogger(__name__)

# Org writes the day name with format-time-string's %a; in the C locale
# (batch Emacs, and most configurations) these are the English abbreviations.
DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


class TimestampError(ValueError):
    """A text is not an org timestamp, or a timestamp cannot do what was asked."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"org timestamp {text!r}: {reason}")


class Unit(StrEnum):
    HOUR = "h"
    DAY = "d"
    WEEK = "w"
    MONTH = "m"
    YEAR = "y"


class RepeaterKind(StrEnum):
    CUMULATE = "+"  # shift once
    CATCH_UP = "++"  # shift until in the future
    RESTART = ".+"  # shift from the time it was done


@dataclass(frozen=True, slots=True)
class Interval:
    value: int
    unit: Unit

    def __post_init__(self) -> None:
        if self.value < 0:
            raise ValueError(f"interval value must be >= 0, got {self.value}")

    def __str__(self) -> str:
        return f"{self.value}{self.unit}"


@dataclass(frozen=True, slots=True)
class Repeater:
    kind: RepeaterKind
    interval: Interval
    habit_max: Interval | None = None  # the "/3d" of ".+1d/3d"

    def __str__(self) -> str:
        text = f"{self.kind}{self.interval}"
        return f"{text}/{self.habit_max}" if self.habit_max is not None else text


@dataclass(frozen=True, slots=True)
class WarningDelay:
    interval: Interval
    first_only: bool = False  # "--3d": org drops it when the task repeats

    def __str__(self) -> str:
        return ("--" if self.first_only else "-") + str(self.interval)


@dataclass(frozen=True, slots=True)
class OrgTimestamp:
    date: dt.date
    time: dt.time | None = None
    end_time: dt.time | None = None  # the "11:30" of "10:00-11:30"
    active: bool = True
    repeater: Repeater | None = None
    warning: WarningDelay | None = None
    range_end: OrgTimestamp | None = field(default=None)  # the "<b>" of "<a>--<b>"

    def __post_init__(self) -> None:
        for t in (self.time, self.end_time):
            if t is not None and (t.second or t.microsecond or t.tzinfo is not None):
                raise ValueError(f"org times are naive hours and minutes, got {t!r}")
        if self.end_time is not None and self.time is None:
            raise ValueError("a time range needs a start time")
        if self.range_end is not None:
            if self.range_end.range_end is not None:
                raise ValueError("a date range cannot end with another range")
            if self.range_end.active != self.active:
                raise ValueError("both ends of a date range must be active or inactive")

    @property
    def wall(self) -> dt.datetime:
        """Naive local wall-clock start (midnight without a time of day)."""
        return dt.datetime.combine(self.date, self.time or dt.time(0, 0))

    @property
    def repeats(self) -> bool:
        """True when org would repeat it: active, with a non-zero repeater."""
        return self.active and self.repeater is not None and self.repeater.interval.value > 0

    def start(self, tz: dt.tzinfo | None = None) -> dt.datetime:
        """Aware start in ``tz`` (default: the system's zone).

        A wall-clock time skipped by a daylight-saving change is moved forward
        by the gap, as Emacs's ``encode-time`` does (02:30 becomes 03:30).
        """
        return localize(self.wall, tz if tz is not None else local_zone())

    def format(self) -> str:
        """The timestamp as org writes it (repeater before warning delay)."""
        opening, closing = ("<", ">") if self.active else ("[", "]")
        parts = [self.date.isoformat(), DAY_NAMES[self.date.weekday()]]
        if self.time is not None:
            clock = f"{self.time:%H:%M}"
            if self.end_time is not None:
                clock += f"-{self.end_time:%H:%M}"
            parts.append(clock)
        if self.repeater is not None:
            parts.append(str(self.repeater))
        if self.warning is not None:
            parts.append(str(self.warning))
        text = opening + " ".join(parts) + closing
        if self.range_end is not None:
            text += "--" + self.range_end.format()
        return text

    def __str__(self) -> str:
        return self.format()


def localize(wall: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    """Aware datetime for a naive wall-clock time in ``tz``, as mktime reads it.

    The round trip through UTC moves a time inside a spring-forward gap
    past the gap; an ambiguous fall-back time is its first occurrence.
    """
    try:
        return wall.replace(tzinfo=tz).astimezone(dt.UTC).astimezone(tz)
    except OverflowError:
        raise TimestampError(f"{wall:%Y-%m-%d %H:%M}", "outside the years 1-9999 here") from None


def local_zone() -> dt.tzinfo:
    """The system's time zone, with its daylight-saving rules when they can be found.

    Looks at ``TZ``, then ``/etc/localtime`` and ``/etc/timezone``; falls back
    to the current fixed UTC offset (which does not follow DST changes).
    """
    candidates: list[str] = []
    env = os.environ.get("TZ", "").removeprefix(":")
    if env:
        candidates.append(env)
    with contextlib.suppress(OSError):
        parts = Path("/etc/localtime").resolve().parts
        if "zoneinfo" in parts:
            candidates.append("/".join(parts[parts.index("zoneinfo") + 1 :]))
    with contextlib.suppress(OSError):
        candidates.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    for name in candidates:
        if not name:
            continue
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
    log.warning("system time zone not found; using the current UTC offset, blind to DST")
    zone = dt.datetime.now().astimezone().tzinfo
    return zone if zone is not None else dt.UTC


_ONE = re.compile(
    r"""
    (?P<open>[<\[])
    (?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})
    (?:\ +[^\]\[<>+\-\d\s]+)?                      # day name, ignored as org does
    (?:\ +(?P<hour>\d{1,2}):(?P<minute>\d{2})
       (?:-(?P<end_hour>\d{1,2}):(?P<end_minute>\d{2}))?)?
    (?P<extra>(?:\ +[^\s\]\[<>]+)*)
    \ *(?P<close>[\]>])
    """,
    re.VERBOSE,
)
_REPEATER = re.compile(r"(\.\+|\+\+|\+)(\d+)([hdwmy])(?:/(\d+)([hdwmy]))?")
_WARNING = re.compile(r"(--?)(\d+)([hdwmy])")
# Anything that starts like a timestamp, for find_timestamps.
_CANDIDATE = re.compile(r"[<\[]\d{4}-\d{2}-\d{2}[^\]\[<>\n]*[\]>]")


def _clock(text: str, hour: str, minute: str) -> dt.time:
    h, m = int(hour), int(minute)
    if h > 23 or m > 59:
        raise TimestampError(text, f"no such time of day {hour}:{minute}")
    return dt.time(h, m)


def _parse_one(text: str, whole: str) -> OrgTimestamp:
    m = _ONE.fullmatch(text)
    if m is None:
        raise TimestampError(whole, "expected <YYYY-MM-DD Day [HH:MM[-HH:MM]] [repeater] [-delay]>")
    if (m["open"], m["close"]) not in (("<", ">"), ("[", "]")):
        raise TimestampError(whole, "brackets do not match")
    try:
        date = dt.date(int(m["year"]), int(m["month"]), int(m["day"]))
    except ValueError:
        raise TimestampError(whole, f"no such date {m['year']}-{m['month']}-{m['day']}") from None
    time = _clock(whole, m["hour"], m["minute"]) if m["hour"] else None
    end = _clock(whole, m["end_hour"], m["end_minute"]) if m["end_hour"] else None
    repeater: Repeater | None = None
    warning: WarningDelay | None = None
    for token in m["extra"].split():
        if r := _REPEATER.fullmatch(token):
            if repeater is not None:
                raise TimestampError(whole, "more than one repeater")
            habit = Interval(int(r[4]), Unit(r[5])) if r[4] else None
            repeater = Repeater(RepeaterKind(r[1]), Interval(int(r[2]), Unit(r[3])), habit)
        elif w := _WARNING.fullmatch(token):
            if warning is not None:
                raise TimestampError(whole, "more than one warning delay")
            warning = WarningDelay(Interval(int(w[2]), Unit(w[3])), first_only=w[1] == "--")
        else:
            raise TimestampError(
                whole, f"{token!r} is neither a repeater (+1d, ++1w, .+2h) nor a delay (-3d)"
            )
    return OrgTimestamp(date, time, end, m["open"] == "<", repeater, warning)


def parse_timestamp(text: str) -> OrgTimestamp:
    """Parse one timestamp or date range (surrounding whitespace allowed).

    Raises :class:`TimestampError` naming the text when it is not one.
    """
    if not isinstance(text, str):
        raise TimestampError(repr(text), "not a string")
    stripped = text.strip()
    head, sep, tail = stripped.partition("]--[" if stripped.startswith("[") else ">--<")
    if not sep:
        return _parse_one(stripped, text)
    start = _parse_one(head + sep[0], text)
    end = _parse_one(sep[-1] + tail, text)
    if end.range_end is not None:
        raise TimestampError(text, "a date range has two ends")
    return OrgTimestamp(
        start.date, start.time, start.end_time, start.active, start.repeater, start.warning, end
    )


def find_timestamps(text: str, *, strict: bool = False) -> list[OrgTimestamp]:
    """All timestamps in ``text`` (a property value, a heading body), in order.

    Something bracketed that starts with a date but is not a valid timestamp
    is skipped, or raises :class:`TimestampError` when ``strict``.
    """
    found: list[OrgTimestamp] = []
    pos = 0
    while (m := _CANDIDATE.search(text, pos)) is not None:
        pos = m.end()
        try:
            ts = _parse_one(m[0], m[0])
        except TimestampError:
            if strict:
                raise
            log.debug("skipping %r: not an org timestamp", m[0])
            continue
        if text.startswith("--", pos) and (n := _CANDIDATE.match(text, pos + 2)) is not None:
            try:
                end = _parse_one(n[0], n[0])
            except TimestampError:
                if strict:
                    raise
                end = None
            if end is not None and end.active == ts.active:
                ts = OrgTimestamp(
                    ts.date, ts.time, ts.end_time, ts.active, ts.repeater, ts.warning, end
                )
                pos = n.end()
        found.append(ts)
    return found
