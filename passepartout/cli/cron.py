"""``passepartout cron list|allow|deny``: the ``:CRON:`` jobs of the memex, and the
person's answer about the jobs and hooks that wait for it.

``list`` shows every scheduled job (heading, file, tier, next run, last result) and,
beside them, every ``:CRON:`` or ``:HOOK:`` heading that is held because the person has
not approved its content (new, changed, or denied).  ``allow ID`` (or ``all``) shows
what runs and, after a yes typed on a terminal, approves exactly that content;
``deny ID`` keeps a heading from running until it changes.  With the daemon running
they go through it (it runs an allowed job at once); without, the sealed record in
the state directory is written here, as ``passepartout grant`` does.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from passepartout import protocol
from passepartout.config import Config
from passepartout.errors import ConfigError, DaemonError
from passepartout.text import one_line
from passepartout.views import cron_jobs, held_jobs, table
from passepartout.wire.client import DaemonClient, connect

log = logging.getLogger(__name__)

RESULT_CHARS = 60
WHAT_CHARS = 400


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "the cron jobs of the memex, and the jobs held for your approval"
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("list", help="each job: id, heading, file, tier, next run, last result; "
                                "and the jobs and hooks held for your approval")
    allow = sub.add_parser("allow", help="approve a held job or hook as it is now "
                                         "(asks for a yes on the terminal)")
    allow.add_argument("id", metavar="ID|all", help="the ID `cron list` shows, or all")
    deny = sub.add_parser("deny", help="keep a job or hook from running until it changes")
    deny.add_argument("id", metavar="ID", help="the ID `cron list` shows")


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    if args.action == "allow":
        return _allow(config, args.id)
    if args.action == "deny":
        return _deny(config, args.id)
    return _list(config)


def _list(config: Config) -> int:
    client = connect(config.home)
    if client is None:
        jobs: list[dict[str, Any]] = cron_jobs(config)
        held = held_jobs(config)
        where = "from the state files (no daemon runs)"
    else:
        with client:
            jobs = client.request(protocol.Jobs())
            try:  # the headings not scheduled, as the state files' reading lists them
                jobs.extend(client.request(protocol.JobProblems()))
            except DaemonError as err:  # a daemon of an older version
                log.info("job problems not listed: %s", err.message)
            held = _daemon_held(client)
        where = "from the running daemon"
    if not jobs and not held:
        print(f"no cron jobs ({where}); a heading with a :CRON: property makes one")
        return 0
    rows = []
    for job in jobs:
        if "problem" in job:
            rows.append(["-", str(job["heading"]), str(job["file"]), "-", "not scheduled",
                         f"problem: {job['problem']}"])
            continue
        nxt = str(job.get("next-run") or "never")
        if job.get("running"):
            nxt += " (running)"
        rows.append([str(job.get("id")), str(job.get("heading")), str(job.get("file")),
                     str(job.get("tier")), nxt,
                     _result(job.get("last-result"), job.get("last-run"))])
    for item in held:
        state = "denied" if item.get("why") == "denied" else f"held ({item.get('why')})"
        rows.append([str(item.get("id")), str(item.get("heading")), str(item.get("file")),
                     str(item.get("kind")), state,
                     one_line(item.get("what", ""), WHAT_CHARS, shown=True)])
    print(table(rows, ["ID", "HEADING", "FILE", "TIER", "NEXT RUN", "LAST RESULT"]))
    waiting = sum(1 for h in held if h.get("why") != "denied")
    print(f"({len(jobs)} job{'s' if len(jobs) != 1 else ''}, {len(held)} held, {where})")
    if waiting:
        print("held: not run until you approve it: passepartout cron allow ID")
    return 0


def _daemon_held(client: DaemonClient) -> list[dict[str, Any]]:
    try:
        return client.request(protocol.HeldJobs())
    except DaemonError as err:  # a daemon of an older version
        log.info("held jobs not listed: %s", err.message)
        return []


def _pick(held: list[dict[str, Any]], wanted: str, *, every: bool) -> list[dict[str, Any]]:
    if every and wanted == "all":
        return [h for h in held if h.get("why") != "denied"]
    found = [h for h in held if h.get("id") == wanted]
    if not found:
        known = ", ".join(str(h.get("id")) for h in held) or "none"
        raise ConfigError(f"no held job or hook has the id {wanted!r} (held: {known}); "
                          "`passepartout cron list` shows them")
    return found


def _allow(config: Config, wanted: str) -> int:
    from passepartout.security.trust.cli import confirm

    client = connect(config.home)
    held = held_jobs(config) if client is None else _daemon_held(client)
    try:
        chosen = _pick(held, wanted, every=True)
        if not chosen:
            print("nothing is held for your approval")
            return 0
        print("It runs what these headings say, from now on:")
        for item in chosen:
            print(f"  {item.get('id')}: {one_line(item.get('what', ''), 2000, shown=True)}")
        if not confirm(f"Allow {'it' if len(chosen) == 1 else f'these {len(chosen)}'}?"):
            print("not allowed; held as before")
            return 1
        for item in chosen:
            if client is not None:
                try:
                    client.request(protocol.JobAllow(str(item["id"]), str(item["hash"])))
                except DaemonError as err:
                    raise ConfigError(f"{item['id']}: {err.message}") from None
            else:
                _record(config, item, allowed=True)
            print(f"allowed: {item['id']}")
    finally:
        if client is not None:
            client.close()
    return 0


def _deny(config: Config, wanted: str) -> int:
    client = connect(config.home)
    if client is not None:
        with client:
            try:
                done = client.request(protocol.JobDeny(wanted))
            except DaemonError as err:
                raise ConfigError(err.message) from None
        print(f"denied: {done.get('id')}: it does not run until it changes")
        return 0
    from passepartout.events.approval import describe_job, job_hash

    found = [item for item in held_jobs(config) if item["id"] == wanted]
    if not found:  # an approved heading may be denied too
        from passepartout.events.presets import presets_path, read_presets
        from passepartout.views import _memex_nodes

        memex = Path(config.memex_dir)
        presets = read_presets(presets_path(config))
        found = [{"id": n.id, "node": n, "hash": job_hash(n, memex, presets),
                  "what": describe_job(n, memex, "denied", presets=presets)}
                 for n in _memex_nodes(config) if n.id == wanted]
    if not found:
        raise ConfigError(f"no job or hook heading has the id {wanted!r}; "
                          "`passepartout cron list` shows them")
    _record(config, found[0], allowed=False)
    print(f"denied: {wanted}: it does not run until it changes")
    return 0


def _record(config: Config, item: dict[str, Any], *, allowed: bool) -> None:
    from passepartout.events.approval import JobApprovals

    JobApprovals.in_state(Path(config.home)).record(
        str(item["hash"]), item["node"], Path(config.memex_dir), allowed=allowed)


def _result(result: Any, when: Any) -> str:
    if not when:
        return "never ran"
    text = " ".join(str(result or "").split())
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS - 1] + "…"
    return f"{when}: {text}" if text else str(when)
