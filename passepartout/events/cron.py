"""Cron: which jobs are due, when they run next, and what survives a restart.

The next and last run of every job are kept in a JSON file under PASSEPARTOUT_HOME
(written atomically), keyed by the job's id and the ``:CRON:`` text it was computed
from: an unchanged timestamp picks up where it left off; an edited one starts again
from what the file now says.  A job missed while the server was down runs once on
catch-up, and its next run is the first repeat after now (``next_run_after``), so a
job many periods behind runs once, not once per period.  A job still running is not
started again.

A run is recorded as started (``started``) before it begins and as finished, with its
result, after it ends, each saved at once and atomically.  A run the agent never
finished (it was killed or crashed meanwhile) is found at the next start: the job runs
again once, at once, saying it was interrupted, and its next run stays the one the
interrupted run had set (it is not moved on twice).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passepartout.events.classify import Classifier, classify
from passepartout.events.jobs import Job, OrgNode, Tier
from passepartout.fsutil import DeferredSave
from passepartout.org.repeaters import APPROX_PERIOD_SECONDS, next_run_after
from passepartout.org.timestamps import OrgTimestamp, TimestampError, local_zone, parse_timestamp

log = logging.getLogger(__name__)

Clock = Callable[[], dt.datetime]
RETIRED_KEPT = dt.timedelta(days=30)  # how long a removed job's times are kept


def make_job(node: OrgNode, classifier: Classifier | None = None) -> Job:
    """The cron job of a node with ``:CRON:``; ValueError says what is wrong with it."""
    text = node.cron
    if text is None:
        raise ValueError("has no :CRON: property")
    try:
        timestamp = parse_timestamp(text)
    except TimestampError as err:
        raise ValueError(f":CRON: {err.reason}") from None
    tier_text = node.properties.get("TIER")
    if tier_text:
        tier = Tier.parse(tier_text)
    else:
        try:
            tier = classify(node.prompt, classifier)
        except Exception as err:
            raise ValueError(f"the tier classifier failed: {err}") from err
    reflex = node.properties.get("REFLEX") or None
    return Job(id=node.id, heading=node.heading, file=node.file, prompt=node.prompt,
               tier=tier, timestamp=timestamp, reflex=reflex)


class CronState(DeferredSave):
    """The persisted next/last run of every job: a JSON file, rewritten atomically.

    A run's times are saved at once; what a rescan changes is saved a moment later
    (``save_soon``), so an edit's rescan does not wait for the disk.
    """

    what = "cron state"

    def __init__(self, path: Path, *, delay: float = 0.5) -> None:
        super().__init__(path, delay=delay)
        self._data: dict[str, dict[str, Any]] = self._read()
        self._lock = threading.Lock()

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:
            log.error("cron state %s is unreadable (%s); starting afresh", self.path, err)
            return {}
        if not isinstance(raw, dict):
            return {}
        return {k: v for k, v in raw.items() if isinstance(v, dict)}

    def get(self, job_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._data.get(job_id)

    def put(self, job: Job) -> None:
        entry: dict[str, Any] = {
            "source": job.source,
            "current": job.current.format() if job.current is not None else None,
            "next_run": _iso(job.next_run),
            "last_run": _iso(job.last_run),
            "last_result": job.last_result,
        }
        if job.running and job.run_started is not None:
            entry["started"] = job.run_started.isoformat()
        with self._lock:
            self._data[job.id] = entry

    def retire(self, job_id: str, when: dt.datetime) -> None:
        """A job left its file: keep its times a while (it may be moving to another)."""
        with self._lock:
            entry = self._data.get(job_id)
            if entry is not None:
                entry["removed"] = when.isoformat()

    def _prune(self) -> None:
        cutoff = dt.datetime.now(dt.UTC) - RETIRED_KEPT
        for job_id, entry in list(self._data.items()):
            removed = _when(entry.get("removed"))
            if removed is not None and removed < cutoff:
                del self._data[job_id]

    def _render(self) -> str:
        with self._lock:
            self._prune()
            return json.dumps(self._data, indent=1, sort_keys=True)

    def close(self) -> None:
        """Save now; no later save will touch the file."""
        self.save()
        super().close()


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _when(text: Any) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


class Scheduler:
    """The cron jobs, their times, and the no-overlap rule; thread-safe."""

    def __init__(self, state_path: Path, *, clock: Clock | None = None,
                 tz: dt.tzinfo | None = None, max_run_seconds: float = 4 * 3600.0) -> None:
        self.tz = tz or local_zone()
        self.clock: Clock = clock or (lambda: dt.datetime.now(self.tz))
        self.state = CronState(state_path)
        self.started_at = self.clock()
        self.max_run_seconds = max_run_seconds
        self._jobs: dict[str, Job] = {}
        self._restored: set[str] = set()  # jobs whose times came from the saved state
        # Runs a stop interrupted: job id -> (when it started, the next run it had set).
        self._interrupted: dict[str, tuple[dt.datetime, dt.datetime | None]] = {}
        self._lock = threading.RLock()

    def jobs(self) -> list[Job]:
        with self._lock:
            return sorted(self._jobs.values(), key=lambda j: (j.next_run is None, _sort(j)))

    def job(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def upsert(self, job: Job, *, save: bool = True) -> Job:
        """Add or update a job, keeping its times when its timestamp did not change.

        ``save=False`` defers writing the state (a bootstrap calls :meth:`save` once).
        """
        with self._lock:
            old = self._jobs.get(job.id)
            saved = self.state.get(job.id)
            if old is not None and old.source == job.source:
                job.current, job.next_run = old.current, old.next_run
                job.last_run, job.last_result, job.running, job.run_started = (
                    old.last_run, old.last_result, old.running, old.run_started)
            elif saved is not None and saved.get("source") == job.source:
                job.current = _timestamp(saved.get("current")) or job.timestamp
                job.next_run = _when(saved.get("next_run"))
                job.last_run = _when(saved.get("last_run"))
                job.last_result = saved.get("last_result")
                self._restored.add(job.id)
                started = _when(saved.get("started"))
                if (started is not None and started < self.started_at
                        and job.id not in self._interrupted):
                    # An earlier process never finished it: run again once, now; then on
                    # as that run had set it (a run of this process is in flight still).
                    self._interrupted[job.id] = (started, job.next_run)
                    job.next_run = self.clock()
            else:
                job.current = job.timestamp
                job.next_run = job.timestamp.start(self.tz) if job.timestamp.active else None
                self._restored.discard(job.id)
                self._interrupted.pop(job.id, None)  # edited: what it now says counts
                if old is not None:
                    job.last_run, job.last_result = old.last_run, old.last_result
                    job.running, job.run_started = old.running, old.run_started
            self._jobs[job.id] = job
            self.state.put(job)
            if save:
                self.state.save_soon()
            return job

    def save(self) -> None:
        with self._lock:
            self.state.save()

    def close(self) -> None:
        with self._lock:
            self.state.close()

    def remove(self, job_id: str) -> Job | None:
        with self._lock:
            job = self._jobs.pop(job_id, None)
            self.state.retire(job_id, self.clock())
            self.state.save_soon()
            return job

    def due(self, now: dt.datetime | None = None) -> list[Job]:
        """Jobs whose next run has come and that are not still running."""
        moment = now or self.clock()
        with self._lock:
            due = []
            for job in self._jobs.values():
                if job.next_run is None or job.next_run.timestamp() > moment.timestamp():
                    continue
                if job.running and not self._stale(job, moment):
                    log.debug("cron %s is still running: not started again", job.id)
                    continue
                due.append(job)
            return sorted(due, key=_sort)

    def _stale(self, job: Job, now: dt.datetime) -> bool:
        started = job.run_started
        if started is None or (now - started).total_seconds() < self.max_run_seconds:
            return False
        log.warning("cron %s has been running since %s: assuming it is lost", job.id, started)
        return True

    def start_run(self, job: Job, now: dt.datetime | None = None) -> str:
        """Mark a due job running and move its next run on; returns a line for the log."""
        moment = now or self.clock()
        with self._lock:
            was_due = job.next_run
            current = job.current or job.timestamp
            interrupted = self._interrupted.pop(job.id, None)
            if interrupted is not None:  # its schedule moved on when it first started
                moved = None
                job.next_run = interrupted[1]
            else:
                moved = next_run_after(current, moment, self.tz) if current.repeats else None
                job.current = moved or current
                job.next_run = moved.start(self.tz) if moved is not None else None
            job.last_run = moment
            job.running = True
            job.run_started = moment
            self.state.put(job)
            self.state.save()
        nxt = job.next_run.isoformat(timespec="minutes") if job.next_run else "never (one-shot)"
        if interrupted is not None:
            return (f"{job.heading!r} was interrupted: its run of "
                    f"{interrupted[0]:%Y-%m-%d %H:%M} never finished (the agent stopped); "
                    f"running it again once now; next run {nxt}")
        if was_due is not None and was_due < self.started_at and job.id in self._restored:
            return (f"catch-up: {job.heading!r} was due at {was_due:%Y-%m-%d %H:%M} while the "
                    f"server was down; running it once now; next run {nxt}")
        if was_due is not None and job.next_run is not None and moved is not None \
                and _periods_behind(current, was_due, moment):
            return (f"{job.heading!r} was overdue since {was_due:%Y-%m-%d %H:%M}; running it "
                    f"once; next run {nxt}")
        return f"running {job.heading!r} ({job.tier}); next run {nxt}"

    def finish(self, job_id: str, result: str | None) -> None:
        """A run ended (its result, or None)."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return
            job.running = False
            job.run_started = None
            if result is not None:
                job.last_result = result[:2000]
            self.state.put(job)
            self.state.save()


def _periods_behind(current: OrgTimestamp, was_due: dt.datetime, now: dt.datetime) -> bool:
    """More than one period late: the run stands for several missed ones."""
    assert current.repeater is not None
    interval = current.repeater.interval
    period = interval.value * APPROX_PERIOD_SECONDS[interval.unit]
    return (now - was_due).total_seconds() >= period


def _timestamp(text: Any) -> OrgTimestamp | None:
    if not isinstance(text, str):
        return None
    try:
        return parse_timestamp(text)
    except TimestampError:
        return None


def _sort(job: Job) -> tuple[float, str]:
    return (job.next_run.timestamp() if job.next_run else float("inf"), job.id)
