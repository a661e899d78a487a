"""``passepartout cron list``: every ``:CRON:`` job (heading, file, tier, next run,
last result); from the running daemon, else from the memex and the saved cron state."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from passepartout.config import Config
from passepartout.daemon.views import cron_jobs, table
from passepartout.daemonclient import DaemonError, as_dict, connect

log = logging.getLogger(__name__)

RESULT_CHARS = 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "the cron jobs of the memex"
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("list", help="each job: heading, file, tier, next run, last result")


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    client = connect(config.home)
    if client is None:
        jobs: list[dict[str, Any]] = cron_jobs(config)
        where = "from the state files (no daemon runs)"
    else:
        with client:
            jobs = [as_dict(j) for j in client.call("jobs") or []]
            try:  # the headings not scheduled, as the state files' reading lists them
                jobs += [as_dict(p) for p in client.call("job-problems") or []]
            except DaemonError as err:  # a daemon of an older version
                log.info("job problems not listed: %s", err.message)
        where = "from the running daemon"
    if not jobs:
        print(f"no cron jobs ({where}); a heading with a :CRON: property makes one")
        return 0
    rows = []
    for job in jobs:
        if "problem" in job:
            rows.append([str(job["heading"]), str(job["file"]), "-", "not scheduled",
                         f"problem: {job['problem']}"])
            continue
        nxt = str(job.get("next-run") or "never")
        if job.get("running"):
            nxt += " (running)"
        rows.append([str(job.get("heading")), str(job.get("file")), str(job.get("tier")),
                     nxt, _result(job.get("last-result"), job.get("last-run"))])
    print(table(rows, ["HEADING", "FILE", "TIER", "NEXT RUN", "LAST RESULT"]))
    print(f"({len(jobs)} job{'s' if len(jobs) != 1 else ''}, {where})")
    return 0


def _result(result: Any, when: Any) -> str:
    if not when:
        return "never ran"
    text = " ".join(str(result or "").split())
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS - 1] + "…"
    return f"{when}: {text}" if text else str(when)
