"""``passepartout status``: whether the daemon runs, and what it is doing.

Exit status 0 when it runs, 3 when none runs (as ``systemctl status`` says it).
"""

from __future__ import annotations

import argparse
from typing import Any

from passepartout import protocol
from passepartout.config import Config
from passepartout.errors import DaemonError
from passepartout.server.daemon import uptime
from passepartout.wire.client import DaemonClient, connect
from passepartout.wire.place import Place

NOT_RUNNING = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "say whether the daemon runs: pid, socket, uptime, model, " \
                         "sessions, clients, the next cron job"


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    place = Place.find(config.home)
    info = place.read_info()
    client = connect(config.home, timeout=10.0) if info is not None else None
    if info is None or client is None:
        if place.held():  # it runs, but says where only once it can answer
            print(f"passepartout daemon: still starting (not ready yet; socket {place.socket})")
        else:
            print(f"passepartout daemon: not running (its socket would be {place.socket})")
        return NOT_RUNNING
    with client:
        status = client.request(protocol.Status())
        jobs = client.request(protocol.Jobs()) if status.get("ready") else []
        try:
            kept: int | str = len(client.request(protocol.Sessions()))
        except DaemonError as err:  # the rest of the status still stands
            kept = f"unreadable ({err.message})"
        mcp = _mcp_lines(client) if status.get("ready") else []
    print(describe(info, status, jobs, kept, mcp=mcp))
    return 0


def _mcp_lines(client: DaemonClient) -> list[str]:
    """Each MCP server of mcp.json: ready (its tools), failed or died (why)."""
    try:
        return client.request(protocol.McpServers())
    except DaemonError as err:  # a daemon of an older version, or without the mcp skill
        return [f"unknown ({err.message})"]


def describe(info: dict[str, Any], status: dict[str, Any], jobs: list[dict[str, Any]],
             kept: int | str, *, mcp: list[str] | None = None) -> str:
    """The status lines, one fact each."""
    health = str(status.get("health", "?"))
    problems = status.get("problems") or []
    if problems:
        health += " (" + "; ".join(str(p) for p in problems) + ")"
    nxt = next((j for j in jobs if j.get("next-run")), None)
    open_sessions = status.get("sessions") or []
    rows = [
        ("pid", str(info.get("pid"))),
        ("socket", str(info.get("socket"))),
        ("tcp", f"127.0.0.1:{info.get('port')} (token in {info.get('token-file')})"),
        ("uptime", _duration(uptime(info))),
        ("model", str(status.get("model") or info.get("model") or "none configured")
         + (f" ({status['provider']})" if status.get("provider") else "")),
        ("health", health if status.get("ready") else f"{health}, still starting"),
        ("sessions", f"{kept} kept, {len(open_sessions)} attached" if isinstance(kept, int)
         else f"{kept}; {len(open_sessions)} attached"),
        # This command is one of the connections; it is not counted.
        ("clients", str(max(0, int(status.get("connections") or 0) - 1))),
        ("next cron", f"{nxt.get('heading')!r} at {nxt.get('next-run')} ({nxt.get('file')})"
         if nxt else "none scheduled"),
    ]
    rows += [("mcp", line) for line in mcp or []]
    return "passepartout daemon: running\n" + "\n".join(f"  {k:<10} {v}" for k, v in rows)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d {hours}h {minutes:02d}m"
    if hours:
        return f"{hours}h {minutes:02d}m"
    return f"{minutes}m {secs:02d}s"
