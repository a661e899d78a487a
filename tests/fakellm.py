"""A scripted OpenAI-protocol chat-completions server on 127.0.0.1, for tests.

Tests talk to it through litellm's real code path (``model="openai/<name>"``,
``api_base=fake.base_url``), so nothing needs a network or an API key.

Scripting (each call queues one reply, served in order)::

    fake.reply("hello", usage={"prompt_tokens": 7, "completion_tokens": 1})
    fake.tool_call("shell", {"cmd": "ls"})
    fake.tool_calls([("read-file", {"path": "a"}), ("read-file", {"path": "b"})])
    fake.error(429, "slow down")          # 429 carries Retry-After: 0
    fake.delay(5.0, "late")               # first byte after 5 s: read timeouts
    fake.slow_stream("a b c", 0.2)        # one SSE chunk per word, 0.2 s apart
    fake.for_model("m1").error(500)       # only requests whose body says model "m1"
    fake.for_model("m2").reply("ok")

A request takes the next reply queued for its model, else the next of the shared
queue, else the default. The default is an HTTP 500 naming the request, so a test
that forgot to script a reply fails loudly; ``FakeLLM(default="echo")`` answers
with the last user message instead.

Streaming follows the request: ``"stream": true`` gets SSE (a role chunk, content
or tool-call deltas, a chunk with ``finish_reason``, a usage chunk when
``stream_options.include_usage`` is set, then ``data: [DONE]``); otherwise JSON.

Standalone, for end-to-end tests that start the real server process::

    python tests/fakellm.py --port 0 --script replies.json [--default echo]

prints its base URL (``http://127.0.0.1:<port>/v1``) as the first line of stdout.
The script is a JSON list of replies, each an object with one of ``"text"``,
``"tool_calls"`` (list of ``{"name", "arguments", "id"?}``) or ``"error"`` (a
status) plus optional ``"message"``, ``"delay"``, ``"chunk_delay"``, ``"usage"``,
``"finish_reason"`` and ``"model"`` (queue it for that model only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import signal
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import pytest

log = logging.getLogger(__name__)

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
DefaultMode = Literal["error", "echo"]
ERROR_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    429: "rate_limit_error",
}


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


@dataclass
class ToolCall:
    """One function call in a reply; ``arguments`` as a str is sent verbatim (bad JSON)."""

    name: str
    arguments: dict[str, Any] | str
    id: str = field(default_factory=_new_call_id)

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer."""

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    status: int = 200
    message: str = ""
    delay: float = 0.0  # before the first byte
    chunk_delay: float = 0.0  # between SSE chunks (and summed before a JSON body)
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> Reply:
        """Builds a reply from the standalone script format."""
        calls = [
            ToolCall(c["name"], c.get("arguments", {}), c.get("id") or _new_call_id())
            for c in item.get("tool_calls", [])
        ]
        status = int(item.get("error", 200))
        reply = cls(
            text=item.get("text"),
            tool_calls=calls,
            status=status,
            message=item.get("message", ""),
            delay=float(item.get("delay", 0.0)),
            chunk_delay=float(item.get("chunk_delay", 0.0)),
            usage=item.get("usage"),
            finish_reason=item.get("finish_reason"),
        )
        if status == 429:
            reply.headers["Retry-After"] = "0"
        return reply


@dataclass
class RecordedRequest:
    """What the server received: path, headers and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


class Script:
    """A queue of replies with the scripting verbs; ``FakeLLM`` and ``for_model`` share it."""

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock
        self._queue: deque[Reply] = deque()

    def push(self, reply: Reply) -> Script:
        with self._lock:
            self._queue.append(reply)
        return self

    def pop(self) -> Reply | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reply(
        self,
        text: str,
        *,
        usage: dict[str, int] | None = None,
        finish_reason: str = "stop",
        delay: float = 0.0,
    ) -> Script:
        return self.push(Reply(text=text, usage=usage, finish_reason=finish_reason, delay=delay))

    def tool_call(
        self,
        name: str,
        arguments: dict[str, Any] | str,
        *,
        call_id: str | None = None,
        text: str | None = None,
    ) -> Script:
        call = ToolCall(name, arguments) if call_id is None else ToolCall(name, arguments, call_id)
        return self.tool_calls([call], text=text)

    def tool_calls(
        self,
        calls: list[ToolCall | tuple[str, dict[str, Any] | str]],
        *,
        text: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> Script:
        """Several calls in one reply: ``ToolCall`` objects or ``(name, arguments)`` pairs."""
        made = [c if isinstance(c, ToolCall) else ToolCall(c[0], c[1]) for c in calls]
        return self.push(Reply(text=text, tool_calls=made, usage=usage))

    def error(self, status: int, message: str = "", *, retry_after: str | None = None) -> Script:
        reply = Reply(status=status, message=message or f"fake error {status}")
        if retry_after is not None:
            reply.headers["Retry-After"] = retry_after
        elif status == 429:
            reply.headers["Retry-After"] = "0"
        return self.push(reply)

    def delay(self, seconds: float, text: str = "late reply") -> Script:
        """A reply whose first byte comes after ``seconds`` (to trip read timeouts)."""
        return self.push(Reply(text=text, delay=seconds, finish_reason="stop"))

    def slow_stream(self, text: str, chunk_delay: float) -> Script:
        """A reply streamed one word per chunk, ``chunk_delay`` seconds apart."""
        return self.push(Reply(text=text, chunk_delay=chunk_delay, finish_reason="stop"))


def _estimate_tokens(text: str) -> int:
    # Roughly what a BPE tokenizer gives for English: one token per 4 chars.
    return max(1, (len(text) + 3) // 4) if text else 0


def _words(text: str) -> list[str]:
    """Splits text into stream pieces that join back to exactly ``text``."""
    pieces: list[str] = []
    start = 0
    for i in range(1, len(text)):
        if text[i] == " " and text[i - 1] != " ":
            pieces.append(text[start:i])
            start = i
    if text:
        pieces.append(text[start:])
    return pieces


class FakeLLM(Script):
    """The server; a context manager. ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(self, *, default: DefaultMode = "error", port: int = 0) -> None:
        super().__init__(threading.Lock())
        if default not in ("error", "echo"):
            raise ValueError(f"default must be 'error' or 'echo', not {default!r}")
        self.default: DefaultMode = default
        self.requests: list[RecordedRequest] = []
        self._per_model: dict[str, Script] = {}
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _make_handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a sleeping handler must not hold up close()
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"fakellm-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()  # wakes handlers sleeping in a delay
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- scripting and inspection ----------------------------------------------------------

    def for_model(self, model: str) -> Script:
        """The queue for requests whose body names ``model`` (as litellm sends it)."""
        with self._lock:
            return self._per_model.setdefault(model, Script(self._lock))

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self.requests:
                raise AssertionError("the fake LLM server received no request")
            return self.requests[-1]

    def load_script(self, items: list[dict[str, Any]]) -> None:
        """Queues replies given in the standalone JSON script format."""
        for item in items:
            reply = Reply.from_json(item)
            target: Script = self.for_model(item["model"]) if "model" in item else self
            target.push(reply)

    # -- used by the handler ---------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            own = self._per_model.get(request.model)
        reply = (own.pop() if own is not None else None) or self.pop()
        if reply is not None:
            return reply
        if self.default == "echo":
            users = [m for m in request.messages if m.get("role") == "user"]
            content = users[-1].get("content", "") if users else ""
            return Reply(text=content if isinstance(content, str) else json.dumps(content))
        return Reply(
            status=500,
            message=f"fakellm: no reply scripted for request #{self.request_count} "
            f"(model {request.model!r})",
        )

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)


