"""``passepartout mcp``: the memex served to other agents, tested with the SDK's own
client against the real daemon.  A search, a read or the agenda never returns anything
of an @personal subtree; every read is in audit.org with the client's name; a write is
pending (a Flight Plan) until the person approves it, then applied, after a memory
snapshot; over HTTP a request without the token gets nothing."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_proc import Daemons, scratch_daemons, wait_for
from mcp_peers import pin_peer
from wire_client import ROOT

PEER = str(Path(__file__).with_name("mcp_peers.py"))
CANARY = "zebra7731 kumquat"
TODAY = dt.date.today()
STAMP = f"<{TODAY:%Y-%m-%d %a}>"
NOTES = f"""#+TITLE: Notes
* Kumquat jam recipe
Boil the kumquat with sugar.
* TODO Buy kumquat
SCHEDULED: {STAMP}
* Diary :@personal:
** My kumquat secret
{CANARY}
** TODO Secret errand
SCHEDULED: {STAMP}
"""


@pytest.fixture(scope="module")
def daemons(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemons]:
    tmp = tmp_path_factory.mktemp("mcp-face")
    for running in scratch_daemons(tmp):
        (running.memex / "notes.org").write_text(NOTES)
        peer = {"command": sys.executable, "args": [PEER, "stdio"]}
        (running.tmp / "config" / "mcp.json").write_text(json.dumps({"mcpServers": {
            "peer": peer, "broken": {**peer, "env": {"PEER_FAIL_AT_START": "1"}}}}))
        pin_peer(running.home, "peer")
        running.start()
        running.wait_ready()
        yield running


def call(daemons: Daemons, *calls: tuple[str, dict[str, Any]],
         name: str = "test-agent") -> list[tuple[bool, str]]:
    """Each tool call over stdio to ``passepartout mcp``: (is_error, text)."""
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    params = StdioServerParameters(command=sys.executable, args=["-m", "passepartout", "mcp"],
                                   env=daemons.env, cwd=str(ROOT))

    async def run() -> list[tuple[bool, str]]:
        out = []
        async with Client(params, client_info=Implementation(name=name, version="1")) as c:
            for tool, args in calls:
                result = await c.call_tool(tool, args)
                out.append((bool(result.is_error),
                            "\n".join(getattr(b, "text", "") for b in result.content)))
        return out

    return asyncio.run(asyncio.wait_for(run(), 60))


def test_the_tools_it_offers(daemons: Daemons) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "passepartout", "mcp"],
                                   env=daemons.env, cwd=str(ROOT))

    async def names() -> list[str]:
        async with Client(params) as c:
            return sorted(t.name for t in (await c.list_tools()).tools)

    assert asyncio.run(names()) == ["agenda", "capture", "read", "schedule", "search",
                                    "set_todo"]


@pytest.mark.attack
def test_reads_never_return_a_private_subtree(daemons: Daemons) -> None:
    search, outline, private, agenda = call(
        daemons, ("search", {"query": "kumquat"}), ("read", {"target": "notes.org"}),
        ("read", {"target": "notes.org::Diary/My kumquat secret"}),
        ("agenda", {"day": "today"}))
    assert not search[0] and "Kumquat jam recipe" in search[1]
    assert outline == (False, "notes.org\n* Kumquat jam recipe\n* TODO Buy kumquat")
    assert private[0] is True and "no heading at 'Diary'" in private[1]
    assert not agenda[0] and "Buy kumquat" in agenda[1]
    everything = "\n".join(text for _, text in (search, outline, agenda))
    for word in ("zebra7731", "secret", "Secret errand", "Diary"):
        assert word not in everything
    assert "zebra7731" not in private[1]


def test_every_read_is_audited_with_the_clients_name(daemons: Daemons) -> None:
    call(daemons, ("search", {"query": "jam"}), name="audited-client")
    audit = (daemons.home / "audit.org").read_text()
    entry = r"\* ALLOW memex-search\(query='jam'.*\n(.*\n)*?:REASON: read by audited-client\n"
    assert re.search(entry, audit), audit[-2000:]
    assert ":SESSION: mcp:audited-client" in audit


def test_bad_requests_are_clear_errors(daemons: Daemons) -> None:
    outside, empty, todo = call(
        daemons, ("read", {"target": "../config/.env"}), ("search", {"query": "  "}),
        ("set_todo", {"file": "nope.org", "heading": "X", "state": "DONE"}))
    assert outside == (True, "Error executing tool read: ../config/.env: not a file of the memex")
    assert empty == (True, "Error executing tool search: search needs a query")
    assert todo[0] is True and "nope.org" in todo[1] and "pending" not in todo[1]


def test_a_write_is_pending_until_approved_then_applied(daemons: Daemons) -> None:
    inbox = daemons.memex / "inbox.org"
    [(error, text)] = call(daemons, ("capture", {"title": "Call the kumquat farmer",
                                                 "body": "about the jam"}))
    assert not error and text.startswith("pending: org-capture"), text
    plan = re.search(r"Flight Plan (fp-[0-9a-f-]+)", text)
    assert plan is not None
    assert not inbox.exists() or "kumquat farmer" not in inbox.read_text()
    approvals = daemons.memex / "system" / "approvals.org"
    lines = approvals.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if f":ID: {plan.group(1)}" in line)
    head = max(i for i in range(at) if lines[i].startswith("* "))
    lines[head] = lines[head].replace("* TODO ", "* APPROVED ", 1)
    approvals.write_text("".join(lines))
    wait_for(lambda: inbox.exists() and "Call the kumquat farmer" in inbox.read_text(), 20,
             "the approved capture")
    snapshots = daemons.cli("memory", "snapshots").stdout
    assert "before org-capture from MCP" in snapshots, snapshots
    audit = (daemons.home / "audit.org").read_text()
    assert "waiting for approval" in audit and "mcp:test-agent" in audit


def _serve_http(daemons: Daemons, token_file: Path, *extra: str) -> tuple[Any, str]:
    proc = subprocess.Popen([sys.executable, "-m", "passepartout", "mcp", "--http",
                             "--token-file", str(token_file), *extra], cwd=ROOT,
                            env=daemons.env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().split()[0]


def _search_over_http(url: str, token: str) -> str:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def search() -> str:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with Client(streamable_http_client(url, http_client=http)) as c:
            result = await c.call_tool("search", {"query": "jam"})
            return "\n".join(getattr(b, "text", "") for b in result.content)

    return asyncio.run(asyncio.wait_for(search(), 60))


def test_http_needs_the_token(daemons: Daemons, tmp_path: Path) -> None:
    import httpx2

    token_file = tmp_path / "mcp.token"
    proc, url = _serve_http(daemons, token_file)
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        # At once, as a client does: the address is printed once connections are taken.
        refused = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert token_file.stat().st_mode & 0o777 == 0o600
        token = token_file.read_text().strip()
        assert "Kumquat jam recipe" in _search_over_http(url, token)
    finally:
        proc.terminate()
        proc.wait(10)
    # A configured client keeps working after a restart: the same token.
    proc, url = _serve_http(daemons, token_file)
    try:
        assert token_file.read_text().strip() == token
        assert "Kumquat jam recipe" in _search_over_http(url, token)
    finally:
        proc.terminate()
        proc.wait(10)
    # Replaced only when asked: the old token is refused from then on.
    proc, url = _serve_http(daemons, token_file, "--new-token")
    try:
        assert token_file.read_text().strip() != token
        old = httpx2.post(url, headers={"Authorization": f"Bearer {token}"},
                          json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert old.status_code == 401
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.attack
def test_a_token_file_that_is_not_ours_is_refused(daemons: Daemons, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("x" * 40 + "\n")
    (tmp_path / "mcp.token").symlink_to(target)
    done = subprocess.run([sys.executable, "-m", "passepartout", "mcp", "--http",
                           "--token-file", str(tmp_path / "mcp.token")], cwd=ROOT,
                          env=daemons.env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "symlink" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_prompt_is_a_plain_error(daemons: Daemons) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(command=sys.executable, args=["-m", "passepartout", "mcp"],
                                   env=daemons.env, cwd=str(ROOT))

    async def ask(log: Any) -> str:
        async with Client(stdio_client(params, errlog=log)) as c:
            with pytest.raises(MCPError) as caught:
                await c.get_prompt("nope", {})
            return caught.value.message

    with open(daemons.tmp / "mcp-stderr.log", "w+") as log:
        message = asyncio.run(asyncio.wait_for(ask(log), 60))
        log.seek(0)
        printed = log.read()
    assert "unknown prompt 'nope'" in message
    assert "Traceback" not in printed and "ValueError" not in printed


def test_status_has_a_line_for_each_mcp_server(daemons: Daemons) -> None:
    def lines() -> str | None:
        out = daemons.cli("status").stdout
        return out if "mcp        peer: ready" in out and "broken: failed" in out else None

    out = str(wait_for(lines, 20, "the MCP servers' status"))
    assert "mcp        peer: ready, 4 tools; withheld: helper (its description holds" in out
    assert "mcp        broken: failed (" in out and "refusing to start" in out
    assert "health     degraded (" in out  # the agent runs on, and says what is wrong


def test_a_write_is_asked_of_an_attached_face_and_applied_on_yes(daemons: Daemons) -> None:
    import threading

    from passepartout.server.peer import ON_APPROVAL
    from passepartout.wire.client import DaemonClient
    from passepartout.wire.place import Place

    info = Place.find(daemons.home, daemons.env).read_info()
    assert info is not None
    token = (daemons.home / "daemon.token").read_text().strip()
    inbox = daemons.memex / "inbox.org"
    replies: list[list[tuple[bool, str]]] = []
    with DaemonClient(Path(str(info["socket"])), token,
                      client={"client": "test-face", "backlog": True}) as face:
        asking = threading.Thread(target=lambda: replies.append(call(
            daemons, ("capture", {"title": "Ask me first"}), name="face-test")))
        asking.start()
        approval_id, _session, _turn, shown, *_ = face.wait_callback(ON_APPROVAL, 60)
        applied_before = inbox.exists() and "Ask me first" in inbox.read_text()
        face.call("approval-answer", approval_id, True)
        asking.join(60)
    assert "asked by face-test over MCP" in shown and not applied_before
    [(error, text)] = replies[0]
    assert not error and "Ask me first" in inbox.read_text(), text


@pytest.fixture(scope="module")
def inside(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemons]:
    """A daemon whose state directory lies inside the memex (its approvals file too, in
    the memex's system folder as by default)."""
    tmp = tmp_path_factory.mktemp("mcp-inside")
    for running in scratch_daemons(tmp):
        running.env["PASSEPARTOUT_HOME"] = str(running.memex / "state")
        running.home.mkdir()
        (running.memex / "notes.org").write_text(NOTES)
        (running.home / "kept.org").write_text(
            f"* TODO Zanzibar ledger of the agent\nSCHEDULED: {STAMP}\nkept\n")
        (running.memex / "approvals-link.org").symlink_to(running.home / "kept.org")
        (running.tmp / "outside.org").write_text("* TODO Elsewhere\n")
        running.start()
        running.wait_ready()
        yield running


@pytest.mark.attack
def test_the_agents_state_is_not_served_though_it_lies_in_the_memex(inside: Daemons) -> None:
    approvals = inside.memex / "system" / "approvals.org"
    if not approvals.exists():
        approvals.write_text("* Approvals\n")
    assert (inside.home / "sessions.sqlite").exists()
    targets = ["system/approvals.org", "state/sessions.sqlite", "state/kept.org",
               str(inside.home / "kept.org"), "approvals-link.org",
               "state/kept.org::Zanzibar ledger of the agent"]
    found = call(inside, *(("read", {"target": t}) for t in targets),
                 ("search", {"query": "Zanzibar ledger"}), ("agenda", {"day": "today"}))
    for target, (error, text) in zip(targets, found, strict=False):
        assert error and "refused" in text and "the agent's" in text, (target, text)
    search, agenda = found[-2:]
    assert "Zanzibar" not in search[1], search
    assert not agenda[0] and "Buy kumquat" in agenda[1] and "Zanzibar" not in agenda[1]


@pytest.mark.attack
def test_set_todo_resolves_in_the_memex_and_nowhere_else(inside: Daemons) -> None:
    relative, outside, ours = call(
        inside, ("set_todo", {"file": "notes.org", "heading": "Buy kumquat", "state": "DONE"}),
        ("set_todo", {"file": str(inside.tmp / "outside.org"), "heading": "Elsewhere",
                      "state": "DONE"}),
        ("set_todo", {"file": "state/kept.org", "heading": "Zanzibar ledger of the agent",
                      "state": "DONE"}))
    assert not relative[0] and relative[1].startswith("pending: org-set-todo"), relative
    assert str(inside.memex / "notes.org") in relative[1]
    assert outside[0] and "not a file of the memex" in outside[1], outside
    assert ours[0] and "refused" in ours[1] and "the agent's state" in ours[1], ours
    plans = (inside.memex / "system" / "approvals.org").read_text()
    assert "outside.org" not in plans and "kept.org" not in plans
