"""The OpenAI-compatible face's reading of a request (no daemon): what is refused, how
a conversation is split into its history and what the client adds, and how a session
is found again by its history."""

from __future__ import annotations

from typing import Any

import pytest

from passepartout.faces.openai.conversation import (
    BadRequest,
    Conversations,
    digest,
    read_request,
    split,
)


def request(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "passepartout", "messages": list(messages), **extra}


USER = {"role": "user", "content": "hello"}


def test_the_history_and_what_the_client_adds() -> None:
    read = read_request(request({"role": "system", "content": "be brief"}, USER,
                                {"role": "assistant", "content": "hi"},
                                {"role": "user", "content": [{"type": "text", "text": "a"},
                                                             {"type": "text", "text": "b"}]}))
    before, added = split(read.messages)
    assert [m["role"] for m in before] == ["system", "user", "assistant"]
    assert added == [{"role": "user", "content": "a\nb"}]


def test_a_session_is_found_by_its_history_with_spaces_trimmed() -> None:
    kept = Conversations()
    first = read_request(request(USER))
    turn = kept.turn(first)
    assert turn.new and turn.text == "hello" and turn.history == []
    kept.remember([*first.messages, {"role": "assistant", "content": "Hi!\n"}], turn.session)
    again = kept.turn(read_request(request(USER, {"role": "assistant", "content": "Hi!"},
                                           {"role": "user", "content": "more"})))
    assert again.session == turn.session and not again.new and again.text == "more"
    other = kept.turn(read_request(request(USER, {"role": "assistant", "content": "Yo"},
                                           {"role": "user", "content": "more"})))
    assert other.new and other.session != turn.session
    assert [m["content"] for m in other.history] == ["hello", "Yo"]


def test_the_kept_conversations_are_bounded() -> None:
    kept = Conversations(keep=2)
    for n in range(3):
        kept.remember([{"role": "user", "content": str(n)}], f"s{n}")
    assert kept.find([{"role": "user", "content": "0"}]) is None
    assert kept.find([{"role": "user", "content": "2"}]) == "s2"


def test_digests_differ_by_tool_calls() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    plain = [{"role": "assistant", "content": ""}]
    assert digest(plain) != digest([{**plain[0], "tool_calls": [call]}])


@pytest.mark.parametrize(("body", "words"), [
    (request({"role": "tool", "content": "x"}), "tool_call_id"),
    (request(USER, {"role": "assistant", "content": "x"}), "last message"),
    (request(USER, n=2), "n = 1"),
    (request(USER, stream="yes"), "'stream'"),
    (request(USER, tools=[{"type": "function", "function": {"name": "a b"}}]), "name"),
    (request(USER, tools=[{"type": "retrieval"}]), "tools[0]"),
    (request({"role": "user", "content": 5}), "content"),
    (request({"role": "user", "content": ""}), "empty"),
    ({"messages": [USER]}, "'model'"),
])
def test_what_does_not_fit_is_a_clear_error(body: dict[str, Any], words: str) -> None:
    with pytest.raises(BadRequest) as refused:
        Conversations().turn(read_request(body))
    assert words in refused.value.message and refused.value.status == 400


def test_tool_results_must_follow_the_calls() -> None:
    body = request(USER, {"role": "assistant", "content": "x"}, USER,
                   {"role": "tool", "tool_call_id": "c", "content": "r"})
    with pytest.raises(BadRequest, match="must follow"):
        Conversations().turn(read_request(body))
