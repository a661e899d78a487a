"""The MCP client: real MCP servers (tests/mcp_peers.py, written with the SDK) on stdio
and on streamable HTTP at 127.0.0.1 lend their tools to an agent whose model is the fake
server.  Every call passes the gates (asked by default, granted per server or tool);
descriptions that speak to the model withhold their tool; results pass the same masks
as every tool's; a server that fails or dies is a status line, never a crash."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import wait_for
from fakellm import FakeLLM
from llm_agent import Recorder, make_agent, make_config, user_signal
from mcp_peers import pin_peer

from passepartout.agent import Agent
from passepartout.mcp.config import load
from passepartout.mcp.hub import McpHub
from passepartout.security.policy import rule_from_mapping

pytest_plugins = ["llm_agent"]

PEER = str(Path(__file__).with_name("mcp_peers.py"))
SECRET = "Xq7-supersecret-value-9931"
CANARY = "CANARY zebra 7731 my secret diary line"


def servers(tmp_path: Path, entries: dict[str, Any]) -> None:
    """``mcp.json`` with ``entries``; the peer's own tools approved under each name."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    (config / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    pin_peer(tmp_path / "home", *entries)


def stdio(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [PEER, "stdio"], **extra}


def ready(agent: Agent, timeout: float = 20.0) -> Any:
    service = agent.services["mcp"]
    assert service.hub.wait_settled(timeout), service.lines()
    return service


def start(tmp_path: Path, recorder: Recorder | None = None) -> tuple[Agent, Recorder]:
    agent, rec = make_agent(make_config(tmp_path), recorder)
    ready(agent)
    return agent, rec


def sent(fake: FakeLLM) -> str:
    return "\n".join(json.dumps(r.body) for r in fake.requests)


