"""The real ``python -m passepartout.server.serve`` process, driven over a raw socket.

One server for the module: every attack runs on a fresh connection, and afterwards a
fresh connection still works, the long-lived one opened first still answers, and the
state set at the start (a session, the focus) is still there.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from wire_client import ServerProcess, WireClient, start_server

from passepartout.signals import Keyword, Symbol
from passepartout.wire.frames import frame


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("wire"))
    yield srv
    assert srv.stop() == 0, srv.log()
    assert "Traceback" not in srv.log()


@pytest.fixture(scope="module")
def keeper(server: ServerProcess) -> Iterator[WireClient]:
    """A connection opened before every attack, with a session and a focus set."""
    client = server.client()
    assert client.ok("chat-send", "kept", "turn-0", "/help", None) == "turn-0"
    # The first turn waits until the agent is ready (the model layer loads meanwhile).
    help_text = client.wait_callback("chunk", timeout=120, a1="turn-0")[2]
    assert "/status" in help_text  # the reflexes skill answered, without a model
    assert client.wait_callback("done", a1="turn-0")[2] == [
        Keyword("cancelled"), None]
    assert client.ok("focus", [Keyword("file"), "/tmp/a.org", Keyword("heading"), "Kept"])
    yield client
    client.close()


def _plist(value: list) -> dict:
    return {str(k): v for k, v in zip(value[::2], value[1::2], strict=True)}


def _still_serving(server: ServerProcess, keeper: WireClient) -> None:
    fresh = server.client()
    status = _plist(fresh.ok("status"))
    assert "kept" in status["sessions"]
    assert fresh.ok("ping") == Symbol("pong")
    fresh.close()
    assert keeper.ok("ping") == "pong"
    assert server.proc.poll() is None


def test_the_right_token_says_hello(server: ServerProcess, keeper: WireClient) -> None:
    client = WireClient(server.port)
    kind, info = client.hello(server.token, [Keyword("approval-timeout"), 5,
                                             Keyword("emacs-version"), "28.2"])
    assert kind == "return"
    info = _plist(info)
    assert info["version"] and info["health"] in ("booting", "healthy", "degraded")
    assert Path(info["session-dir"]).is_dir()
    assert client.ok("echo", "hé") == "hé"
    client.close()


def test_a_wrong_token_is_refused_and_the_connection_closed(
    server: ServerProcess, keeper: WireClient
) -> None:
    client = WireClient(server.port)
    kind, err = client.hello("not-the-token")
    assert (kind, err[0]) == ("return-error", "unauthorized")
    assert client.is_closed()
    _still_serving(server, keeper)


def test_calls_before_hello_are_refused_and_nothing_runs(
    server: ServerProcess, keeper: WireClient
) -> None:
    client = WireClient(server.port)
    for method, args in [("status", []), ("chat-send", ["intruder", "t", "hi", None]),
                         ("focus", [[Keyword("heading"), "Intruder"]]), ("no-such", [])]:
        kind, err = client.request(method, *args)
        assert (kind, err[0]) == ("return-error", "unauthorized"), method
    assert client.request("hello", server.token)[0] == "return"  # still open: hello works
    status = _plist(client.ok("status"))
    assert "intruder" not in status["sessions"]
    client.close()


def test_an_unauthenticated_connection_cannot_send_a_big_frame(
    server: ServerProcess, keeper: WireClient
) -> None:
    client = WireClient(server.port)
    client.send_raw(b"%06x" % (200 * 1024))
    assert client.is_closed()
    _still_serving(server, keeper)


@pytest.mark.parametrize("raw", [b"zzzzzz(call 1 ping nil)", b" 0x010(call 1 ping nil)",
                                 b"+00010(call 1 ping nil)"])
def test_a_length_that_is_not_six_hex_digits_closes(
    server: ServerProcess, keeper: WireClient, raw: bytes
) -> None:
    client = server.client()
    client.send_raw(raw)
    message = client.read_message()
    assert message[0] == "epc-error" and message[2][0] == "protocol-error"
    assert client.is_closed()
    _still_serving(server, keeper)


def test_a_length_longer_than_the_data_closes(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    client.send_raw(b"000100(call 1 ping nil)")
    client.sock.shutdown(socket.SHUT_WR)
    message = client.read_message()
    assert message[0] == "epc-error" and "came" in message[2][1]
    assert client.is_closed()
    _still_serving(server, keeper)


def test_a_16_mib_frame_is_refused(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    client.send_raw(b"ffffff" + b"(" * 4096)
    message = client.read_message()
    assert message[0] == "epc-error" and "limit" in message[2][1]
    assert client.is_closed()
    _still_serving(server, keeper)


@pytest.mark.parametrize("body", [b"(call 1 ping", b"(call 1 \"unterminated)", b"", b")(",
                                  b"(call 1 ping nil) extra", b"\xff\xfe(call"])
def test_an_invalid_s_expression_gets_an_error_and_the_connection_goes_on(
    server: ServerProcess, keeper: WireClient, body: bytes
) -> None:
    client = server.client()
    client.send_raw(b"%06x" % len(body) + body)
    message = client.read_message()
    assert message[0] == "epc-error" and message[1] is None
    assert message[2][0] == "protocol-error"
    assert client.ok("ping") == "pong"
    _still_serving(server, keeper)


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_deeply_nested_lists_are_refused(
    server: ServerProcess, keeper: WireClient, depth: int
) -> None:
    client = server.client()
    body = b"(call 1 echo (" + b"(" * depth + b")" * depth + b"))"
    client.send_raw(b"%06x" % len(body) + body)
    message = client.read_message()
    assert message[0] == "epc-error" and "nested" in message[2][1]
    assert client.ok("ping") == "pong"
    _still_serving(server, keeper)


def test_an_unknown_method_is_a_structured_error(
    server: ServerProcess, keeper: WireClient
) -> None:
    client = server.client()
    kind, err = client.request("os.system", "true")
    assert kind == "return-error"
    assert err == [Symbol("unknown-method"), "no method named os.system"]
    _still_serving(server, keeper)


@pytest.mark.parametrize("method,args", [
    ("ping", [1]),
    ("chat-send", ["s", "t"]),
    ("chat-send", ["s", "t", 42, None]),
    ("chat-send", ["s", "t", "hi", [Keyword("odd")]]),
    ("focus", ["not a plist"]),
    ("focus", [[Keyword("outline"), 3]]),
    ("skills-reload", []),
    ("approval-answer", [None, True]),
    ("job-allow", ["n1"]),
    ("hello", []),
    ("hello", ["token", None, 3]),
])
def test_bad_arity_or_types_are_structured_errors(
    server: ServerProcess, keeper: WireClient, method: str, args: list
) -> None:
    client = server.client()
    kind, err = client.request(method, *args)
    assert kind == "return-error"
    assert err[0] == "bad-arguments" and isinstance(err[1], str)
    assert "Traceback" not in err[1] and "Error(" not in err[1]
    _still_serving(server, keeper)


def test_malformed_messages_of_the_right_shape(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    call = Symbol("call")
    for value in [[call], [call, 1], [call, 1.5, Symbol("ping"), None], [Symbol("frobnicate"), 1],
                  "just a string", [call, 1, Symbol("ping"), "args not a list"]]:
        client.send_raw(frame(value))
        client.read_one()
        message = client.replies.pop()
        assert message[0] in ("epc-error", "return-error"), value
    assert client.ok("ping") == "pong"
    _still_serving(server, keeper)


def test_an_unknown_approval_id_is_expired(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    kind, err = client.request("approval-answer", "no-such-id", True)
    assert (kind, err[0]) == ("return-error", "expired")


def test_large_payload_echo(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    payload = ("plain text ü 日本 " * 60 + 'a "quoted" \\ word\n') * 1_000  # about 1 MB
    assert client.ok("echo", payload) == payload


def test_attachments_both_ways_only_for_a_client_that_asks(server: ServerProcess,
                                                           keeper: WireClient) -> None:
    payload = ("plain text ü 日本 " * 60 + 'a "quoted" \\ word\n') * 1_000  # about 1 MB
    value = [payload, "short", [Keyword("text"), payload + "!"]]
    asking = server.client(hello=False)
    assert asking.hello(server.token, [Keyword("attachments"), True])[0] == "return"
    asking.attachments = True
    uid = asking.call("echo", value)
    asking._fill(20)  # the reply's first bytes: its attachments are announced
    assert asking._buf[6:].startswith(b"(attachments "), asking._buf[:20]
    asking.read_one()
    assert asking.replies.pop() == [Symbol("return"), uid, value]
    # A client that did not ask gets plain s-expressions, also for what it sent attached.
    plain = server.client()
    plain.attachments = True
    uid = plain.call("echo", value)
    plain._fill(20)
    assert plain._buf[6:].startswith(b"(return "), plain._buf[:20]
    plain.read_one()
    assert plain.replies.pop() == [Symbol("return"), uid, value]
    _still_serving(server, keeper)


@pytest.mark.parametrize("payload", [
    b"(attachments 99)(call 1 echo (passepartout-attachment-0))abc",
    b"(attachments 3)(call 1 echo (passepartout-attachment-1))abc",
    b"(attachments 3)(call 1 echo (nil))abc",
    b"(attachments 3 3)(call 1 echo (passepartout-attachment-0 passepartout-attachment-0))abcdef",
])
def test_bad_attachments_are_a_structured_error(server: ServerProcess, keeper: WireClient,
                                               payload: bytes) -> None:
    client = server.client()
    client.send_raw(b"%06x" % len(payload) + payload)
    client.read_one()
    kind, _, err = client.replies.pop()
    assert (kind, err[0]) == ("epc-error", "protocol-error"), err
    assert client.ok("ping") == "pong"  # the same connection goes on
    _still_serving(server, keeper)


def test_methods_list_the_table(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    client.send_raw(frame([Symbol("methods"), 7]))
    client.read_one()
    names = {str(entry[0]) for entry in client.replies.pop()[2]}
    assert {"ping", "chat-send", "approval-answer", "session-history"} <= names
    assert "hello" not in names


def test_jobs_history_and_reload(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    client.ok("jobs")  # the events skill's orchestrator: a list, or nil when empty
    history = client.ok("session-history", "kept")  # the model layer's sessions service
    assert history is None or isinstance(history, list)
    reloaded = _plist(client.ok("skills-reload", "reflexes"))
    assert (reloaded["name"], reloaded["status"]) == ("reflexes", "ready")
    kind, err = client.request("skills-reload", "no-such-skill")
    assert (kind, err[0]) == ("return-error", "skill-error")


def test_org_edit_is_accepted(server: ServerProcess, keeper: WireClient) -> None:
    client = server.client()
    assert client.ok("org-edit", [Keyword("file"), "/tmp/none.org", Keyword("id"), "x",
                                  Keyword("action"), Keyword("removed")]) is True
    assert client.ok("status")


def test_the_log_file_is_written(server: ServerProcess, keeper: WireClient) -> None:
    log = Path(server.stderr_path.parent / "home" / "passepartout.log")
    assert "serving on 127.0.0.1" in log.read_text(encoding="utf-8")
