"""The MCP client in the daemon, end to end: a real MCP server of mcp.json lends its
tool to the daemon's model (the fake server); a face attached over the socket is asked,
says yes, and the server's result comes back in the turn; `passepartout status` names
the server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons
from fakellm import FakeLLM
from mcp_peers import pin_peer
from test_mcp_client import live_members, silent_pids

from passepartout.faces.face import ApprovalAsked, Chunk, Done, Face, ToolEvent

PEER = str(Path(__file__).with_name("mcp_peers.py"))


@pytest.fixture
def daemons(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Daemons]:
    for running in scratch_daemons(tmp_path):
        running.env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake_llm.base_url,
                           PASSEPARTOUT_MODEL="openai/gpt-4o")
        config = Path(running.env["PASSEPARTOUT_CONFIG_DIR"])
        config.mkdir(parents=True, exist_ok=True)
        (config / "mcp.json").write_text(json.dumps(
            {"mcpServers": {"peer": {"command": sys.executable, "args": [PEER, "stdio"]}}}))
        pin_peer(Path(running.env["PASSEPARTOUT_HOME"]), "peer")
        yield running


def test_an_mcp_tool_runs_in_the_daemon_once_the_attached_face_says_yes(
        daemons: Daemons, fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("mcp__peer__add", {"a": 2, "b": 40}, call_id="c1")
    fake_llm.reply("It is 42.")
    daemons.start()
    daemons.wait_ready()
    status = daemons.cli("status")
    assert "peer" in status.stdout, status.stdout
    face = Face.attach(daemons.home, environ=daemons.env)
    assert face is not None
    with face:
        turn = face.send("mcp-s", "add 2 and 40")
        seen: list[object] = []
        for event in turn.events(timeout=60):
            seen.append(event)
            if isinstance(event, ApprovalAsked):
                assert event.tool == "mcp__peer__add"
                assert face.answer(event.approval_id, True)
    results = [e for e in seen if isinstance(e, ToolEvent) and e.event == "tool-result"]
    assert [(r.name, r.ok, r.output) for r in results] == [("mcp__peer__add", True, "42")]
    assert "".join(e.text for e in seen if isinstance(e, Chunk)) == "It is 42."
    assert isinstance(seen[-1], Done)
    assert fake_llm.requests[1].messages[-1]["content"] == "42"


@pytest.mark.attack
def test_a_server_that_never_answers_ends_with_the_daemon(daemons: Daemons,
                                                          tmp_path: Path) -> None:
    """A stdio server that never answers initialize is still being waited for when the
    daemon stops: its whole process group goes with the daemon."""
    pidfile = tmp_path / "silent.pids"
    config = Path(daemons.env["PASSEPARTOUT_CONFIG_DIR"])
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"silent": {
        "command": sys.executable, "args": [PEER, "silent", str(pidfile)]}}}))
    proc = daemons.start()
    server, helper = silent_pids(pidfile)
    assert set(live_members(server)) == {server, helper}
    stopped = daemons.cli("stop")
    assert stopped.returncode == 0, stopped
    assert proc.wait(30) == 0
    assert live_members(server) == []
