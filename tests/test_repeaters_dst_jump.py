"""A repeat many periods behind across daylight-saving changes: the quick jump lands
where org's shift period by period lands (a step into a spring-forward gap comes back
after the gap and keeps that hour), against org-mode itself and against stepping."""

from __future__ import annotations

import dataclasses
import datetime as dt
import glob
import os
import random
import shutil
import subprocess
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from passepartout.org.repeaters import _shift, next_after_done, next_run_after
from passepartout.org.timestamps import OrgTimestamp, Unit, localize, parse_timestamp

ORACLE = Path(__file__).parent / "emacs" / "org_repeat_oracle.el"
NY = "America/New_York"
# 10,048 periods of 3 hours behind, over four spring-forward gaps at 02:30
FAR = ("2026-05-10 12:00", "<2022-12-01 Thu 02:30 ++3h>")


def _stepped(ts: OrgTimestamp, now: dt.datetime, tz: ZoneInfo, by_date: bool) -> str:
    """Org's own loop: shift one period at a time until past now (past today for a
    ``++`` repeat by days)."""
    assert ts.repeater is not None and ts.time is not None
    n, unit = ts.repeater.interval.value, ts.repeater.interval.unit
    wall = _shift(ts.wall, n, unit, tz, True)
    while (wall.date() <= now.date() if by_date
           else localize(wall, tz).timestamp() <= now.timestamp()):
        wall = _shift(wall, n, unit, tz, True)
    return dataclasses.replace(ts, date=wall.date(), time=wall.time()).format()


@pytest.mark.parametrize("seed", range(3))
def test_the_jump_lands_where_stepping_lands(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(6):
        zone = ZoneInfo(rng.choice([NY, "Europe/Paris", "Australia/Sydney", "UTC"]))
        n = rng.choice([1, 2, 3, 5, 7])
        unit = rng.choice([Unit.HOUR, Unit.HOUR, Unit.DAY])
        span = dt.timedelta(hours=n * rng.randint(10_050, 14_000)) if unit is Unit.HOUR else \
            dt.timedelta(days=n * rng.randint(10_050, 11_000))
        now = dt.datetime(2026, 5, 10, 12, 0, tzinfo=zone)
        start = (now - span).replace(minute=rng.choice([0, 30]), tzinfo=None)
        start = start.replace(hour=rng.choice([1, 2, 3, start.hour]))
        text = f"<{start:%Y-%m-%d} {start:%a} {start:%H:%M} ++{n}{unit.value}>"
        ts = parse_timestamp(text)
        by_date = unit is Unit.DAY
        assert next_after_done(ts, now, zone).format() == _stepped(ts, now, zone, by_date), text
        plus = parse_timestamp(text.replace("++", "+"))
        ran = next_run_after(plus, now, zone)
        assert ran is not None and ran.format() == _stepped(plus, now, zone, False), text


def _libfaketime() -> str:
    for pattern in ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    pytest.fail("libfaketime not found: install Debian's faketime package")


@pytest.mark.emacs
def test_far_behind_hour_repeater_across_dst_gaps_matches_org(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    zone = ZoneInfo(NY)
    now = dt.datetime.strptime(FAR[0], "%Y-%m-%d %H:%M").replace(tzinfo=zone)
    epoch = str(int(now.timestamp()))
    (tmp_path / "cases.tsv").write_text(f"{NY}\t{epoch}\t{FAR[1]}\n", encoding="utf-8")
    (tmp_path / "clock").write_text(epoch + "\n", encoding="utf-8")
    env = dict(os.environ, LD_PRELOAD=_libfaketime(), FAKETIME_NO_CACHE="1", FAKETIME_FMT="%s",
               FAKETIME_TIMESTAMP_FILE=str(tmp_path / "clock"), HOME=str(tmp_path))
    proc = subprocess.run([emacs, "--batch", "-Q", "-l", str(ORACLE), str(tmp_path / "cases.tsv")],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == 2, proc.stderr[-2000:]
    status, theirs, _asked = lines[1].split("\t")
    assert status == "OK"
    ours = next_after_done(parse_timestamp(FAR[1]), now, zone).format()
    assert ours == theirs == "<2026-05-10 Sun 12:30 ++3h>"
