"""Reading and writing org timestamps: parse, format, find, errors."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from passepartout.org.timestamps import (
    Interval,
    OrgTimestamp,
    Repeater,
    RepeaterKind,
    TimestampError,
    Unit,
    WarningDelay,
    find_timestamps,
    local_zone,
    parse_timestamp,
)

PARIS = ZoneInfo("Europe/Paris")


def test_parse_full_active_timestamp() -> None:
    ts = parse_timestamp("<2026-05-02 Sat 10:00-11:30 .+1d/3d -2d>")
    assert ts == OrgTimestamp(
        date=dt.date(2026, 5, 2),
        time=dt.time(10, 0),
        end_time=dt.time(11, 30),
        active=True,
        repeater=Repeater(RepeaterKind.RESTART, Interval(1, Unit.DAY), Interval(3, Unit.DAY)),
        warning=WarningDelay(Interval(2, Unit.DAY), first_only=False),
    )
    assert ts.repeats


@pytest.mark.parametrize(
    ("text", "kind", "value", "unit"),
    [
        ("<2026-05-02 Sat +1w>", RepeaterKind.CUMULATE, 1, Unit.WEEK),
        ("<2026-05-02 Sat ++12h>", RepeaterKind.CATCH_UP, 12, Unit.HOUR),
        ("<2026-05-02 Sat .+3m>", RepeaterKind.RESTART, 3, Unit.MONTH),
        ("<2026-05-02 Sat ++1y/2y>", RepeaterKind.CATCH_UP, 1, Unit.YEAR),
    ],
)
def test_parse_repeaters(text: str, kind: RepeaterKind, value: int, unit: Unit) -> None:
    repeater = parse_timestamp(text).repeater
    assert repeater is not None
    assert (repeater.kind, repeater.interval) == (kind, Interval(value, unit))


def test_inactive_timestamp_does_not_schedule_or_repeat() -> None:
    ts = parse_timestamp("[2026-05-02 Sat 09:00 +1d]")
    assert not ts.active
    assert not ts.repeats
    assert ts.format() == "[2026-05-02 Sat 09:00 +1d]"


def test_first_only_warning_and_order_in_source() -> None:
    ts = parse_timestamp("<2026-05-02 Sat --3d +1w>")
    assert ts.warning == WarningDelay(Interval(3, Unit.DAY), first_only=True)
    # org writes the repeater first
    assert ts.format() == "<2026-05-02 Sat +1w --3d>"


def test_day_name_is_ignored_and_rewritten_from_the_date() -> None:
    assert parse_timestamp("<2026-05-02 Mon>").format() == "<2026-05-02 Sat>"
    assert parse_timestamp("<2026-05-02 sam.>").format() == "<2026-05-02 Sat>"
    assert parse_timestamp("<2026-05-02>").format() == "<2026-05-02 Sat>"
    assert parse_timestamp("  <2026-05-02 9:05>\n").format() == "<2026-05-02 Sat 09:05>"


def test_date_range_start_schedules() -> None:
    ts = parse_timestamp("<2026-05-02 Sat 10:00>--<2026-05-04 Mon 12:00>")
    assert ts.range_end == OrgTimestamp(dt.date(2026, 5, 4), dt.time(12, 0))
    assert ts.start(PARIS) == dt.datetime(2026, 5, 2, 10, 0, tzinfo=PARIS)
    assert ts.format() == "<2026-05-02 Sat 10:00>--<2026-05-04 Mon 12:00>"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2026-05-02", "expected"),
        ("<2026-05-02 Sat", "expected"),
        ("<2026-05-02 Sat]", "brackets"),
        ("<2026-13-02>", "no such date"),
        ("<2026-02-30 Mon>", "no such date"),
        ("<2026-05-02 Sat 24:00>", "no such time"),
        ("<2026-05-02 Sat 10:60>", "no such time"),
        ("<2026-05-02 Sat +1d +2d>", "more than one repeater"),
        ("<2026-05-02 Sat -1d -2d>", "more than one warning"),
        ("<2026-05-02 Sat +1x>", "neither a repeater"),
        ("<2026-05-02 Sat every day>", "neither a repeater"),
        ("<2026-05-02 Sat>--[2026-05-03 Sun]", "expected"),
        ("", "expected"),
    ],
)
def test_bad_input_names_the_text(text: str, reason: str) -> None:
    with pytest.raises(TimestampError) as info:
        parse_timestamp(text)
    assert reason in str(info.value)
    assert repr(text) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_find_timestamps_in_a_body() -> None:
    body = (
        "SCHEDULED: <2026-05-02 Sat 09:00 ++1d> DEADLINE: <2026-05-09 Sat -2d>\n"
        "Noted [2026-04-30 Thu 18:12]; meeting <2026-05-03 Sun>--<2026-05-04 Mon>.\n"
        "Not a timestamp: <2026-13-40 Xyz> and <%%(diary-float t 4 2)>."
    )
    found = find_timestamps(body)
    assert [ts.format() for ts in found] == [
        "<2026-05-02 Sat 09:00 ++1d>",
        "<2026-05-09 Sat -2d>",
        "[2026-04-30 Thu 18:12]",
        "<2026-05-03 Sun>--<2026-05-04 Mon>",
    ]
    with pytest.raises(TimestampError, match="2026-13-40"):
        find_timestamps(body, strict=True)
    assert find_timestamps("nothing here") == []


def test_start_is_local_and_follows_dst() -> None:
    winter = parse_timestamp("<2026-01-10 Sat 09:00>").start(PARIS)
    summer = parse_timestamp("<2026-07-10 Fri 09:00>").start(PARIS)
    assert (winter.hour, summer.hour) == (9, 9)
    assert winter.utcoffset() == dt.timedelta(hours=1)
    assert summer.utcoffset() == dt.timedelta(hours=2)
    # a time in the spring-forward gap comes after it, as Emacs's encode-time does
    gap = parse_timestamp("<2026-03-29 Sun 02:30>").start(PARIS)
    assert (gap.hour, gap.minute, gap.utcoffset()) == (3, 30, dt.timedelta(hours=2))
    assert parse_timestamp("<2026-03-29 Sun>").start(PARIS).hour == 0


def test_local_zone_follows_tz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    assert local_zone() == ZoneInfo("America/New_York")
    start = parse_timestamp("<2026-07-01 Wed 09:00>").start()
    assert start.utcoffset() == dt.timedelta(hours=-4)
    monkeypatch.setenv("TZ", ":Europe/Paris")
    assert local_zone() == ZoneInfo("Europe/Paris")


def test_invalid_records_are_refused() -> None:
    with pytest.raises(ValueError, match="time range"):
        OrgTimestamp(dt.date(2026, 5, 2), end_time=dt.time(10, 0))
    with pytest.raises(ValueError, match="active or inactive"):
        OrgTimestamp(dt.date(2026, 5, 2), range_end=OrgTimestamp(dt.date(2026, 5, 3), active=False))
    with pytest.raises(ValueError, match="hours and minutes"):
        OrgTimestamp(dt.date(2026, 5, 2), time=dt.time(10, 0, 30))
    with pytest.raises(ValueError):
        Interval(-1, Unit.DAY)


# -- round trip ----------------------------------------------------------------

units = st.sampled_from(list(Unit))
intervals = st.builds(Interval, st.integers(0, 400), units)
repeaters = st.builds(
    Repeater, st.sampled_from(list(RepeaterKind)), intervals, st.none() | intervals
)
warnings = st.builds(WarningDelay, intervals, st.booleans())
clock_times = st.builds(dt.time, st.integers(0, 23), st.integers(0, 59))
dates = st.dates(dt.date(1000, 1, 1), dt.date(9999, 12, 31))


@st.composite
def single(draw: st.DrawFn, active: bool | None = None) -> OrgTimestamp:
    time = draw(st.none() | clock_times)
    end = draw(st.none() | clock_times) if time is not None else None
    return OrgTimestamp(
        date=draw(dates),
        time=time,
        end_time=end,
        active=draw(st.booleans()) if active is None else active,
        repeater=draw(st.none() | repeaters),
        warning=draw(st.none() | warnings),
    )


@st.composite
def timestamps(draw: st.DrawFn) -> OrgTimestamp:
    start = draw(single())
    if draw(st.booleans()):
        return start
    end = draw(single(active=start.active))
    return OrgTimestamp(
        start.date, start.time, start.end_time, start.active, start.repeater, start.warning, end
    )


@given(timestamps())
def test_parse_format_round_trip(ts: OrgTimestamp) -> None:
    text = ts.format()
    assert parse_timestamp(text) == ts
    assert find_timestamps(f"before {text} after") == [ts]
    assert parse_timestamp(text).format() == text
