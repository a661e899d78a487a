"""What ``passepartout cron list`` and ``passepartout sessions`` show, from the state
files when no daemon runs (the running daemon answers the same from memory).

Nothing here writes: the cron state is read through a scheduler that is never saved,
and the sessions database is opened read-only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from pathlib import Path
from typing import Any

from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.llm.sessions import SESSIONS_FILE

TITLE_CHARS = 60


def _memex_nodes(config: Config) -> list[Any]:
    from passepartout.events.scan import org_files, scan_file

    roots = [config.memex_dir / d if d not in (".", "") else config.memex_dir
             for d in config.memex_scan_dirs]
    return [node for path in org_files(roots) for node in scan_file(path).nodes]


def held_jobs(config: Config, approvals: Any = None) -> list[dict[str, Any]]:
    """The CRON/HOOK headings of the memex whose content the person has not approved
    (as the EPC ``held-jobs`` method describes them), read from the files."""
    from passepartout.events.approval import JobApprovals, describe_job, job_hash
    from passepartout.events.presets import presets_path, read_presets

    approvals = approvals or JobApprovals.in_state(Path(config.home))
    memex = Path(config.memex_dir)
    presets = read_presets(presets_path(config))
    held = []
    for node in _memex_nodes(config):
        digest = job_hash(node, memex, presets)
        if approvals.approved(digest):
            continue
        why = ("denied" if approvals.denied(digest)
               else "changed" if approvals.known_id(node.id) else "new")
        held.append({"id": node.id, "heading": node.heading, "file": node.file, "why": why,
                     "what": describe_job(node, memex, why, presets=presets), "hash": digest,
                     "kind": "cron" if node.cron is not None else "hook", "node": node})
    return held


def cron_jobs(config: Config) -> list[dict[str, Any]]:
    """Every cron job of the memex the person approved, with its saved times, soonest
    first (as the EPC ``jobs`` method describes them)."""
    from passepartout.events.approval import JobApprovals, job_hash
    from passepartout.events.cron import Scheduler, make_job
    from passepartout.events.presets import presets_path, read_presets

    approvals = JobApprovals.in_state(Path(config.home))
    scheduler = Scheduler(config.home / "events" / "cron-state.json")
    problems: list[dict[str, Any]] = []
    presets = read_presets(presets_path(config))
    for node in _memex_nodes(config):
        if node.cron is None or not approvals.approved(
                job_hash(node, Path(config.memex_dir), presets)):
            continue
        try:
            scheduler.upsert(make_job(node), save=False)
        except ValueError as err:
            problems.append({"heading": node.heading, "file": node.file,
                             "problem": str(err)})
    return [job.describe() for job in scheduler.jobs()] + problems


def sessions(home: Path) -> list[dict[str, Any]]:
    """Each kept chat session: id, title (its first prompt), messages, last activity."""
    path = home / SESSIONS_FILE
    if not path.is_file():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT session, COUNT(*), MAX(ts),"
                " (SELECT message FROM messages f WHERE f.session = m.session"
                "  AND json_extract(f.message, '$.role') = 'user' ORDER BY seq LIMIT 1)"
                " FROM messages m GROUP BY session ORDER BY MAX(ts) DESC").fetchall()
    except sqlite3.Error as err:
        raise PassepartoutError(f"the chat sessions in {path} cannot be read ({err}); the "
                                "daemon sets an unreadable file aside when it starts") from None
    # A session where the person never said anything (a cancelled send, a job's) is
    # nothing to resume: it is not listed.
    return [{"id": str(r[0]), "title": _title(r[3]), "messages": int(r[1]),
             "last-activity": dt.datetime.fromtimestamp(float(r[2])).astimezone()
             .isoformat(timespec="seconds")} for r in rows if r[3] is not None]


def _title(raw: Any) -> str:
    try:
        content = json.loads(raw).get("content") if isinstance(raw, str) else None
    except (ValueError, AttributeError):
        content = None
    text = " ".join(content.split()) if isinstance(content, str) else ""
    return text if len(text) <= TITLE_CHARS else text[:TITLE_CHARS - 1] + "…"


def table(rows: list[list[str]], header: list[str]) -> str:
    """Columns padded to their widest cell (the last one left as it is)."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = []
    for row in [header, *rows]:
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=False)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
