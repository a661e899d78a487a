"""Repeat arithmetic (org's answer after DONE) and the orchestrator's cron rule."""

from __future__ import annotations

import dataclasses
import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from passepartout.org.repeaters import is_due, next_after_done, next_run_after
from passepartout.org.timestamps import (
    Interval,
    OrgTimestamp,
    Repeater,
    RepeaterKind,
    TimestampError,
    Unit,
    WarningDelay,
    parse_timestamp,
)

PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")
UTC = ZoneInfo("UTC")
NOON = dt.datetime(2026, 5, 10, 12, 0, tzinfo=PARIS)  # a Sunday


def after_done(text: str, now: dt.datetime = NOON, tz: dt.tzinfo = PARIS, **kw: bool) -> str:
    return next_after_done(parse_timestamp(text), now, tz, **kw).format()


def run_after(text: str, now: dt.datetime = NOON, tz: dt.tzinfo = PARIS) -> str | None:
    result = next_run_after(parse_timestamp(text), now, tz)
    return None if result is None else result.format()


def test_plus_shifts_once_even_into_the_past() -> None:
    assert after_done("<2026-05-01 Fri 09:00 +1d>") == "<2026-05-02 Sat 09:00 +1d>"
    assert after_done("<2026-01-31 Sat +1m>") == "<2026-03-03 Tue +1m>"


def test_catch_up_compares_days_with_today_hours_with_now() -> None:
    # org 9.6+: a day-based ++ lands after today, even when a time later today exists
    assert after_done("<2026-05-08 Fri 18:00 ++1d>") == "<2026-05-11 Mon 18:00 ++1d>"
    # org 9.5 compared the current time
    legacy = after_done("<2026-05-08 Fri 18:00 ++1d>", legacy_catch_up=True)
    assert legacy == "<2026-05-10 Sun 18:00 ++1d>"
    assert after_done("<2026-05-10 Sun 09:00 ++3h>") == "<2026-05-10 Sun 15:00 ++3h>"
    assert after_done("<2025-05-10 Sat ++1d>") == "<2026-05-11 Mon ++1d>"


def test_restart_counts_from_today_or_now() -> None:
    assert after_done("<2026-05-01 Fri 09:00 .+2d>") == "<2026-05-12 Tue 09:00 .+2d>"
    assert after_done("<2026-05-15 Fri .+1w>") == "<2026-05-17 Sun .+1w>"
    assert after_done("<2026-05-08 Fri 18:00 .+2h>") == "<2026-05-10 Sun 14:00 .+2h>"


def test_warnings_and_habits_are_kept_first_only_warning_dropped() -> None:
    assert after_done("<2026-05-02 Sat +1w -3d>") == "<2026-05-09 Sat +1w -3d>"
    assert after_done("<2026-04-01 Wed ++2w --2d>") == "<2026-05-13 Wed ++2w>"
    assert after_done("<2026-05-09 Sat .+1d/3d>") == "<2026-05-11 Mon .+1d/3d>"


def test_time_range_keeps_its_length() -> None:
    assert after_done("<2026-05-10 Sun 23:00-01:00 +3h>") == "<2026-05-11 Mon 02:00-04:00 +3h>"
    assert after_done("<2026-05-02 Sat 10:00-11:30 +1w>") == "<2026-05-09 Sat 10:00-11:30 +1w>"


def test_date_range_ends_repeat_on_their_own() -> None:
    text = "<2026-05-01 Fri +1w>--<2026-05-03 Sun +1w>"
    assert after_done(text) == "<2026-05-08 Fri +1w>--<2026-05-10 Sun +1w>"
    assert after_done("<2026-05-01 Fri +1w>--<2026-05-03 Sun>") == (
        "<2026-05-08 Fri +1w>--<2026-05-03 Sun>"
    )
    # the cron rule moves a repeating end by as many periods as the start
    assert run_after(text) == "<2026-05-15 Fri +1w>--<2026-05-17 Sun +1w>"


