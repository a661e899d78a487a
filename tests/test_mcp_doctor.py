"""``passepartout doctor``'s MCP lines: a server that starts is ok with its tools; one
that fails or a bad entry of mcp.json is a failed check saying why and what to fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp_peers import pin_peer

from passepartout.cli.doctor import Check, _mcp_checks
from passepartout.config import Config

PEER = str(Path(__file__).with_name("mcp_peers.py"))


def config(tmp_path: Path, servers: dict[str, object] | None) -> Config:
    (tmp_path / "config").mkdir()
    if servers is not None:
        (tmp_path / "config" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        pin_peer(tmp_path / "home", *servers)
    return Config.from_mapping({"PASSEPARTOUT_HOME": str(tmp_path / "home")},
                               config_dir=tmp_path / "config")


def test_no_mcp_json_is_fine(tmp_path: Path) -> None:
    [row] = _mcp_checks(config(tmp_path, None))
    assert row[:2] == ("mcp servers", True) and "none configured" in row[2]


def test_each_server_is_started_and_reported(tmp_path: Path) -> None:
    peer = {"command": sys.executable, "args": [PEER, "stdio"]}
    rows = [Check(*r) for r in _mcp_checks(config(tmp_path, {
        "peer": peer, "broken": {**peer, "env": {"PEER_FAIL_AT_START": "1"}},
        "bad": {"command": 3}}))]
    lines = [r.line() for r in rows]
    assert rows[0].ok is False and "server 'bad': command must be a non-empty string" in lines[0]
    assert lines[1].startswith("[ok  ] mcp server peer: ready, 4 tools; withheld: helper")
    assert lines[2].startswith("[FAIL] mcp server broken: failed (")
    assert "refusing to start" in lines[2] and "fix: check that `" in lines[2]
