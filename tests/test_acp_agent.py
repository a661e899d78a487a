"""``passepartout acp`` against the real daemon and the fake model, driven by the official
ACP SDK's client side: a streamed reply with its cost, a permission asked and rejected
(nothing runs), allow always (a sealed standing grant, not asked again), a cancel
mid-stream, and a session made in the terminal listed, loaded and continued.  A resource
the client embeds or links passes the attachment boundary: a credential place is
refused, private text withheld, a declared secret masked, an oversized one refused."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import (
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    ResourceContentBlock,
    TextResourceContents,
)
from acp_peer import Peer, acp_client, prompt
from daemon_proc import Daemons, scratch_daemons
from fakellm import FakeLLM
from wire_client import PYTHON, ROOT

from passepartout.org.private import MARKER
from passepartout.security.approvals import grants as grant_file
from passepartout.security.trust.seal import Seal

BANK = "hunter2-correct-horse"  # a secret the person declared in the config's .env
FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAfake0key0body\n"


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, model: FakeLLM) -> Iterator[Daemons]:
    """One daemon environment for the module (a daemon boots in seconds); the first test
    lets ``passepartout acp`` start the daemon, the others find it running."""
    tmp = tmp_path_factory.mktemp("acp")
    for running in scratch_daemons(tmp, model.base_url):
        (tmp / "work").mkdir()
        (tmp / "config" / ".env").write_text(f"BANK_PASSWORD={BANK}\n")
        running.env.update(PASSEPARTOUT_STREAM="1", PASSEPARTOUT_WORKSPACE=str(tmp / "work"))
        yield running


@pytest.fixture
def daemons(shared: Daemons, model: FakeLLM) -> Iterator[Daemons]:
    yield shared
    assert model.pending == 0, "the test left scripted replies unused"


@pytest.fixture
def fake_llm(model: FakeLLM) -> FakeLLM:
    return model


def running(daemons: Daemons) -> None:
    if daemons.cli("status").returncode != 0:
        daemons.start()


def run(coro: object) -> None:
    asyncio.run(asyncio.wait_for(coro, 90))  # type: ignore[arg-type]


def test_a_prompt_streams_its_reply_and_reports_the_cost(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.reply("Hello from the daemon, in several words.",
                   usage={"prompt_tokens": 1200, "completion_tokens": 30,
                          "total_tokens": 1230})

    async def scenario() -> None:
        peer = Peer()
        async with acp_client(daemons, peer) as conn:  # no daemon yet: acp starts one
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            done = await conn.prompt(session_id=session, prompt=prompt("hello"))
            assert done.stop_reason == "end_turn"
            assert peer.text(session) == "Hello from the daemon, in several words."
            assert len(peer.of("agent_message_chunk", session)) > 1  # streamed
            (usage,) = await peer.wait_for("usage_update", session)  # after the answer
            assert usage.cost is not None and usage.cost.currency == "USD"
            # gpt-4o's window is 128000; this agent fills at most CONTEXT_MAX_TOKENS of it
            assert usage.used == 1200 and usage.size == 32000

    run(scenario())
    assert daemons.cli("status").returncode == 0  # the daemon outlives the client


def test_a_permission_asked_and_rejected_runs_nothing(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    target = daemons.tmp / "work" / "never.txt"
    fake_llm.tool_call("write-file", {"path": str(target), "content": "x"})
    fake_llm.reply("Not written, as you wish.")
    running(daemons)

    async def scenario() -> None:
        peer = Peer(answers=["reject-once"])
        async with acp_client(daemons, peer) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            done = await conn.prompt(session_id=session, prompt=prompt("please go ahead"))
            assert done.stop_reason == "end_turn"
            (asked, options), = peer.permissions
            assert {o.kind for o in options} == {"allow_once", "allow_always",
                                                 "reject_once", "reject_always"}
            assert "write-file" in (asked.title or "") and "never.txt" in (asked.title or "")
            (started,) = peer.of("tool_call", session)
            assert started.tool_call_id == asked.tool_call_id and started.status == "pending"
            statuses = [u.status for u in peer.of("tool_call_update", session)]
            assert "failed" in statuses and "completed" not in statuses
            assert "Not written" in peer.text(session)

    run(scenario())
    assert not target.exists()
    assert "never.txt" not in _approvals(daemons)  # a one-time no leaves no grant


def test_allow_always_becomes_a_sealed_grant_that_is_not_asked_again(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    """The grant covers the file with the text the person was shown; other text for
    the same file is asked again."""
    target = daemons.tmp / "work" / "notes.txt"
    fake_llm.tool_call("write-file", {"path": str(target), "content": "first"})
    fake_llm.reply("Written.")
    fake_llm.tool_call("write-file", {"path": str(target), "content": "first"})
    fake_llm.reply("Written again.")
    fake_llm.tool_call("write-file", {"path": str(target), "content": "second"})
    fake_llm.reply("Asked.")
    running(daemons)

    async def scenario() -> None:
        peer = Peer(answers=["allow-always", "allow-once"])
        async with acp_client(daemons, peer) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            await conn.prompt(session_id=session, prompt=prompt("please go ahead"))
            assert len(peer.permissions) == 1
            assert target.read_text() == "first"
            await conn.prompt(session_id=session, prompt=prompt("once more, please"))
            assert len(peer.permissions) == 1  # the grant answered this time
            assert "Written again." in peer.text(session)
            await conn.prompt(session_id=session, prompt=prompt("now other text"))
            assert len(peer.permissions) == 2  # other text: asked again
            assert target.read_text() == "second"

    run(scenario())
    lines = _approvals(daemons).splitlines()
    (grant,) = [g for g in grant_file.read(lines) if "notes.txt" in g.properties.get("PATH", "")]
    assert grant.properties["TOOL"] == "write-file"
    assert grant.properties["PATH"] == str(target.resolve())
    assert grant.properties["CONTENT"].startswith("sha256:")
    assert grant_file.sealed(grant, Seal.in_state(daemons.home))


def test_a_cancel_mid_stream_ends_the_turn_as_cancelled(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    words = " ".join(f"word{i}" for i in range(60))
    fake_llm.slow_stream(words, 0.1)  # six seconds if not cancelled
    fake_llm.given_up.clear()
    running(daemons)

    async def scenario() -> None:
        peer = Peer()
        async with acp_client(daemons, peer) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            turn = asyncio.ensure_future(conn.prompt(session_id=session,
                                                     prompt=prompt("talk a while")))
            await asyncio.wait_for(peer.chunk_seen.wait(), 30)
            await conn.cancel(session_id=session)
            done = await asyncio.wait_for(turn, 10)
            assert done.stop_reason == "cancelled"
            assert "word59" not in peer.text(session)

    run(scenario())
    # The daemon dropped the model's stream, which is what stops a provider generating.
    assert fake_llm.given_up.wait(30)


def test_a_terminal_session_is_listed_loaded_continued_and_resumed_back(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.reply("Hi from the terminal.")
    fake_llm.reply("And hello from the editor.")
    fake_llm.reply("Back in the terminal.")
    running(daemons)
    chat = subprocess.run([PYTHON, "-m", "passepartout", "chat", "--session", "term-s"],
                          cwd=ROOT, env=daemons.env, input="hello there\n",
                          capture_output=True, text=True, timeout=60)
    assert chat.returncode == 0, chat.stderr
    assert "Hi from the terminal." in chat.stdout

    async def scenario() -> None:
        peer = Peer()
        async with acp_client(daemons, peer) as conn:
            listed = await conn.list_sessions(cwd=str(daemons.tmp))
            found = {s.session_id: s for s in listed.sessions}
            assert "term-s" in found and found["term-s"].title == "hello there"
            await conn.load_session(cwd=str(daemons.tmp), session_id="term-s")
            assert peer.text("term-s", "user_message_chunk") == "hello there"
            assert peer.text("term-s") == "Hi from the terminal."
            peer.clear()
            await conn.prompt(session_id="term-s", prompt=prompt("and from here?"))
            assert peer.text("term-s") == "And hello from the editor."
            resumed = await conn.resume_session(cwd=str(daemons.tmp), session_id="term-s")
            assert resumed is not None

    run(scenario())
    sent = [(m["role"], m["content"]) for m in fake_llm.last_request.messages
            if m["role"] != "system"]
    assert sent[0] == ("user", "hello there")  # the terminal's turn, in the editor's
    assert sent[1] == ("assistant", "Hi from the terminal.")
    assert sent[2][0] == "user" and sent[2][1].endswith("and from here?")
    back = subprocess.run([PYTHON, "-m", "passepartout", "chat", "--session", "term-s"],
                          cwd=ROOT, env=daemons.env, input="and back?\n",
                          capture_output=True, text=True, timeout=60)
    assert "Back in the terminal." in back.stdout, back.stderr
    again = [m["content"] for m in fake_llm.last_request.messages if m["role"] == "assistant"]
    assert again[-1] == "And hello from the editor."  # the editor's turn, in the terminal's


def test_a_cron_result_reaches_the_attached_client(daemons: Daemons, fake_llm: FakeLLM) -> None:
    """Both clients show it as text in their open session (a standard update); only the
    one that advertised ``_passepartout/notice`` in its capabilities gets that too."""
    fake_llm.reply("The backups are fresh.")
    running(daemons)

    async def scenario() -> None:
        reads, plain = Peer(), Peer()
        advertised = ClientCapabilities(field_meta={"passepartout": {"notice": True}})
        async with acp_client(daemons, reads, capabilities=advertised) as conn, \
                acp_client(daemons, plain) as other:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            elsewhere = (await other.new_session(cwd=str(daemons.tmp))).session_id
            daemons.write_approved(daemons.memex / "projects" / "jobs.org",
                "* Check the backups\n:PROPERTIES:\n:ID: backups-1\n"
                f":CRON: <{dt.datetime.now():%Y-%m-%d %a %H:%M}>\n:END:\nAre they fresh?\n",
                encoding="utf-8")
            deadline = time.monotonic() + 30
            while not ("backups are fresh" in reads.text(session)
                       and "backups are fresh" in plain.text(elsewhere)):
                assert time.monotonic() < deadline, "no notice of the job's result"
                await asyncio.sleep(0.05)
            notice = next(n for n in reads.notices if "backups are fresh" in n["text"])
            assert notice["method"] == "passepartout/notice"
        assert not plain.notices
        assert not [m for m in plain.sent if str(m.get("method", "")).startswith("_")]
        assert any(m.get("method") == "_passepartout/notice" for m in reads.sent)

    run(scenario())


def final_status(peer: Peer, session: str) -> dict[str, str]:
    """Each tool call's id and its last status, in the order the calls started."""
    found: dict[str, str] = {}
    for update in [u for s, u in peer.updates if s == session]:
        if update.session_update in ("tool_call", "tool_call_update") and (
                update.status is not None):
            found[update.tool_call_id] = update.status
    return found


