"""What a repeated org timestamp becomes after the task is done, and the cron rule.

:func:`next_after_done` follows ``org-auto-repeat-maybe`` (org-mode 9.6+;
org 9.5 differs in one case, see ``legacy_catch_up``): org moves a
timestamp by adding to one field of its wall-clock time and letting
``encode-time`` normalise the result, so Jan 31 + 1m is Mar 3 (Mar 2 in a
leap year), a daily 09:00 stays at 09:00 local across a DST change, and a
time skipped by the change (02:30) becomes the time after the gap (03:30).

:func:`next_run_after` is the orchestrator's rule: org's answer, unless that
is still in the past, in which case the first repeat strictly after now, so
a job missed many times runs once, not once per missed period.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math

from passepartout.org.timestamps import (
    OrgTimestamp,
    RepeaterKind,
    TimestampError,
    Unit,
    local_zone,
    localize,
)

log = logging.getLogger(__name__)

# Beyond this many periods behind, jump most of the way in one step instead of
# shifting period by period (an hourly job a few years behind).
_JUMP_AFTER = 10_000
# A stride of the jump: shorter than the time between two changes of a zone's offset.
_STRIDE_SECONDS = 7 * 86400
_PERIOD_SECONDS = {Unit.HOUR: 3600, Unit.DAY: 86400, Unit.WEEK: 7 * 86400}
# Every unit, months and years at their usual length: for "how late is this run".
APPROX_PERIOD_SECONDS = {**_PERIOD_SECONDS, Unit.MONTH: 30 * 86400, Unit.YEAR: 365 * 86400}


def _epoch(moment: dt.datetime) -> float:
    # Aware datetimes sharing a tzinfo compare and subtract by wall clock in
    # Python, ignoring the offset: compare instants as epoch seconds instead.
    return moment.timestamp()


def _aware(now: dt.datetime, tz: dt.tzinfo | None) -> tuple[dt.datetime, dt.tzinfo]:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"now must be timezone-aware, got {now!r}")
    zone = tz if tz is not None else local_zone()
    return now.astimezone(zone), zone


def _shift(wall: dt.datetime, n: int, unit: Unit, tz: dt.tzinfo, timed: bool) -> dt.datetime:
    """``org-timestamp-change``: add ``n`` to one wall-clock field, normalise like mktime."""
    if unit is Unit.WEEK:
        n, unit = 7 * n, Unit.DAY
    try:
        if unit in (Unit.MONTH, Unit.YEAR):
            months = wall.month - 1 + n * (12 if unit is Unit.YEAR else 1)
            first = wall.replace(year=wall.year + months // 12, month=months % 12 + 1, day=1)
            # A day past the month's end carries into the next month (Feb 31 = Mar 3).
            moved = first + dt.timedelta(days=wall.day - 1)
        elif unit is Unit.DAY:
            moved = wall + dt.timedelta(days=n)
        else:
            moved = wall + dt.timedelta(hours=n)
    except (OverflowError, ValueError):
        raise TimestampError(f"{wall:%Y-%m-%d %H:%M}", "repeat leaves the years 1-9999") from None
    return _normalize(moved, tz) if timed else moved


def _normalize(wall: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    # Org writes back the instant encode-time made of the fields: a wall time in
    # a spring-forward gap comes back after the gap.
    return localize(wall, tz).replace(tzinfo=None)


def _with_wall(part: OrgTimestamp, wall: dt.datetime) -> OrgTimestamp:
    """``part`` moved to ``wall``, a time range keeping its length."""
    if part.time is None:
        return dataclasses.replace(part, date=wall.date())
    end = part.end_time
    if end is not None and part.time is not None:
        length = (end.hour - part.time.hour) * 60 + end.minute - part.time.minute
        end_minutes = (wall.hour * 60 + wall.minute + length) % 1440
        end = dt.time(end_minutes // 60, end_minutes % 60)
    return dataclasses.replace(part, date=wall.date(), time=wall.time(), end_time=end)


def _jump(
    wall: dt.datetime, n: int, unit: Unit, now: dt.datetime, tz: dt.tzinfo, timed: bool
) -> tuple[dt.datetime, int]:
    """Move a far-behind fixed-length repeat to a few periods before now quickly.

    The same wall-clock time as org's shift period by period: strides of a week at
    most, each one shift unless the zone's UTC offset changes inside it, where
    period by period (a step that lands in a spring-forward gap comes back after the
    gap, and every later step keeps that hour).  Stops at least two periods before
    now, so that the caller's own stepping finds the first repeat after now.
    Returns the new wall-clock time and the number of periods jumped.
    """
    seconds = _PERIOD_SECONDS.get(unit)
    if seconds is None:
        return wall, 0  # months and years: at most 12 steps a year, no need
    step = n * seconds
    behind = int((_epoch(now) - _epoch(localize(wall, tz))) // step)
    if behind <= _JUMP_AFTER:
        return wall, 0
    limit = _epoch(now) - 2 * step
    chunk = max(1, _STRIDE_SECONDS // step)
    periods = 0
    while True:
        before = localize(wall, tz)
        moved = _shift(wall, n * chunk, unit, tz, timed)
        after = localize(moved, tz)
        if timed and chunk > 1 and after.utcoffset() != before.utcoffset():
            moved = wall
            for _ in range(chunk):
                moved = _shift(moved, n, unit, tz, timed)
            after = localize(moved, tz)
        if _epoch(after) > limit:
            return wall, periods
        wall, periods = moved, periods + chunk


def _repeat(part: OrgTimestamp, now: dt.datetime, tz: dt.tzinfo, legacy: bool) -> OrgTimestamp:
    """One repeated timestamp after its task was done at ``now``."""
    repeater = part.repeater
    assert repeater is not None
    n, unit = repeater.interval.value, repeater.interval.unit
    timed = part.time is not None
    if unit is Unit.HOUR and not timed:
        raise TimestampError(
            part.format(), f"cannot repeat every {n} hour(s): the timestamp has no time of day"
        )
    wall = part.wall
    today = now.date()
    if repeater.kind is RepeaterKind.RESTART:
        if unit is Unit.HOUR:
            # org shifts by whole minutes up to now, then adds the hours
            minutes = math.floor((_epoch(now) - _epoch(localize(wall, tz))) / 60)
            wall = _normalize(wall + dt.timedelta(minutes=minutes), tz)
        else:
            wall = _shift(wall, (today - wall.date()).days, Unit.DAY, tz, timed)
    elif repeater.kind is RepeaterKind.CATCH_UP:
        now_epoch = _epoch(now)

        def passed(candidate: dt.datetime) -> bool:
            if unit is Unit.HOUR or legacy:
                return not now_epoch < _epoch(localize(candidate, tz))
            return today >= candidate.date()

        wall, _ = _jump(wall, n, unit, now, tz, timed)
        shifts = 0
        # org asks whether to go on after ten shifts; the answer "yes" is assumed
        while shifts == 0 or passed(wall):
            wall = _shift(wall, n, unit, tz, timed)
            shifts += 1
        wall = _shift(wall, -n, unit, tz, timed)
    wall = _shift(wall, n, unit, tz, timed)
    moved = _with_wall(part, wall)
    if moved.warning is not None and moved.warning.first_only:
        moved = dataclasses.replace(moved, warning=None)  # org drops "--3d" on repeat
    return moved


def next_after_done(
    ts: OrgTimestamp,
    now: dt.datetime,
    tz: dt.tzinfo | None = None,
    *,
    legacy_catch_up: bool = False,
) -> OrgTimestamp:
    """The timestamp org writes when its repeated task is marked DONE at ``now``.

    ``+N`` shifts once (the result may still be past), ``++N`` shifts until
    it is after today (after now for hours), ``.+N`` shifts from today (from
    now for hours). ``now`` must be aware; wall-clock times are read in
    ``tz`` (default: the system's zone). Org 9.5 and older compared ``++``
    day-based repeats with the current time rather than today: pass
    ``legacy_catch_up=True`` to get that behaviour. Raises
    :class:`TimestampError` when the timestamp does not repeat.
    """
    if not ts.repeats:
        raise TimestampError(ts.format(), "has no repeater (or +0): nothing to repeat")
    local_now, zone = _aware(now, tz)
    moved = _repeat(ts, local_now, zone, legacy_catch_up)
    end = ts.range_end
    if end is not None and end.repeats:
        end = _repeat(end, local_now, zone, legacy_catch_up)
    return dataclasses.replace(moved, range_end=end)


def _advance(part: OrgTimestamp, periods: int, tz: dt.tzinfo) -> OrgTimestamp:
    if periods == 0 or not part.repeats:
        return part
    assert part.repeater is not None
    n, unit = part.repeater.interval.value, part.repeater.interval.unit
    return _with_wall(part, _shift(part.wall, periods * n, unit, tz, part.time is not None))


def next_run_after(
    ts: OrgTimestamp, now: dt.datetime, tz: dt.tzinfo | None = None
) -> OrgTimestamp | None:
    """The job's next scheduled time after it ran at ``now``; None for a one-shot.

    Org's answer (:func:`next_after_done`), except when that is still at or
    before ``now`` (a ``+`` repeater far behind, which org shows overdue):
    then the first repeat strictly after ``now``.
    """
    if not ts.repeats:
        return None
    local_now, zone = _aware(now, tz)
    answer = next_after_done(ts, local_now, zone)
    if _epoch(answer.start(zone)) > _epoch(local_now):
        return answer
    assert answer.repeater is not None
    n, unit = answer.repeater.interval.value, answer.repeater.interval.unit
    timed = answer.time is not None
    wall, periods = _jump(answer.wall, n, unit, local_now, zone, timed)
    while _epoch(localize(wall, zone)) <= _epoch(local_now):
        wall = _shift(wall, n, unit, zone, timed)
        periods += 1
    log.debug("%s was overdue at %s: skipping %d missed run(s)", answer, local_now, periods)
    end = answer.range_end
    if end is not None:
        end = _advance(end, periods, zone)
    return dataclasses.replace(_with_wall(answer, wall), range_end=end)


def is_due(ts: OrgTimestamp, now: dt.datetime, tz: dt.tzinfo | None = None) -> bool:
    """True when an active timestamp's start is at or before ``now``."""
    local_now, zone = _aware(now, tz)
    return ts.active and _epoch(ts.start(zone)) <= _epoch(local_now)