@pytest.fixture
def http_peer() -> Iterator[str]:
    proc = subprocess.Popen([sys.executable, PEER, "http", "--token", "tok-123"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        port = proc.stdout.readline().strip()
        assert port.isdigit(), port
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait(10)


def test_a_stdio_tool_is_offered_asked_and_called(provider_env: FakeLLM,
                                                   tmp_path: Path) -> None:
    servers(tmp_path, {"peer": stdio()})
    agent, rec = start(tmp_path)
    try:
        provider_env.tool_call("mcp__peer__add", {"a": 2, "b": 40}, call_id="c1")
        provider_env.reply("It is 42.")
        agent.loop.process(user_signal("add 2 and 40"))
        # refused by the person: the call never reaches the server (die would end it)
        rec.answer = False
        provider_env.tool_call("mcp__peer__die", {}, call_id="c2")
        provider_env.reply("Not allowed.")
        agent.loop.process(user_signal("stop the server"))
        still = agent.services["mcp"].hub.states["peer"].state
        # arguments the server's schema refuses never leave
        rec.answer = True
        provider_env.tool_call("mcp__peer__add", {"a": "two", "b": 1}, call_id="c3")
        provider_env.reply("sorry")
        agent.loop.process(user_signal("add"))
    finally:
        agent.shutdown()
    assert [r.action.name for r in rec.asked] == ["mcp__peer__add", "mcp__peer__die",
                                                  "mcp__peer__add"]
    results = rec.of("tool-result")
    assert results[0] == {"name": "mcp__peer__add", "ok": True, "output": "42", "call_id": "c1"}
    assert still == "ready" and [r["call_id"] for r in results] == ["c1", "c3"]
    assert results[1]["ok"] is False
    assert "bad arguments for mcp__peer__add: a:" in results[1]["output"]
    offered = {t["function"]["name"]: t["function"]
               for t in provider_env.requests[0].body["tools"]}
    assert offered["mcp__peer__add"]["description"] == "[MCP server peer] Add two numbers."
    assert offered["mcp__peer__add"]["parameters"]["required"] == ["a", "b"]
    assert provider_env.requests[1].messages[-1]["content"] == "42"


def test_a_grant_per_tool_or_per_server_lets_it_run_unasked(provider_env: FakeLLM,
                                                             tmp_path: Path) -> None:
    servers(tmp_path, {"peer": stdio()})
    agent, rec = start(tmp_path)
    try:
        book = agent.services["security"].book
        for pattern in ("mcp__peer__add", "mcp__peer__*"):
            book.add_grant(rule_from_mapping({"decision": "allow", "tool": pattern}, "test"),
                           f"the peer's {pattern}")
            provider_env.tool_call("mcp__peer__add", {"a": 1, "b": 1}, call_id="c1")
            provider_env.tool_call("mcp__peer__echo", {"text": "hi"}, call_id="c2")
            provider_env.reply("done")
            agent.loop.process(user_signal("add"))
    finally:
        agent.shutdown()
    # the tool's grant covers add, not echo; the server's covers both
    assert [r.action.name for r in rec.asked] == ["mcp__peer__echo"]
    assert [r["ok"] for r in rec.of("tool-result")] == [True] * 4


def test_streamable_http_with_a_token(provider_env: FakeLLM, tmp_path: Path,
                                      http_peer: str) -> None:
    servers(tmp_path, {"web": {"url": http_peer, "headers": {"Authorization": "Bearer tok-123"}},
                       "nokey": {"url": http_peer}})
    agent, rec = start(tmp_path)
    try:
        provider_env.tool_call("mcp__web__add", {"a": 20, "b": 3}, call_id="c1")
        provider_env.reply("23")
        agent.loop.process(user_signal("add"))
        lines = agent.services["mcp"].lines()
    finally:
        agent.shutdown()
    assert rec.of("tool-result")[0]["output"] == "23"
    assert lines[0].startswith("web: ready, 4 tools")
    assert lines[1].startswith("nokey: failed (")  # 401 without the token


@pytest.mark.attack
def test_a_poisoned_description_withholds_its_tool(provider_env: FakeLLM,
                                                   tmp_path: Path) -> None:
    servers(tmp_path, {"peer": stdio()})
    agent, _ = start(tmp_path)
    try:
        names = [t.name for t in agent.tools()]
        status = agent.status()
        line = agent.services["mcp"].lines()[0]
        provider_env.reply("hello")
        agent.loop.process(user_signal("hi"))
    finally:
        agent.shutdown()
    assert "mcp__peer__add" in names and "mcp__peer__helper" not in names
    assert "id_rsa" not in sent(provider_env) and "do not tell" not in sent(provider_env)
    assert "withheld: helper (its description holds" in line
    assert status["health"] == "healthy"


@pytest.mark.attack
def test_results_pass_the_secret_mask_and_the_privacy_filter(
        provider_env: FakeLLM, tmp_path: Path) -> None:
    servers(tmp_path, {"peer": stdio()})
    (tmp_path / "config" / ".env").write_text(f"API_TOKEN={SECRET}\n")
    (tmp_path / "memex").mkdir(exist_ok=True)
    (tmp_path / "memex" / "diary.org").write_text(f"* Public\nhello\n* Diary :@personal:\n"
                                                  f"{CANARY}\n")
    agent, _ = start(tmp_path, Recorder(answer=True))
    try:
        provider_env.tool_call("mcp__peer__echo", {"text": f"a {SECRET} b"}, call_id="c1")
        provider_env.tool_call("mcp__peer__echo", {"text": f"x {CANARY} y"}, call_id="c2")
        provider_env.reply("done")
        agent.loop.process(user_signal("echo"))
    finally:
        agent.shutdown()
    later = "\n".join(json.dumps(r.body) for r in provider_env.requests[1:])
    assert SECRET not in later and "zebra 7731" not in later
    assert "x [private: withheld] y" in later or "[private: withheld]" in later


def test_a_server_that_fails_or_dies_is_a_status_line_and_is_started_again(
        provider_env: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("passepartout.mcp.hub.RETRY_FIRST", 2.0)
    servers(tmp_path, {"peer": stdio(), "broken": stdio(env={"PEER_FAIL_AT_START": "1"}),
                       "missing": {"command": str(tmp_path / "no-such-program")}})
    agent, rec = start(tmp_path, Recorder(answer=True))
    hub = agent.services["mcp"].hub
    try:
        health = agent.check_health()
        provider_env.tool_call("mcp__peer__die", {}, call_id="c1")
        provider_env.reply("It stopped.")
        agent.loop.process(user_signal("stop it"))
        deadline = time.monotonic() + 10
        while hub.states["peer"].state == "ready":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        after = agent.check_health()
        names = [t.name for t in agent.tools()]
        provider_env.reply("still here")
        agent.loop.process(user_signal("are you there?"))
        # Started again after the wait, its tools back on the belt.
        deadline = time.monotonic() + 20
        while hub.states["peer"].state != "ready":
            assert time.monotonic() < deadline, hub.lines()
            time.sleep(0.05)
        again = [t.name for t in agent.tools()]
        # Between two tries (a try in progress when the agent stops is ended with it).
        deadline = time.monotonic() + 30
        while (broken := hub.states["broken"]).retry_in is None:
            assert time.monotonic() < deadline, hub.lines()
            time.sleep(0.05)
        retried = (broken.state, broken.retry_in)
    finally:
        agent.shutdown()
    assert health.status == "degraded"
    assert any("broken: failed" in p and "refusing to start" in p for p in health.problems)
    assert any(p.startswith("mcp: missing: failed") for p in health.problems)
    assert rec.of("tool-result")[0]["ok"] is False
    assert any(p.startswith("mcp: peer: died") and "next try in 2 s" in p
               for p in after.problems)
    assert not any(n.startswith("mcp__peer__") for n in names)
    assert rec.of("reply")[-1]["text"] == "still here"
    assert "mcp__peer__die" in again and hub.states["peer"].starts == 2
    assert retried[0] == "failed" and retried[1] is not None  # tried again later


@pytest.mark.parametrize(("text", "error"), [
    ("{", "not JSON"),
    ('{"servers": {}}', 'needs an object "mcpServers"'),
    ('{"mcpServers": {"a": {"command": "x", "colour": 1}}}', "unknown key 'colour'"),
    ('{"mcpServers": {"a": {"url": "ftp://x"}}}', "url must be an http"),
    ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', "args must be a list"),
    ('{"mcpServers": {"a b": {"command": "x"}}}', "a server's name"),
    ('{"mcpServers": {"a": {"type": "sse", "url": "http://x"}}}', "'sse' is not supported"),
])
def test_a_bad_mcp_json_is_a_clear_error(tmp_path: Path, text: str, error: str) -> None:
    (tmp_path / "mcp.json").write_text(text)
    found = load(tmp_path)
    assert not found.servers and len(found.errors) == 1 and error in found.errors[0]


def test_mcp_json_reads_both_transports(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {
        "a": {"command": "uvx", "args": ["x"], "env": {"K": "v"}},
        "b": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}},
        "c": {"command": "off", "disabled": True}}}))
    found = load(tmp_path)
    assert [(s.name, s.transport) for s in found.servers] == [("a", "stdio"), ("b", "http")]
    assert found.servers[0].env == {"K": "v"} and not found.errors
    assert load(tmp_path / "nowhere").servers == ()