def test_tool_calls_keep_ids_of_their_own_and_replay_with_their_status(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    """The model names every call ``call_1``; the client sees three calls live and the
    same three on replay, the one the person rejected as failed (not completed), with
    the person's answer as it was said live."""
    work = daemons.tmp / "work"
    (work / "a.txt").write_text("alpha\n")
    (work / "b.txt").write_text("beta\n")
    target = work / "rejected.txt"
    fake_llm.tool_call("read-file", {"path": str(work / "a.txt")}, call_id="call_1")
    fake_llm.reply("It says alpha.")
    fake_llm.tool_call("read-file", {"path": str(work / "b.txt")}, call_id="call_1")
    fake_llm.reply("It says beta.")
    fake_llm.tool_call("write-file", {"path": str(target), "content": "x"}, call_id="call_1")
    fake_llm.reply("Not written, as you wish.")
    running(daemons)

    async def scenario() -> None:
        live, replayed = Peer(answers=["reject-once"]), Peer()
        async with acp_client(daemons, live) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            for text in ("read a", "read b", "write it"):
                await conn.prompt(session_id=session, prompt=prompt(text))
            shown = final_status(live, session)
            assert len(peer_calls(live, session)) == 3, shown
            assert list(shown.values()) == ["completed", "completed", "failed"], shown
        async with acp_client(daemons, replayed) as conn:
            await conn.load_session(cwd=str(daemons.tmp), session_id=session)
            again = final_status(replayed, session)
            assert len(peer_calls(replayed, session)) == 3, again
            assert list(again.values()) == ["completed", "completed", "failed"], again
            rejected = [u for u in replayed.of("tool_call_update", session)
                        if u.tool_call_id == list(again)[2] and u.content]
            assert "refused" in rejected[-1].content[0].content.text
            assert "It says beta." in replayed.text(session)
            # The person's answer comes back on the call, in the words said live.
            said = [u.content[0].content.text for u in live.of("tool_call_update", session)
                    if u.tool_call_id == list(shown)[2] and u.content]
            assert said[0] == "You rejected once."
            assert rejected[0].content[0].content.text == said[0]

    run(scenario())
    assert not target.exists()


def peer_calls(peer: Peer, session: str) -> set[str]:
    """The distinct ids of the calls the client saw start."""
    return {u.tool_call_id for u in peer.of("tool_call", session)}


def test_a_session_without_turns_loads_and_resumes(daemons: Daemons) -> None:
    """An id the agent issued is a session, though no turn has been kept yet: another
    process of the agent (the editor restarted) loads and resumes it."""
    running(daemons)

    async def scenario() -> None:
        async with acp_client(daemons, Peer()) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            await conn.load_session(cwd=str(daemons.tmp), session_id=session)
            await conn.resume_session(cwd=str(daemons.tmp), session_id=session)
        peer = Peer()
        async with acp_client(daemons, peer) as conn:
            await conn.load_session(cwd=str(daemons.tmp), session_id=session)
            await conn.resume_session(cwd=str(daemons.tmp), session_id=session)
        assert not peer.updates  # nothing to replay

    run(scenario())


def test_the_sessions_cwd_is_the_workspace_of_its_turns(
        daemons: Daemons, fake_llm: FakeLLM) -> None:
    """The spec's ``cwd`` of a session (the project the editor is in) is where its turns
    work: the shell runs there; a ``cwd`` that is not an absolute directory is refused."""
    project = daemons.tmp / "garden"
    project.mkdir(exist_ok=True)
    (project / "beds.txt").write_text("tomatoes\n")
    fake_llm.tool_call("shell", {"cmd": "pwd; ls"})
    fake_llm.reply("We work in the garden.")
    running(daemons)

    async def scenario() -> None:
        async with acp_client(daemons, Peer()) as conn:
            for bad in ("garden", str(project / "beds.txt")):
                with pytest.raises(RequestError) as refused:
                    await conn.new_session(cwd=bad)
                assert refused.value.code == RequestError.invalid_params({}).code
                assert "cwd" in str(refused.value.data), refused.value.data
            session = (await conn.new_session(cwd=str(project))).session_id
            done = await conn.prompt(session_id=session, prompt=prompt("where do we work?"))
            assert done.stop_reason == "end_turn"

    run(scenario())
    tool = "\n".join(str(m.get("content")) for m in fake_llm.last_request.body["messages"]
                     if m.get("role") == "tool")
    assert str(project) in tool and "beds.txt" in tool, tool


def test_an_unknown_session_cannot_be_loaded(daemons: Daemons) -> None:
    running(daemons)

    async def scenario() -> None:
        async with acp_client(daemons, Peer()) as conn:
            with pytest.raises(RequestError) as refused:
                await conn.load_session(cwd=str(daemons.tmp), session_id="no-such")
            assert refused.value.code == RequestError.resource_not_found("x").code

    run(scenario())


def test_an_oversized_prompt_is_refused_and_the_face_keeps_working(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    running(daemons)
    fake_llm.reply("Still here.")

    async def scenario() -> None:
        async with acp_client(daemons, Peer()) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=session, prompt=prompt("x" * (9 * 2**20)))
            assert refused.value.code == RequestError.invalid_params({}).code
            assert "at most" in str(refused.value.data)
            done = await conn.prompt(session_id=session, prompt=prompt("and now?"))
            assert done.stop_reason == "end_turn"

    run(scenario())


def _approvals(daemons: Daemons) -> str:
    for path in (daemons.memex / "system" / "approvals.org", daemons.home / "approvals.org"):
        if path.exists():
            return path.read_text()
    return ""


def test_standard_output_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with out.open("w") as handle:
        done = subprocess.run([PYTHON, "-m", "passepartout", "acp"], cwd=ROOT,
                              stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    assert done.returncode == 2 and "must be a pipe" in done.stderr
    assert "Traceback" not in done.stderr and out.read_text() == ""


def embedded(uri: str, text: str) -> EmbeddedResourceContentBlock:
    return EmbeddedResourceContentBlock(type="resource",
                                        resource=TextResourceContents(uri=uri, text=text))


def refused_turn(daemons: Daemons, fake_llm: FakeLLM, block: object) -> str:
    """The turn of ``block``'s prompt, which must be refused before any model call; the
    next prompt of the same client works.  The refusal's text."""
    running(daemons)
    before = fake_llm.request_count
    fake_llm.reply("Still here.")
    shown: list[str] = []

    async def scenario() -> None:
        peer = Peer()
        async with acp_client(daemons, peer) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            done = await conn.prompt(session_id=session,
                                     prompt=[text_block("look at this"), block])
            assert done.stop_reason == "end_turn"
            shown.append(peer.text(session))
            peer.clear()
            again = await conn.prompt(session_id=session, prompt=prompt("and now?"))
            assert again.stop_reason == "end_turn" and peer.text(session) == "Still here."

    run(scenario())
    assert fake_llm.request_count == before + 1  # the second prompt's alone
    assert "look at this" not in json.dumps(fake_llm.last_request.body)
    return shown[0]


@pytest.mark.attack
def test_an_embedded_resource_claiming_a_credential_place_is_refused(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    for uri in (f"file://{daemons.tmp}/.ssh/id_rsa", "~/.ssh/id_rsa"):
        shown = refused_turn(daemons, fake_llm, embedded(uri, FAKE_KEY))
        assert "[refused]" in shown and ".ssh" in shown, shown
        assert "fake0key0body" not in shown
        assert all("fake0key0body" not in json.dumps(r.body) for r in fake_llm.requests)


@pytest.mark.attack
def test_a_link_to_a_credential_file_is_refused(daemons: Daemons, fake_llm: FakeLLM) -> None:
    creds = daemons.tmp / ".aws" / "credentials"
    creds.parent.mkdir(exist_ok=True)
    creds.write_text("[default]\naws_secret_access_key = fakeAWSkey0123456789\n")
    link = ResourceContentBlock(type="resource_link", uri=creds.as_uri(), name="credentials")
    shown = refused_turn(daemons, fake_llm, link)
    assert "[refused]" in shown and ".aws" in shown, shown
    assert all("credentials" not in json.dumps(r.body) for r in fake_llm.requests[-1:])


@pytest.mark.attack
def test_a_resource_is_filtered_for_privacy_and_secrets(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    notes = daemons.tmp / "work" / "health.org"  # outside the memex: not indexed
    notes.write_text("#+title: Notes\n* Work\nShip the release on Friday.\n"
                     "* Health :@personal:\n** Doctor\nBlood results are fine.\n"
                     f"* Bank\nThe password is {BANK}.\n")
    region = notes.read_text()[notes.read_text().index("** Doctor"):]  # no tag line in it
    fake_llm.reply("Noted.")
    running(daemons)

    async def scenario() -> None:
        peer = Peer()
        async with acp_client(daemons, peer) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            done = await conn.prompt(session_id=session, prompt=[
                text_block("sum these up"), embedded(notes.as_uri(), region)])
            assert done.stop_reason == "end_turn" and peer.text(session) == "Noted."

    run(scenario())
    body = json.dumps(fake_llm.last_request.body)
    assert "The password is" in body and "sum these up" in body
    assert "Blood results" not in body and MARKER in body
    assert BANK not in body
    kept = (daemons.home / "sessions.sqlite").read_bytes()
    assert b"Blood results" not in kept and BANK.encode() not in kept


@pytest.mark.attack
def test_an_oversized_resource_is_a_clear_error_and_the_client_goes_on(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.reply("Still here.")
    running(daemons)
    before = fake_llm.request_count

    async def scenario() -> None:
        peer = Peer()
        async with acp_client(daemons, peer) as conn:
            session = (await conn.new_session(cwd=str(daemons.tmp))).session_id
            big = embedded(f"file://{daemons.tmp}/work/huge.log", "x" * 9_000_000)
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=session, prompt=[text_block("read"), big])
            assert refused.value.code == RequestError.invalid_params(None).code
            assert "at most" in str(refused.value.data), refused.value.data
            again = await conn.prompt(session_id=session, prompt=prompt("and now?"))
            assert again.stop_reason == "end_turn" and peer.text(session) == "Still here."

    run(scenario())
    assert fake_llm.request_count == before + 1
