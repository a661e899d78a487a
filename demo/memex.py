"""The memex of ``make demo``, and the wait for its cron job.

    python demo/memex.py make DIR   # DIR/memex: a few notes and a :CRON: job due soon
    python demo/memex.py wait DIR   # until DIR/home/events.org has the job's result

The job is due at the start of a minute at least half a minute away, so that the chat
is open when it runs; it asks the cognition tier (the local model when no provider is
configured) for one sentence, and its result reaches every attached face as a notice.
(Its prompt asks for a sentence, not a reminder: "remind me to ..." would be read as a
request to schedule one, which is asked of the person like any new job.)
Everything stays under DIR: ``make demo`` points the daemon's state, memex and runtime
directory there, so the demo never touches the person's own memex or daemon.

A job runs only once the person approved its exact content; running ``make demo`` is
that approval for the demo's own job, sealed here as ``passepartout cron allow`` seals
it (``passepartout cron list`` then shows it scheduled, not held).
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from pathlib import Path

from passepartout.testing.jobapproval import approve_text

JOB_ID = "demo-plants"
WAIT = 150.0  # seconds: the job is due within 90, and the local model answers in seconds

NOTES = """#+title: Garden
* TODO Water the tomatoes
  SCHEDULED: <{today:%Y-%m-%d %a}>
* TODO Order seeds for the spring
* Notes
The basil on the balcony wants sun in the morning and shade after noon.
"""

JOB = """#+title: Demo jobs
* A reminder from the daemon
:PROPERTIES:
:ID: {job_id}
:CRON: <{when:%Y-%m-%d %a %H:%M}>
:TIER: cognition
:END:
In one short sentence, say why tomatoes are best watered in the evening.
"""


def due_time(now: dt.datetime) -> dt.datetime:
    """The next minute at least 30 s away (org times name minutes)."""
    start = (now + dt.timedelta(seconds=30)).replace(second=0, microsecond=0)
    return start + dt.timedelta(minutes=1)


def make(base: Path) -> dt.datetime:
    memex = base / "memex"
    (memex / "projects").mkdir(parents=True, exist_ok=True)
    (memex / "system").mkdir(exist_ok=True)
    now = dt.datetime.now()
    when = due_time(now)
    (memex / "projects" / "garden.org").write_text(NOTES.format(today=now), encoding="utf-8")
    jobs = memex / "projects" / "jobs.org"
    text = JOB.format(job_id=JOB_ID, when=when)
    approve_text(base / "home", memex, jobs, text)
    jobs.write_text(text, encoding="utf-8")
    return when


def ran(base: Path) -> bool:
    events = base / "home" / "events.org"
    try:
        text = events.read_text(encoding="utf-8")
    except OSError:
        return False
    return f"{JOB_ID}: done" in text or f"{JOB_ID}: failed" in text or \
        "A reminder from the daemon: " in text


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("make", "wait"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    base = Path(argv[1]).resolve()
    if argv[0] == "make":
        when = make(base)
        print(f"demo memex in {base / 'memex'}: a :CRON: job runs at {when:%H:%M}")
        return 0
    deadline = time.monotonic() + WAIT
    while not ran(base):
        if time.monotonic() > deadline:
            print(f"the demo's cron job did not run within {WAIT:g} s "
                  f"(see {base / 'home' / 'events.org'})", file=sys.stderr)
            return 1
        time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
