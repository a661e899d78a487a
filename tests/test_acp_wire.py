"""The schema check of :mod:`acp_wire` refuses what ACP's schema refuses: a usage
update without its window, a tool call without a title, a notification ACP does not
define, an answer to no request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_wire import AGENT, CLIENT, check_wire


def wire(tmp_path: Path, *lines: tuple[str, dict[str, Any]]) -> Path:
    log = tmp_path / "wire.jsonl"
    log.write_text("".join(json.dumps({"from": side, "line": json.dumps(m) + "\n"}) + "\n"
                           for side, m in lines))
    return log


def update(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return AGENT, {"jsonrpc": "2.0", "method": "session/update",
                   "params": {"sessionId": "s", "update": body}}


def test_valid_messages_pass(tmp_path: Path) -> None:
    sent = check_wire(wire(
        tmp_path,
        (CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                  "params": {"cwd": "/", "mcpServers": []}}),
        (AGENT, {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}}),
        update({"sessionUpdate": "usage_update", "used": 10, "size": 8192}),
        update({"sessionUpdate": "tool_call", "toolCallId": "t-0", "title": "shell: ls",
                "status": "failed"}),
        (AGENT, {"jsonrpc": "2.0", "method": "_passepartout/notice", "params": {"text": "x"}}),
    ))
    assert len(sent) == 4


@pytest.mark.parametrize("bad, why", [
    (update({"sessionUpdate": "usage_update", "used": 10}), "not a valid"),
    (update({"sessionUpdate": "tool_call", "toolCallId": "t-0"}), "not a valid"),
    (update({"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "rejected"}),
     "not a valid"),
    ((AGENT, {"jsonrpc": "2.0", "method": "passepartout/notice", "params": {}}),
     "no such notification"),
    ((AGENT, {"jsonrpc": "2.0", "id": 7, "result": {}}), "answers no request"),
])
def test_what_the_schema_refuses_fails(tmp_path: Path, bad: tuple[str, dict[str, Any]],
                                       why: str) -> None:
    with pytest.raises(AssertionError, match=why):
        check_wire(wire(tmp_path, bad))