def test_daily_job_keeps_its_local_time_across_dst() -> None:
    before = dt.datetime(2026, 3, 28, 12, tzinfo=PARIS)
    nxt = next_after_done(parse_timestamp("<2026-03-28 Sat 09:00 ++1d>"), before, PARIS)
    assert nxt.format() == "<2026-03-29 Sun 09:00 ++1d>"
    start = nxt.start(PARIS)
    assert (start.hour, start.utcoffset()) == (9, dt.timedelta(hours=2))
    # a time the change skips moves past the gap, as org writes it
    gap = "<2026-03-07 Sat 02:30 +1d>"
    assert after_done(gap, dt.datetime(2026, 3, 9, tzinfo=NEW_YORK), NEW_YORK) == (
        "<2026-03-08 Sun 03:30 +1d>"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<2026-05-01 Fri>", "no repeater"),
        ("<2026-05-01 Fri +0d>", "no repeater"),
        ("[2026-05-01 Fri +1d]", "no repeater"),
        ("<2026-05-01 Fri +2h>", "no time of day"),
    ],
)
def test_what_does_not_repeat_is_an_error(text: str, reason: str) -> None:
    with pytest.raises(TimestampError, match=reason):
        next_after_done(parse_timestamp(text), NOON, PARIS)


def test_now_must_be_aware() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        next_after_done(parse_timestamp("<2026-05-01 Fri +1d>"), dt.datetime(2026, 5, 10))


def test_cron_rule() -> None:
    assert run_after("<2026-05-01 Fri 09:00>") is None
    assert run_after("[2026-05-01 Fri 09:00 +1d]") is None
    # missed nine times: runs once, next at the first repeat after now
    assert run_after("<2026-05-01 Fri 09:00 +1d>") == "<2026-05-11 Mon 09:00 +1d>"
    assert run_after("<2026-05-01 Fri 18:00 +1d>") == "<2026-05-10 Sun 18:00 +1d>"
    assert run_after("<2026-05-10 Sun 11:00 +1d>") == "<2026-05-11 Mon 11:00 +1d>"
    assert run_after("<2026-01-31 Sat +1m>") == "<2026-06-03 Wed +1m>"
    # org's answer stands when it is in the future
    assert run_after("<2026-05-08 Fri 18:00 ++1d>") == "<2026-05-11 Mon 18:00 ++1d>"
    # org's .+1h after a spring-forward change lands on now: one more hour
    now = dt.datetime(2026, 3, 29, 12, 0, 30, tzinfo=PARIS)
    ts = "<2026-03-28 Sat 10:00 .+1h>"
    assert after_done(ts, now) == "<2026-03-29 Sun 12:00 .+1h>"
    assert run_after(ts, now) == "<2026-03-29 Sun 13:00 .+1h>"


def test_far_behind_hourly_job_jumps_to_the_right_hour() -> None:
    now = dt.datetime(2026, 5, 10, 12, 30, tzinfo=UTC)
    assert run_after("<2020-01-01 Wed 00:15 +1h>", now, UTC) == "<2026-05-10 Sun 13:15 +1h>"
    assert after_done("<2020-01-01 Wed 00:15 ++2h>", now, UTC) == "<2026-05-10 Sun 14:15 ++2h>"
    assert run_after("<1990-01-01 Mon 09:00 +1w>", now, UTC) == "<2026-05-11 Mon 09:00 +1w>"


def test_is_due() -> None:
    ts = parse_timestamp("<2026-05-10 Sun 12:00>")
    assert is_due(ts, NOON, PARIS)
    assert not is_due(ts, NOON - dt.timedelta(seconds=1), PARIS)
    assert is_due(ts, NOON.astimezone(NEW_YORK), PARIS)
    assert not is_due(parse_timestamp("[2026-05-01 Fri]"), NOON, PARIS)


# -- properties ----------------------------------------------------------------