def live_members(pgid: int) -> list[int]:
    """The processes of a process group that have not exited (zombies do not count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def silent_pids(pidfile: Path) -> tuple[int, int]:
    deadline = time.monotonic() + 30
    while not pidfile.exists():
        assert time.monotonic() < deadline, "the silent server did not start"
        time.sleep(0.05)
    server, helper = (int(p) for p in pidfile.read_text().split())
    return server, helper


@pytest.mark.attack
def test_a_server_that_never_answers_initialize_is_killed_with_its_group(
        tmp_path: Path) -> None:
    """The wait runs from the spawn, so on a busy machine the server's interpreter may
    not even have started (no group to look at) when a short one ends: then the same
    is tried with a longer wait."""
    for attempt, wait in enumerate((1.0, 5.0, 25.0)):
        place = tmp_path / f"try-{attempt}"
        place.mkdir()
        pidfile = place / "silent.pids"
        servers(place, {"silent": {"command": sys.executable,
                                   "args": [PEER, "silent", str(pidfile)]}})
        started = time.monotonic()
        hub = McpHub(load(place / "config").servers, connect_timeout=wait,
                     retry_first=300).start()
        try:
            wait_for(lambda p=pidfile, h=hub: p.exists() or h.states["silent"].state
                     != "starting", wait + 60, "the silent server's start, or the hub's end")
            if not pidfile.exists():
                continue  # killed before its interpreter got going
            server, helper = (int(p) for p in pidfile.read_text().split())
            members = set(live_members(server))
            if time.monotonic() - started >= wait:
                continue  # the hub may have been killing the group as it was looked at
            assert members == {server, helper}
            assert hub.wait_settled(30), hub.lines()
            line = hub.lines()[0]
            assert line.startswith(
                f"silent: failed (no answer to initialize within {wait:g} s"), line
            assert "process group was killed" in line
            assert live_members(server) == []
            return
        finally:
            hub.stop()
    pytest.fail("the silent server never started within the longest wait")


@pytest.mark.attack
def test_stopping_the_hub_ends_a_server_still_waited_for(tmp_path: Path) -> None:
    pidfile = tmp_path / "silent.pids"
    servers(tmp_path, {"silent": {"command": sys.executable,
                                  "args": [PEER, "silent", str(pidfile)]}})
    hub = McpHub(load(tmp_path / "config").servers).start()
    try:
        server, helper = silent_pids(pidfile)
        assert set(live_members(server)) == {server, helper}
        assert hub.states["silent"].state == "starting"
    finally:
        hub.stop()
    assert live_members(server) == []
    hub.start()  # a hub stopped stays stopped: nothing is started again
    assert not hub._thread.is_alive() and hub.states["silent"].state != "ready"


def test_the_wait_before_a_new_start_grows_while_a_server_keeps_failing(
        tmp_path: Path) -> None:
    servers(tmp_path, {"missing": {"command": str(tmp_path / "no-such-program")}})
    hub = McpHub(load(tmp_path / "config").servers, retry_first=0.05).start()
    try:
        assert hub.wait_settled(10)
        deadline = time.monotonic() + 10
        seen: set[float] = set()
        while max(seen, default=0.0) < 0.4:
            assert time.monotonic() < deadline, seen
            if (wait := hub.states["missing"].retry_in) is not None:
                seen.add(wait)
            time.sleep(0.005)
        assert {0.1, 0.2, 0.4} <= seen and "next try in" in hub.lines()[0]
    finally:
        hub.stop()
