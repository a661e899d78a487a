"""The fake OpenAI-protocol server, driven through litellm's real code path.

The exception tests are also the record of how litellm 1.106 maps an HTTP status
to an exception class (with ``max_retries=0``; see ``test_openai_sdk_retries_by_default``).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fakellm
import pytest
from fakellm import FakeLLM

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm

from passepartout.llm.provider import close_stream

fake_llm = fakellm.fake_llm  # the fixture the project's conftest also offers

litellm.suppress_debug_info = True
MESSAGES = [{"role": "user", "content": "hello there"}]
SHELL_TOOL = {
    "type": "function",
    "function": {
        "name": "shell",
        "description": "Run a command",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}},
    },
}


def call(fake: FakeLLM, **kwargs: Any) -> Any:
    """litellm's answer; a stream's chunks, read to the end, as a list."""
    if kwargs.get("stream"):
        return list(streamed(fake, **kwargs))
    return litellm.completion(**_args(fake, kwargs))


def streamed(fake: FakeLLM, **kwargs: Any) -> Iterator[Any]:
    """A stream's chunks as they come; closed here after, as the agent closes its own
    (a stream left to the garbage collector can deadlock in httpcore's pool lock)."""
    response = litellm.completion(**_args(fake, {**kwargs, "stream": True}))
    try:
        yield from response
    finally:
        close_stream(response)


def _args(fake: FakeLLM, kwargs: dict[str, Any]) -> dict[str, Any]:
    return {"model": "openai/fake-model", "api_base": fake.base_url, "api_key": "sk-test",
            "messages": MESSAGES, "max_retries": 0, **kwargs}


def raw_post(fake: FakeLLM, body: dict[str, Any]) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    conn.request(
        "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
    )
    return conn.getresponse()


def sse_payloads(raw: bytes) -> list[str]:
    return [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]


def test_plain_reply_with_usage_and_recorded_request(fake_llm: FakeLLM) -> None:
    fake_llm.reply("Hello, person.", usage={"prompt_tokens": 11, "completion_tokens": 3})
    response = call(fake_llm)
    assert response.choices[0].message.content == "Hello, person."
    assert response.choices[0].finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (11, 3)
    assert response.usage.total_tokens == 14
    assert fake_llm.request_count == 1
    request = fake_llm.last_request
    assert request.path == "/v1/chat/completions"
    assert request.model == "fake-model"
    assert request.messages == MESSAGES
    assert request.body.get("stream") in (None, False)
    assert request.headers["Authorization"] == "Bearer sk-test"


def test_default_usage_looks_real(fake_llm: FakeLLM) -> None:
    fake_llm.reply("a reply of some twenty characters")
    usage = call(fake_llm).usage
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_streamed_reply_through_litellm(fake_llm: FakeLLM) -> None:
    fake_llm.reply("one two  three", usage={"completion_tokens": 4})
    stream = call(fake_llm, stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two  three"
    assert len(chunks) >= 3  # really streamed, not one blob
    assert "stop" in [c.choices[0].finish_reason for c in chunks if c.choices]
    assert chunks[-1].usage.completion_tokens == 4
    assert fake_llm.last_request.body["stream"] is True


def test_sse_wire_format() -> None:
    with FakeLLM() as fake:
        fake.reply("a b")
        fake.reply("c")
        for include_usage in (True, False):
            body = {"model": "x", "messages": MESSAGES, "stream": True}
            body["stream_options"] = {"include_usage": include_usage}
            response = raw_post(fake, body)
            assert response.status == 200
            assert response.getheader("Content-Type") == "text/event-stream"
            payloads = sse_payloads(response.read())
            assert payloads[-1] == "[DONE]"
            chunks = [json.loads(p) for p in payloads[:-1]]
            assert all(c["object"] == "chat.completion.chunk" for c in chunks)
            assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
            finishing = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
            assert [c["choices"][0]["finish_reason"] for c in finishing] == ["stop"]
            has_usage = [c for c in chunks if "usage" in c]
            assert len(has_usage) == (1 if include_usage else 0)
            if include_usage:
                assert has_usage[0]["choices"] == []


def test_one_tool_call(fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("shell", {"cmd": "ls -l"}, call_id="call_1")
    response = call(fake_llm, tools=[SHELL_TOOL])
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls"
    (tool_call,) = choice.message.tool_calls
    assert tool_call.id == "call_1"
    assert tool_call.function.name == "shell"
    assert json.loads(tool_call.function.arguments) == {"cmd": "ls -l"}
    assert fake_llm.last_request.body["tools"][0]["function"]["name"] == "shell"


def test_several_tool_calls_streamed_are_reassembled(fake_llm: FakeLLM) -> None:
    fake_llm.tool_calls([("shell", {"cmd": "date"}), ("read-file", {"path": "/tmp/a b"})])
    chunks = list(call(fake_llm, tools=[SHELL_TOOL], stream=True))
    rebuilt = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    calls = rebuilt.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["shell", "read-file"]
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"cmd": "date"},
        {"path": "/tmp/a b"},
    ]
    assert rebuilt.choices[0].finish_reason == "tool_calls"


def test_malformed_arguments_are_sent_verbatim(fake_llm: FakeLLM) -> None:
    fake_llm.tool_call("shell", '{"cmd": "ls"')
    tool_call = call(fake_llm, tools=[SHELL_TOOL]).choices[0].message.tool_calls[0]
    assert tool_call.function.arguments == '{"cmd": "ls"'


# status -> the litellm exception class the cascade sees
STATUS_TO_EXCEPTION = [
    (400, litellm.BadRequestError),
    (401, litellm.AuthenticationError),
    (403, litellm.APIError),  # not PermissionDeniedError: litellm 1.106 has no 403 branch
    (404, litellm.NotFoundError),
    (408, litellm.Timeout),
    (422, litellm.BadRequestError),
    (429, litellm.RateLimitError),
    (500, litellm.InternalServerError),
    (502, litellm.BadGatewayError),
    (503, litellm.ServiceUnavailableError),
]


@pytest.mark.parametrize(("status", "exception"), STATUS_TO_EXCEPTION)
def test_http_error_maps_to_litellm_exception(
    fake_llm: FakeLLM, status: int, exception: type[Exception]
) -> None:
    fake_llm.error(status, f"scripted failure {status}")
    with pytest.raises(exception) as caught:
        call(fake_llm)
    assert caught.value.status_code == status  # type: ignore[attr-defined]
    assert f"scripted failure {status}" in str(caught.value)
    assert fake_llm.request_count == 1


def test_refused_connection_looks_like_a_500(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nobody listening is no APIConnectionError: litellm reports "Connection error."
    # as an InternalServerError with status 500, like a provider's own 500.
    # (Through the OpenAI SDK, which passepartout.llm.tuning switches off.)
    monkeypatch.delenv("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", raising=False)
    with FakeLLM() as fake:
        pass  # closed: nothing listens on its port any more
    with pytest.raises(litellm.InternalServerError, match="Connection error") as caught:
        call(fake, timeout=5)
    assert caught.value.status_code == 500


def test_error_on_a_streamed_request(fake_llm: FakeLLM) -> None:
    fake_llm.error(500, "stream broke")
    with pytest.raises(litellm.InternalServerError):
        list(call(fake_llm, stream=True))


def test_context_window_message_maps_to_its_own_class(fake_llm: FakeLLM) -> None:
    fake_llm.error(400, "This model's maximum context length is 8192 tokens.")
    with pytest.raises(litellm.ContextWindowExceededError):
        call(fake_llm)


def test_429_carries_retry_after_zero() -> None:
    with FakeLLM() as fake:
        fake.error(429, "slow down")
        fake.error(503, "later", retry_after="7")
        first = raw_post(fake, {"model": "x", "messages": MESSAGES})
        assert (first.status, first.getheader("Retry-After")) == (429, "0")
        assert json.loads(first.read())["error"]["message"] == "slow down"
        second = raw_post(fake, {"model": "x", "messages": MESSAGES})
        assert (second.status, second.getheader("Retry-After")) == (503, "7")


def test_openai_sdk_retries_by_default(fake_llm: FakeLLM,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Without max_retries=0 the OpenAI SDK under litellm retries a 500 twice (with
    # backoff) before litellm raises: three requests for one completion() call.
    monkeypatch.delenv("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER", raising=False)
    fake_llm.error(500, "a").error(500, "b").reply("third time lucky")
    args = {"model": "openai/fake-model", "api_base": fake_llm.base_url, "api_key": "sk-test"}
    response = litellm.completion(messages=MESSAGES, **args)
    assert response.choices[0].message.content == "third time lucky"
    assert fake_llm.request_count == 3


def test_delay_beyond_timeout_raises_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.delay(5.0)
    with pytest.raises(litellm.Timeout):
        call(fake_llm, timeout=0.3)  # the reply, five seconds on, would have come
    assert fake_llm.request_count == 1


def test_delay_within_timeout_answers(fake_llm: FakeLLM) -> None:
    fake_llm.delay(0.2, "worth the wait")
    started = time.monotonic()
    assert call(fake_llm, timeout=5).choices[0].message.content == "worth the wait"
    assert time.monotonic() - started >= 0.2


def test_slow_stream_spaces_its_chunks(fake_llm: FakeLLM) -> None:
    fake_llm.slow_stream("w1 w2 w3 w4", 0.1)
    arrivals: list[float] = []
    text = ""
    for chunk in streamed(fake_llm):
        piece = chunk.choices[0].delta.content if chunk.choices else None
        if piece:
            arrivals.append(time.monotonic())
            text += piece
    assert text == "w1 w2 w3 w4"
    assert arrivals[-1] - arrivals[0] >= 0.25  # four chunks, 0.1 s apart


def test_routing_per_model_for_cascades(fake_llm: FakeLLM) -> None:
    fake_llm.for_model("m1").error(500, "m1 is down")
    fake_llm.for_model("m2").reply("m2 answers")
    fake_llm.reply("shared queue")
    with pytest.raises(litellm.InternalServerError):
        call(fake_llm, model="openai/m1")
    assert call(fake_llm, model="openai/m2").choices[0].message.content == "m2 answers"
    # m1's own queue is empty now: it falls back to the shared queue
    assert call(fake_llm, model="openai/m1").choices[0].message.content == "shared queue"
    assert [r.model for r in fake_llm.requests] == ["m1", "m2", "m1"]


def test_unscripted_request_is_a_loud_500(fake_llm: FakeLLM) -> None:
    with pytest.raises(litellm.InternalServerError, match="no reply scripted"):
        call(fake_llm)


def test_echo_default_answers_with_last_user_message() -> None:
    with FakeLLM(default="echo") as fake:
        messages = [*MESSAGES, {"role": "assistant", "content": "hi"}]
        messages.append({"role": "user", "content": "echo me"})
        assert call(fake, messages=messages).choices[0].message.content == "echo me"


def test_acompletion_streamed(fake_llm: FakeLLM) -> None:
    fake_llm.reply("async works")

    async def run() -> str:
        stream = await litellm.acompletion(
            model="openai/fake-model",
            api_base=fake_llm.base_url,
            api_key="sk-test",
            messages=MESSAGES,
            stream=True,
            max_retries=0,
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert asyncio.run(run()) == "async works"


def test_unknown_path_is_404_and_both_chat_paths_work() -> None:
    with FakeLLM() as fake:
        fake.reply("x").reply("y")
        conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
        conn.request("POST", "/v1/embeddings", "{}")
        assert conn.getresponse().status == 404
        for path in ("/v1/chat/completions", "/chat/completions"):
            conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
            conn.request("POST", path, json.dumps({"model": "x", "messages": MESSAGES}))
            assert conn.getresponse().status == 200
        assert fake.request_count == 2


def test_standalone_process_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps(
            [
                {"text": "first"},
                {"tool_calls": [{"name": "shell", "arguments": {"cmd": "ls"}}]},
                {"error": 429, "message": "too many"},
            ]
        )
    )
    server = Path(__file__).with_name("fakellm.py")
    proc = subprocess.Popen(
        [sys.executable, str(server), "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        args = {"model": "openai/any", "api_base": base_url, "api_key": "k", "max_retries": 0}
        first = litellm.completion(messages=MESSAGES, **args)
        assert first.choices[0].message.content == "first"
        second = litellm.completion(messages=MESSAGES, tools=[SHELL_TOOL], **args)
        assert second.choices[0].message.tool_calls[0].function.name == "shell"
        with pytest.raises(litellm.RateLimitError):
            litellm.completion(messages=MESSAGES, **args)
    finally:
        proc.terminate()
        assert proc.wait(timeout=5) == 0


def test_standalone_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('{"text": "not a list"}')
    server = Path(__file__).with_name("fakellm.py")
    result = subprocess.run(
        [sys.executable, str(server), "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "must be a JSON list" in result.stderr


def test_fast_settings_keep_streamed_usage_and_errors(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passepartout.llm.tuning import FAST_SETTINGS, configure_litellm_fast

    for name in FAST_SETTINGS:  # restored after the test
        monkeypatch.setattr(litellm, name, getattr(litellm, name))
    configure_litellm_fast()
    assert all(getattr(litellm, name) == value for name, value in FAST_SETTINGS.items())
    fake_llm.reply("still counted", usage={"prompt_tokens": 9, "completion_tokens": 2})
    chunks = list(call(fake_llm, stream=True, stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "still counted"
    )
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (9, 2)
    fake_llm.error(429, "later")
    with pytest.raises(litellm.RateLimitError):
        call(fake_llm)