DST_ZONES = [PARIS, NEW_YORK, ZoneInfo("Australia/Sydney")]
FIXED_ZONES = [UTC, ZoneInfo("Asia/Tokyo")]
DAY_UNITS = [Unit.DAY, Unit.WEEK, Unit.MONTH, Unit.YEAR]
MAX_VALUE = {Unit.HOUR: 48, Unit.DAY: 30, Unit.WEEK: 5, Unit.MONTH: 13, Unit.YEAR: 3}

nows = st.datetimes(dt.datetime(2001, 1, 1), dt.datetime(2040, 12, 31))


@st.composite
def repeated(
    draw: st.DrawFn,
    kinds: list[RepeaterKind],
    units: list[Unit],
    hours: tuple[int, int] = (0, 23),
    days_behind: int = 400,
) -> tuple[OrgTimestamp, dt.datetime]:
    """A repeated timestamp up to ``days_behind`` days before a naive ``now``."""
    now = draw(nows)
    unit = draw(st.sampled_from(units))
    value = draw(st.integers(1, MAX_VALUE[unit]))
    timed = unit is Unit.HOUR or draw(st.booleans())
    time = dt.time(draw(st.integers(*hours)), draw(st.integers(0, 59))) if timed else None
    date = now.date() + dt.timedelta(days=draw(st.integers(-days_behind, 60)))
    kind = draw(st.sampled_from(kinds))
    warning = draw(
        st.none()
        | st.builds(
            WarningDelay,
            st.builds(Interval, st.integers(0, 9), st.sampled_from(list(Unit))),
            st.booleans(),
        )
    )
    return OrgTimestamp(
        date, time, repeater=Repeater(kind, Interval(value, unit)), warning=warning
    ), now


def aware(naive: dt.datetime, tz: ZoneInfo) -> dt.datetime:
    return naive.replace(tzinfo=tz)


forward = [RepeaterKind.CATCH_UP, RepeaterKind.RESTART]


@given(repeated(forward, DAY_UNITS), st.sampled_from(DST_ZONES + FIXED_ZONES))
def test_catch_up_and_restart_land_in_the_future(
    case: tuple[OrgTimestamp, dt.datetime], tz: ZoneInfo
) -> None:
    ts, naive_now = case
    now = aware(naive_now, tz)
    for legacy in (False, True):
        result = next_after_done(ts, now, tz, legacy_catch_up=legacy)
        assert result.start(tz).timestamp() > now.timestamp()


@given(repeated(forward, [Unit.HOUR]), st.sampled_from(FIXED_ZONES))
def test_hourly_catch_up_and_restart_land_in_the_future(
    case: tuple[OrgTimestamp, dt.datetime], tz: ZoneInfo
) -> None:
    ts, naive_now = case
    now = aware(naive_now, tz)
    assert next_after_done(ts, now, tz).start(tz).timestamp() > now.timestamp()


@given(repeated([RepeaterKind.CUMULATE], [Unit.HOUR, Unit.DAY, Unit.WEEK]))
def test_plus_advances_by_exactly_one_period(case: tuple[OrgTimestamp, dt.datetime]) -> None:
    ts, naive_now = case
    assert ts.repeater is not None
    step = {
        Unit.HOUR: dt.timedelta(hours=1),
        Unit.DAY: dt.timedelta(days=1),
        Unit.WEEK: dt.timedelta(weeks=1),
    }[ts.repeater.interval.unit]
    result = next_after_done(ts, aware(naive_now, UTC), UTC)
    assert result.start(UTC) - ts.start(UTC) == ts.repeater.interval.value * step


