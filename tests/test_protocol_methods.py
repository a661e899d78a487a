"""The daemon's methods, typed once (passepartout.protocol): every request survives the
wire (its arguments framed, read back and decoded are the same request), the server's
table serves every one of them, and a call that fits no method is a clear typed error
(an unknown name, the wrong number or kind of arguments), never a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from passepartout import protocol
from passepartout.protocol import MethodError, decode_request
from passepartout.server.methods import METHODS
from passepartout.signals import Keyword, Symbol
from passepartout.wire import frames

CONTEXT = {"model": "openai/a", "workspace": "/tmp/w"}

SAMPLES: dict[str, list[protocol.Request[Any]]] = {
    "hello": [protocol.Hello("secret", [Keyword("client"), "tui"]), protocol.Hello("t")],
    "ping": [protocol.Ping()],
    "echo": [protocol.Echo(["a", 1, None, Keyword("k")]), protocol.Echo("été 日本")],
    "chat-send": [protocol.ChatSend("s", "t1", "hello \"there\" \\", CONTEXT),
                  protocol.ChatSend("s", "t2", "no context", {})],
    "chat-cancel": [protocol.ChatCancel("s", "t1"), protocol.ChatCancel("s", None)],
    "approval-answer": [protocol.AnswerApproval("a1", answer) for answer in (
        protocol.Allow(), protocol.Deny(), protocol.Allow(always=True),
        protocol.Deny(always=True), protocol.Evaluated(True, "42"),
        protocol.Evaluated(False, "void-function"))],
    "org-edit": [protocol.OrgEdit({"file": "/tmp/a.org", "id": "x1"})],
    "focus": [protocol.SetFocus({"file": "/tmp/a.org", "outline": ["A", "B"]})],
    "status": [protocol.Status()],
    "models": [protocol.Models()],
    "jobs": [protocol.Jobs()],
    "job-problems": [protocol.JobProblems()],
    "held-jobs": [protocol.HeldJobs()],
    "job-allow": [protocol.JobAllow("n1", "abc123"), protocol.JobAllow("n1", None)],
    "job-deny": [protocol.JobDeny("n1")],
    "skills-reload": [protocol.ReloadSkill("events")],
    "session-history": [protocol.SessionHistory("s")],
    "sessions": [protocol.Sessions()],
    "context": [protocol.Context()],
    "usage": [protocol.Usage("s"), protocol.Usage(None)],
    "rewrite-check": [protocol.RewriteCheck({"file": "/tmp/a.org", "new": "text"})],
    "attachments-preview": [protocol.PreviewAttachments([[Keyword("file"), "/tmp/a.org"]]),
                            protocol.PreviewAttachments(None)],
    "memex": [protocol.Memex("claude", "search", {"query": "trip", "limit": 5})],
    "mcp-servers": [protocol.McpServers()],
}


def test_every_method_has_a_sample_here() -> None:
    assert set(SAMPLES) == set(protocol.REQUESTS)


def test_the_server_serves_every_method_of_the_protocol() -> None:
    # hello is the transport's own (the token); every other request has its entry
    assert set(METHODS) == set(protocol.REQUESTS) - {"hello"}
    for name, method in METHODS.items():
        assert method.request is protocol.REQUESTS[name]


def _over_the_wire(request: protocol.Request[Any]) -> protocol.Request[Any]:
    data = frames.frame([Symbol("call"), 1, Symbol(request.NAME), request.args()])
    kind, _uid, name, args = frames.read_payload(data[frames.HEAD:])
    assert kind == "call"
    return decode_request(name, args)


@pytest.mark.parametrize("request_", [r for rs in SAMPLES.values() for r in rs],
                         ids=lambda r: type(r).__name__)
def test_a_request_reads_back_as_itself(request_: protocol.Request[Any]) -> None:
    got = _over_the_wire(request_)
    if isinstance(request_, protocol.Hello | protocol.PreviewAttachments
                  | protocol.Echo):
        # raw values: a plist stays a list, () is nil
        assert type(got) is type(request_)
        assert frames.frame(got.args()) == frames.frame(request_.args())
    else:
        assert got == request_


def test_a_request_is_sent_under_its_wire_name_with_its_params() -> None:
    send = protocol.ChatSend("s", "t", "hi", {})
    assert send.NAME == "chat-send"
    assert protocol.ChatSend.params() == (("session-id", "string"), ("turn-id", "string"),
                                          ("text", "string"), ("context", "plist"))
    assert send.args() == ["s", "t", "hi", None]  # an empty plist is nil, as Emacs sends
    assert protocol.AnswerApproval("a", protocol.Allow()).args() == ["a", True]


def test_an_unknown_method_is_a_typed_error() -> None:
    with pytest.raises(MethodError) as err:
        decode_request("os.system", ["true"])
    assert err.value.kind == "unknown-method"
    assert err.value.message == "no method named os.system"


@pytest.mark.parametrize("name,args,says", [
    ("ping", [1], "ping takes 0 argument(s) (no arguments), not 1"),
    ("chat-send", ["s", "t"],
     "chat-send takes 4 argument(s) (session-id turn-id text context), not 2"),
    ("hello", [], "hello takes 1 to 2 argument(s) (token client), not 0"),
    ("hello", ["t", None, 3], "hello takes 1 to 2 argument(s) (token client), not 3"),
    ("job-allow", ["n1"], "job-allow takes 2 argument(s) (id hash), not 1"),
    ("chat-send", ["s", "t", 42, None], "chat-send: text must be a string"),
    ("chat-send", ["s", Keyword("t"), "hi", None], "chat-send: turn-id must be a string"),
    ("chat-cancel", ["s", 3], "chat-cancel: turn-id must be a string"),
    ("focus", ["not a plist"], "focus: plist: a property list needs keyword/value pairs"),
    ("memex", ["c", "search", [Keyword("odd")]], "memex: args: a property list"),
    ("status", "not a list", "status: the arguments must be a list"),
])
def test_arguments_that_do_not_fit_are_a_typed_error(name: str, args: Any, says: str) -> None:
    with pytest.raises(MethodError) as err:
        decode_request(name, args)
    assert err.value.kind == "bad-arguments"
    assert err.value.message.startswith(says)


def test_nil_arguments_are_no_arguments() -> None:
    assert decode_request("ping", None) == protocol.Ping()


def test_an_answer_that_is_not_a_clear_yes_is_a_no() -> None:
    for value in (None, "yes", 1, [Keyword("allow")], [Keyword("allow"), Symbol("t")]):
        assert decode_request("approval-answer", ["a", value]).answer == protocol.Deny()


def test_replies_read_as_their_results() -> None:
    assert protocol.Status().result([Keyword("health"), "ok"]) == {"health": "ok"}
    assert protocol.Status().result(None) == {}
    assert protocol.Sessions().result([[Keyword("id"), "s1"], [Keyword("id"), "s2"]]) == [
        {"id": "s1"}, {"id": "s2"}]
    assert protocol.Jobs().result(None) == []
    assert protocol.Usage("s").result(
        [Keyword("session"), [Keyword("calls"), 2], Keyword("today"), None]) == {
        "session": {"calls": 2}, "today": None}
    assert protocol.ChatCancel("s", None).result(True) is True
    assert protocol.McpServers().result(["a: ok", Symbol("b")]) == ["a: ok", "b"]
    assert protocol.SessionHistory("s").result(
        [[Keyword("role"), "user"], {"role": "assistant"}]) == [
        {"role": "user"}, {"role": "assistant"}]


def test_a_hello_with_a_client_that_is_not_a_plist_names_no_fields() -> None:
    assert protocol.Hello("t", [Keyword("odd")]).client_fields() == {}
    assert protocol.Hello("t", [Keyword("client"), "tui"]).client_fields() == {
        "client": "tui"}
