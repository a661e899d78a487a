"""``passepartout doctor``'s lines for ``mcp.json``: each entry read, and each server
started, listed and closed again (as the agent would), with why one fails."""

from __future__ import annotations

import tempfile
from pathlib import Path

from passepartout.config import Config
from passepartout.mcp.config import load
from passepartout.mcp.hub import McpHub
from passepartout.mcp.pins import PinStore

PROBE_TIMEOUT = 20.0

CheckRow = tuple[str, bool, str, str]  # name, ok, detail, fix


def mcp_checks(config: Config, timeout: float = PROBE_TIMEOUT) -> list[CheckRow]:
    found = load(config.config_dir)
    rows: list[CheckRow] = [("mcp.json", False, error, "correct that entry of mcp.json")
                            for error in found.errors]
    if not found.servers:
        return rows or [("mcp servers", True, f"none configured ({found.path})", "")]
    with tempfile.TemporaryDirectory(prefix="passepartout-mcp-") as logs:
        # The tools offered as the agent would offer them: those the person approved.
        hub = McpHub(found.servers, log_dir=Path(logs), pins=PinStore(config.home)).start()
        try:
            settled = hub.wait_settled(timeout)
            states = list(hub.states.values())
            seen = [(s.state == "ready", s.line()) for s in states]
        finally:
            hub.stop()
    for state, (ok, line) in zip(states, seen, strict=True):
        line = line.removeprefix(f"{state.spec.name}: ")
        detail = line if settled or ok else f"{line}: no answer within {timeout:g} s"
        fix = "" if ok else (f"check that `{state.spec.where()}` starts and speaks MCP on stdio"
                             if state.spec.transport == "stdio" else
                             f"check that {state.spec.url} serves MCP and its headers")
        rows.append((f"mcp server {state.spec.name}", ok, detail, fix))
    return rows