def _usage_for(reply: Reply, request: RecordedRequest) -> dict[str, int]:
    prompt_text = json.dumps(request.messages)
    completion_text = (reply.text or "") + "".join(
        c.name + c.arguments_json() for c in reply.tool_calls
    )
    usage = {
        "prompt_tokens": _estimate_tokens(prompt_text),
        "completion_tokens": _estimate_tokens(completion_text),
    }
    usage.update(reply.usage or {})
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _error_type(status: int) -> str:
    # litellm maps any error whose body says "invalid_request_error" to BadRequestError,
    # whatever the status, so only 400 and 422 say so (as OpenAI does).
    if status >= 500:
        return "server_error"
    return ERROR_TYPES.get(status, "invalid_request_error")


def _finish_reason(reply: Reply) -> str:
    if reply.finish_reason:
        return reply.finish_reason
    return "tool_calls" if reply.tool_calls else "stop"


def _completion_body(reply: Reply, request: RecordedRequest, cid: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": _usage_for(reply, request),
    }


def _stream_chunks(reply: Reply, request: RecordedRequest, cid: str) -> Iterator[dict[str, Any]]:
    """The SSE payloads of one streamed reply, in order."""
    base = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in _words(reply.text or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(reply.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        args = call.arguments_json()
        half = len(args) // 2  # two deltas, so clients must concatenate
        for part in (args[:half], args[half:]):
            if part:
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    yield chunk({}, _finish_reason(reply))
    options = request.body.get("stream_options") or {}
    if options.get("include_usage"):
        yield {**base, "choices": [], "usage": _usage_for(reply, request)}


def _make_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real providers do

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("fakellm: " + format, *args)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.split("?")[0] not in CHAT_PATHS:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError as exc:
                self._send_json(400, {"error": {"message": f"bad JSON: {exc}"}})
                return
            request = RecordedRequest(self.path, dict(self.headers.items()), body)
            fake._record(request)
            reply = fake._next_reply(request)
            try:
                self._answer(reply, request)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout under test): nothing to answer.
                self.close_connection = True

        def _answer(self, reply: Reply, request: RecordedRequest) -> None:
            fake._sleep(reply.delay)
            if reply.status != 200:
                error = {
                    "message": reply.message,
                    "type": _error_type(reply.status),
                    "param": None,
                    "code": str(reply.status),
                }
                self._send_json(reply.status, {"error": error}, reply.headers)
                return
            cid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
            if not request.body.get("stream"):
                fake._sleep(reply.chunk_delay * len(_words(reply.text or "")))
                self._send_json(200, _completion_body(reply, request, cid), reply.headers)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            for payload in _stream_chunks(reply, request, cid):
                self._write_chunk(f"data: {json.dumps(payload)}\n\n".encode())
                fake._sleep(reply.chunk_delay)
            self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _send_json(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    """A running FakeLLM, closed after the test; unscripted requests get HTTP 500."""
    with FakeLLM() as fake:
        yield fake


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-protocol server for tests.")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--script", type=Path, help="JSON list of replies")
    parser.add_argument("--default", choices=["error", "echo"], default="error")
    args = parser.parse_args(argv)
    fake = FakeLLM(default=args.default, port=args.port)
    if args.script is not None:
        try:
            items = json.loads(args.script.read_text())
            if not isinstance(items, list):
                raise ValueError("the script must be a JSON list of replies")
            fake.load_script(items)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"fakellm: bad script {args.script}: {exc}", file=sys.stderr)
            return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with fake:
        print(fake.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
