"""Chat turns over the wire: the real server with a scripted model, a raw client.

Streaming (chunks, then exactly one done), a reply that was not streamed, cancel,
errors, tool events, and approvals: yes, no, timeout, and a closed connection.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from agents import wait_for
from wire_client import ServerProcess, WireClient, start_server

from passepartout.signals import Keyword, Symbol
from passepartout.testing.skilltrust import trust_skills

HERE = Path(__file__).parent
CHUNK, DONE = "chunk", "done"
ERROR, TOOL = "error", "tool"
APPROVAL, NOTIFY = "approval", "notify"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("chat")
    trust_skills(tmp / "home", HERE / "wire_skills")  # as the person would
    # The scripted skill answers every prompt; the intent reader would read some first
    # ("env: PASSEPARTOUT_TOKEN" is refused as a request for a secret).
    srv = start_server(tmp, script=str(HERE / "wire_scripted_server.py"),
                       SKILLS_DIR=str(HERE / "wire_skills"), PASSEPARTOUT_INTENTS="off")
    yield srv
    assert srv.stop() == 0, srv.log()
    assert "Traceback" not in srv.log()


@pytest.fixture
def client(server: ServerProcess) -> Iterator[WireClient]:
    c = server.client()
    yield c
    c.close()


def _plist(value: list) -> dict:
    return {str(k): v for k, v in zip(value[::2], value[1::2], strict=True)}


def _of_turn(client: WireClient, turn: str) -> list:
    return [c for c in client.callbacks if len(c[1]) > 1 and c[1][1] == turn]


def _turn(name: str) -> str:
    return f"{name}-{time.monotonic_ns()}"


def test_a_streamed_turn_sends_chunks_then_one_done(client: WireClient) -> None:
    turn = _turn("stream")
    assert client.ok("chat-send", "s-stream", turn, "stream: one two three",
                     [Keyword("heading"), "id-1", Keyword("file"), "/tmp/x.org"]) == turn
    texts = [client.wait_callback(CHUNK, a1=turn)[2] for _ in range(3)]
    assert texts == ["one ", "two ", "three "]
    assert client.wait_callback(DONE, a1=turn) == ["s-stream", turn,
                                                   [Keyword("cancelled"), None]]
    time.sleep(0.2)
    client.ok("ping")  # drains anything else that was sent: no repeat of the whole reply
    assert _of_turn(client, turn) == []


def test_a_reply_that_was_not_streamed_comes_as_one_chunk(client: WireClient) -> None:
    turn = _turn("reply")
    client.ok("chat-send", "s-reply", turn, "reply: héllo 日本", None)
    assert client.wait_callback(CHUNK, a1=turn)[2] == "héllo 日本"
    client.wait_callback(DONE, a1=turn)


def test_cancel_ends_the_turn(client: WireClient) -> None:
    turn = _turn("wait")
    client.ok("chat-send", "s-cancel", turn, "wait", None)
    assert client.wait_callback(CHUNK, a1=turn)[2] == "waiting"
    assert client.ok("chat-cancel", "s-cancel", turn) is True
    assert client.wait_callback(DONE, a1=turn)[2] == [Keyword("cancelled"), True]


def test_an_error_is_reported_then_done(client: WireClient) -> None:
    turn = _turn("fail")
    client.ok("chat-send", "s-fail", turn, "fail", None)
    _, _, kind, message = client.wait_callback(ERROR, a1=turn)
    assert kind == "config-error" and "PASSEPARTOUT_MODEL" in message
    client.wait_callback(DONE, a1=turn)


def _ask(client: WireClient, session: str) -> tuple[str, list]:
    turn = _turn("tool")
    client.ok("chat-send", session, turn, "tool", None)
    approval = client.wait_callback(APPROVAL, a2=turn)
    return turn, approval


def test_approval_yes_runs_the_tool(client: WireClient) -> None:
    turn, (approval_id, session, _, description, info) = _ask(client, "s-yes")
    assert session == "s-yes" and "wire-touch" in description
    info = _plist(info)
    assert info["kind"] == Symbol("wire-touch") and _plist(info["args"]) == {"label": "x"}
    assert len(info["digest"]) == 64 and info["reasons"]
    assert client.ok("approval-answer", approval_id, True) is True
    call = _plist(client.wait_callback(TOOL, a1=turn)[2])
    assert (call["event"], call["name"], call["call-id"]) == ("tool", "wire-touch", "c1")
    result = _plist(client.wait_callback(TOOL, a1=turn)[2])
    assert (result["event"], result["ok"], result["output"]) == ("tool-result", True,
                                                                 "touched x")
    assert client.wait_callback(CHUNK, a1=turn)[2] == "tool ok=True: touched x"
    client.wait_callback(DONE, a1=turn)
    kind, err = client.request("approval-answer", approval_id, True)  # twice: too late
    assert (kind, err[0]) == ("return-error", "expired")


@pytest.mark.parametrize("answer", [None, "yes", 1, [Keyword("value"), "no ok key"]])
def test_anything_but_t_is_no(client: WireClient, answer: object) -> None:
    turn, (approval_id, *_rest) = _ask(client, "s-no")
    assert client.ok("approval-answer", approval_id, answer) is True
    denied = _plist(client.wait_callback(TOOL, a1=turn)[2])
    assert denied["event"] == "denied" and "wire-touch" in denied["name"]
    assert client.wait_callback(CHUNK, a1=turn)[2].startswith("refused: ")
    client.wait_callback(DONE, a1=turn)


def test_an_evaluation_result_plist_is_a_yes(client: WireClient) -> None:
    turn, (approval_id, *_rest) = _ask(client, "s-plist")
    client.ok("approval-answer", approval_id, [Keyword("ok"), True, Keyword("value"), "2"])
    assert _plist(client.wait_callback(TOOL, a1=turn)[2])["event"] == "tool"
    client.wait_callback(DONE, a1=turn)


def test_no_answer_in_time_is_a_denial(server: ServerProcess) -> None:
    client = WireClient(server.port)
    assert client.hello(server.token, [Keyword("approval-timeout"), 0.5])[0] == "return"
    turn, (approval_id, *_rest) = _ask(client, "s-timeout")
    level, text = client.wait_callback(NOTIFY, timeout=5)
    assert level == "warning" and "denied" in text
    assert _plist(client.wait_callback(TOOL, a1=turn)[2])["event"] == "denied"
    client.wait_callback(DONE, a1=turn)
    kind, err = client.request("approval-answer", approval_id, True)
    assert (kind, err[0]) == ("return-error", "expired")
    client.close()


def test_a_closed_connection_denies_its_pending_approvals(server: ServerProcess) -> None:
    asker = server.client()
    _ask(asker, "s-closed")
    watcher = server.client()
    assert _plist(watcher.ok("status"))["pending-approvals"] == 1
    asker.close()
    deadline = time.monotonic() + 5  # far below the 60 s approval timeout
    while _plist(watcher.ok("status"))["pending-approvals"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _plist(watcher.ok("status"))["pending-approvals"] == 0
    wait_for(lambda: "approval of wire-touch(label='x'): denied" in server.log(), 10,
             "the denial in the log")
    # The session now belongs to whoever speaks in it next.
    turn = _turn("again")
    watcher.ok("chat-send", "s-closed", turn, "reply: back", None)
    assert watcher.wait_callback(CHUNK, a1=turn)[2] == "back"
    watcher.close()


def test_a_session_follows_the_connection_of_its_last_prompt(server: ServerProcess) -> None:
    first, second = server.client(), server.client()
    turn1, turn2 = _turn("one"), _turn("two")
    first.ok("chat-send", "s-moved", turn1, "reply: to first", None)
    assert first.wait_callback(CHUNK, a1=turn1)[2] == "to first"
    first.wait_callback(DONE, a1=turn1)
    second.ok("chat-send", "s-moved", turn2, "reply: to second", None)
    assert second.wait_callback(CHUNK, a1=turn2)[2] == "to second"
    second.wait_callback(DONE, a1=turn2)
    first.ok("ping")
    assert _of_turn(first, turn2) == []
    first.close()
    second.close()


def test_sessions_run_side_by_side(client: WireClient) -> None:
    waiting, quick = _turn("wait"), _turn("quick")
    client.ok("chat-send", "s-lane-a", waiting, "wait", None)
    client.wait_callback(CHUNK, a1=waiting)
    client.ok("chat-send", "s-lane-b", quick, "reply: not held up", None)
    assert client.wait_callback(CHUNK, a1=quick)[2] == "not held up"
    client.ok("chat-cancel", "s-lane-a", waiting)
    client.wait_callback(DONE, a1=waiting)


def test_the_token_is_not_left_in_the_environment(client: WireClient) -> None:
    """Tools' subprocesses inherit os.environ: the token must be gone from it."""
    turn = _turn("env")
    client.ok("chat-send", "s-env", turn, "env: PASSEPARTOUT_TOKEN", None)
    assert client.wait_callback(CHUNK, a1=turn)[2] == "env: None"


@pytest.mark.parametrize("answer,ok,output", [
    ([Keyword("ok"), True, Keyword("value"), "2"], True, "2"),
    ([Keyword("ok"), None, Keyword("value"), "void-function foo"], False,
     "Emacs signalled an error: void-function foo"),
    (True, False, "Emacs did not evaluate this code"),
])
def test_emacs_eval_takes_its_result_from_the_approval(
    client: WireClient, answer: object, ok: bool, output: str
) -> None:
    turn = _turn("elisp")
    client.ok("chat-send", "s-elisp", turn, "elisp: (+ 1 1)", None)
    approval_id, _, _, _, info = client.wait_callback(APPROVAL, a2=turn)
    info = _plist(info)
    assert (info["kind"], info["code"]) == (Symbol("emacs-eval"), "(+ 1 1)")
    client.ok("approval-answer", approval_id, answer)
    assert _plist(client.wait_callback(TOOL, a1=turn)[2])["event"] == "tool"
    result = _plist(client.wait_callback(TOOL, a1=turn)[2])
    assert result["event"] == "tool-result" and bool(result["ok"]) is ok
    assert result["output"].startswith(output)
    client.wait_callback(DONE, a1=turn)