@given(repeated([RepeaterKind.CUMULATE], [Unit.MONTH, Unit.YEAR]))
def test_plus_advances_months_and_years_by_one_period(
    case: tuple[OrgTimestamp, dt.datetime],
) -> None:
    ts, naive_now = case
    assert ts.repeater is not None
    months = ts.repeater.interval.value * (12 if ts.repeater.interval.unit is Unit.YEAR else 1)
    result = next_after_done(ts, aware(naive_now, UTC), UTC)
    index = ts.date.year * 12 + ts.date.month - 1 + months
    if ts.date.day <= 28:
        assert result.date == dt.date(index // 12, index % 12 + 1, ts.date.day)
    else:  # a day the month lacks carries into the next month, as org's encode-time does
        assert result.date.day in (ts.date.day, 1, 2, 3)
        assert result.date.year * 12 + result.date.month - 1 in (index, index + 1)
    assert result.time == ts.time


@given(
    repeated(list(RepeaterKind), DAY_UNITS, hours=(4, 23)),
    st.sampled_from([PARIS, NEW_YORK]),
)
def test_wall_clock_time_survives_dst(case: tuple[OrgTimestamp, dt.datetime], tz: ZoneInfo) -> None:
    ts, naive_now = case
    now = aware(naive_now, tz)
    for result in (next_after_done(ts, now, tz), next_run_after(ts, now, tz)):
        assert result is not None
        assert result.time == ts.time
        start = result.start(tz)
        assert (start.hour, start.minute) == (
            (ts.time or dt.time()).hour,
            (ts.time or dt.time()).minute,
        )


@given(
    repeated(list(RepeaterKind), list(Unit)),
    st.sampled_from(DST_ZONES + FIXED_ZONES),
)
def test_warning_delays_never_change_the_schedule(
    case: tuple[OrgTimestamp, dt.datetime], tz: ZoneInfo
) -> None:
    ts, naive_now = case
    now = aware(naive_now, tz)
    bare = dataclasses.replace(ts, warning=None)
    for fn in (next_after_done, next_run_after):
        with_warning, without = fn(ts, now, tz), fn(bare, now, tz)
        assert with_warning is not None and without is not None
        assert with_warning.wall == without.wall
        expected = None if ts.warning is None or ts.warning.first_only else ts.warning
        assert with_warning.warning == expected


@given(
    repeated(list(RepeaterKind), list(Unit), days_behind=60),
    st.sampled_from(DST_ZONES + FIXED_ZONES),
)
def test_cron_rule_is_org_unless_past_then_first_repeat_after_now(
    case: tuple[OrgTimestamp, dt.datetime], tz: ZoneInfo
) -> None:
    ts, naive_now = case
    now = aware(naive_now, tz)
    org = next_after_done(ts, now, tz)
    result = next_run_after(ts, now, tz)
    assert result is not None
    assert result.start(tz).timestamp() > now.timestamp()
    # walk org's own one-period shifts from its answer to the first one after now
    assert org.repeater is not None
    step = Repeater(RepeaterKind.CUMULATE, org.repeater.interval, org.repeater.habit_max)
    walk = dataclasses.replace(org, repeater=step)
    while walk.start(tz).timestamp() <= now.timestamp():
        walk = next_after_done(walk, now, tz)
    assert result == dataclasses.replace(walk, repeater=org.repeater)


@given(repeated(list(RepeaterKind), list(Unit)), st.sampled_from(DST_ZONES + FIXED_ZONES))
def test_one_shot_and_inactive_never_run_again(
    case: tuple[OrgTimestamp, dt.datetime], tz: ZoneInfo
) -> None:
    ts, naive_now = case
    now = aware(naive_now, tz)
    assert next_run_after(dataclasses.replace(ts, repeater=None), now, tz) is None
    assert next_run_after(dataclasses.replace(ts, active=False), now, tz) is None
    assert is_due(ts, now, tz) == (ts.start(tz).timestamp() <= now.timestamp())


def test_repeat_past_year_9999_is_a_clear_error() -> None:
    with pytest.raises(TimestampError, match="years 1-9999"):
        run_after("<9999-12-31 Fri 23:00 +1d>", NOON, PARIS)
    with pytest.raises(TimestampError, match="years 1-9999"):
        parse_timestamp("<0001-01-01 Mon 00:00>").start(ZoneInfo("Asia/Tokyo"))
