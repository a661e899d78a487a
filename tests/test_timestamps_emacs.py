"""next_after_done against real org-mode: org-todo in emacs --batch under libfaketime.

One Emacs process answers every case: the script rewrites libfaketime's
timestamp file (re-read on each clock call) and switches the time zone
between cases. Needs Debian's emacs-nox and faketime: the test fails, not
skips, when they are missing.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from passepartout.org.repeaters import next_after_done
from passepartout.org.timestamps import TimestampError, parse_timestamp

ORACLE = Path(__file__).parent / "emacs" / "org_repeat_oracle.el"
LIBFAKETIME_GLOBS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


@dataclass(frozen=True)
class Case:
    zone: str
    now: str  # local wall-clock "YYYY-MM-DD HH:MM", or "...+fold" for a repeated hour
    timestamp: str

    def aware_now(self) -> dt.datetime:
        text, _, fold = self.now.partition("+")
        naive = dt.datetime.strptime(text, "%Y-%m-%d %H:%M")
        return naive.replace(tzinfo=ZoneInfo(self.zone), fold=1 if fold else 0)


P, NY, UTC = "Europe/Paris", "America/New_York", "UTC"
NOON = "2026-05-10 12:00"  # a Sunday
CASES = [
    # the three kinds, behind and ahead
    Case(P, NOON, "<2026-05-01 Fri 09:00 +1d>"),
    Case(P, NOON, "<2026-05-01 Fri 09:00 ++1d>"),
    Case(P, NOON, "<2026-05-01 Fri 09:00 .+1d>"),
    Case(P, NOON, "<2026-05-10 Sun 18:00 ++1d>"),
    Case(P, NOON, "<2026-05-15 Fri 09:00 ++1d>"),
    Case(P, NOON, "<2026-05-15 Fri .+2d>"),
    Case(P, NOON, "<2026-05-10 Sun 09:00 ++1d -2d>"),
    # ++ with a time of day later than now: org 9.5 and 9.6+ differ here
    Case(P, NOON, "<2026-05-08 Fri 18:00 ++1d>"),
    # hours
    Case(P, NOON, "<2026-05-10 Sun 09:00 +3h>"),
    Case(P, NOON, "<2026-05-10 Sun 09:00 ++3h>"),
    Case(P, NOON, "<2026-05-08 Fri 18:00 .+2h>"),
    Case(P, NOON, "<2026-05-10 Sun 11:59 .+1h>"),
    Case(UTC, NOON, "<2026-05-10 Sun 12:00 ++1h>"),
    # months and years, org's day overflow
    Case(P, NOON, "<2026-01-31 Sat +1m>"),
    Case(P, NOON, "<2026-01-31 Sat ++1m>"),
    Case(P, NOON, "<2026-01-31 Sat .+1m>"),
    Case(P, NOON, "<2024-02-29 Thu +1y>"),
    Case(P, NOON, "<2024-02-29 Thu ++1y>"),
    Case(P, NOON, "<2025-12-31 Wed 23:30 +1m>"),
    Case(UTC, NOON, "<2000-01-01 Sat +1y>"),
    # weeks, warnings, habits, ranges
    Case(P, NOON, "<2026-05-02 Sat +1w -3d>"),
    Case(P, NOON, "<2026-04-01 Wed ++2w --2d>"),
    Case(P, NOON, "<2026-05-02 Sat 10:00-11:30 +1w>"),
    Case(P, NOON, "<2026-05-02 Sat 10:00-11:30 ++1d>"),
    Case(P, NOON, "<2026-05-09 Sat .+1d/3d>"),
    Case(P, NOON, "<2026-04-20 Mon ++1w/2w>"),
    Case(P, NOON, "<2026-05-01 Fri +1w>--<2026-05-03 Sun +1w>"),
    # far behind: org asks whether to go on past ten shifts
    Case(P, NOON, "<2025-05-10 Sat ++1d>"),
    # daylight saving, Paris: 2026-03-29 02:00 -> 03:00, 2026-10-25 03:00 -> 02:00
    Case(P, "2026-03-30 08:00", "<2026-03-28 Sat 09:00 +1d>"),
    Case(P, "2026-03-30 08:00", "<2026-03-27 Fri 09:00 ++1d>"),
    Case(P, "2026-03-29 12:00", "<2026-03-28 Sat 02:30 +1d>"),
    Case(P, "2026-03-29 12:00", "<2026-03-28 Sat 10:00 .+1h>"),
    Case(P, "2026-10-25 12:00", "<2026-10-24 Sat 10:00 .+1h>"),
    Case(P, "2026-10-26 12:00", "<2026-10-20 Tue 09:00 ++1d>"),
    # New York: 2026-03-08 02:00 -> 03:00, 2026-11-01 02:00 -> 01:00
    Case(NY, "2026-03-09 12:00", "<2026-03-07 Sat 02:30 +1d>"),
    Case(NY, "2026-03-09 12:00", "<2026-03-06 Fri 02:30 ++1d>"),
    Case(NY, "2026-03-08 12:00", "<2026-03-08 Sun 01:30 +1h>"),
    Case(NY, "2026-11-01 01:00+fold", "<2026-11-01 Sun 00:30 ++1h>"),
    Case(NY, "2026-11-02 12:00", "<2026-10-31 Sat 01:30 +1d>"),
    # other zones: no DST, southern DST, a DST change at midnight
    Case("Asia/Tokyo", NOON, "<2026-05-09 Sat 23:00 ++1d>"),
    Case("Australia/Sydney", "2026-10-05 12:00", "<2026-10-03 Sat 02:30 +1d>"),
    Case("America/Santiago", "2026-09-07 12:00", "<2026-09-05 Sat 00:15 +1d>"),
    Case("America/Santiago", "2026-09-07 12:00", "<2026-09-05 Sat ++1d>"),
    # no repeat: org leaves the task DONE / refuses
    Case(P, NOON, "<2026-05-01 Fri +0d>"),
    Case(P, NOON, "<2026-05-01 Fri +2h>"),
]


def _libfaketime() -> str:
    for pattern in LIBFAKETIME_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    pytest.fail("libfaketime not found: install Debian's faketime package")


def _run_oracle(tmp_path: Path) -> tuple[str, list[str]]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    epochs = [str(int(case.aware_now().timestamp())) for case in CASES]
    cases_file = tmp_path / "cases.tsv"
    cases_file.write_text(
        "".join(f"{c.zone}\t{e}\t{c.timestamp}\n" for c, e in zip(CASES, epochs, strict=True)),
        encoding="utf-8",
    )
    clock = tmp_path / "clock"
    clock.write_text(epochs[0] + "\n", encoding="utf-8")
    env = dict(os.environ)
    env.update(
        LD_PRELOAD=_libfaketime(),
        FAKETIME_TIMESTAMP_FILE=str(clock),
        FAKETIME_NO_CACHE="1",
        FAKETIME_FMT="%s",
        HOME=str(tmp_path),
    )
    proc = subprocess.run(
        [emacs, "--batch", "-Q", "-l", str(ORACLE), str(cases_file)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines and lines[0].startswith("ORG\t"), proc.stderr[-2000:]
    return lines[0].split("\t")[1], lines[1:]


def _org_before_9_6(version: str) -> bool:
    major, minor = (int(x) for x in re.findall(r"\d+", version)[:2])
    return (major, minor) < (9, 6)


@pytest.mark.emacs
def test_next_after_done_matches_org_mode(tmp_path: Path) -> None:
    assert len(CASES) >= 30
    version, answers = _run_oracle(tmp_path)
    legacy = _org_before_9_6(version)
    assert len(answers) == len(CASES)
    mismatches = []
    asked = 0
    for case, answer in zip(CASES, answers, strict=True):
        status, _, rest = answer.partition("\t")
        ts = parse_timestamp(case.timestamp)
        try:
            ours = next_after_done(
                ts, case.aware_now(), ZoneInfo(case.zone), legacy_catch_up=legacy
            ).format()
        except TimestampError as err:
            ours = f"error: {err.reason}"
        if status == "OK":
            theirs, _, questions = rest.partition("\t")
            asked += int(questions)
            assert parse_timestamp(theirs).format() == theirs  # org's text round-trips
        else:
            theirs = "error"
        if theirs != ours and not (theirs == "error" and ours.startswith("error")):
            mismatches.append(f"{case}: org {theirs!r}, ours {ours!r}")
    assert not mismatches, f"org {version}:\n" + "\n".join(mismatches)
    # the far-behind ++ case went through org's "Continue?" question
    assert asked >= 1
