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
import uuid
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import pytest
from fakellm_protocol import (
    RecordedRequest,
    Reply,
    ToolCall,
    completion_body,
    error_type,
    stream_chunks,
    words,
)

log = logging.getLogger(__name__)

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
DefaultMode = Literal["error", "echo"]


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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler sleeping in a delay must not hold up close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that times out or drops a keep-alive connection is normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            log.debug("fakellm: client %s went away", client_address)
            return
        super().handle_error(request, client_address)


class FakeLLM(Script):
    """The server; a context manager. ``base_url`` is ``http://127.0.0.1:<port>/v1``."""

    def __init__(self, *, default: DefaultMode = "error", port: int = 0) -> None:
        super().__init__(threading.Lock())
        if default not in ("error", "echo"):
            raise ValueError(f"default must be 'error' or 'echo', not {default!r}")
        self.default: DefaultMode = default
        self.requests: list[RecordedRequest] = []
        self._answered = 0  # replies begun: their delay over, their first byte sent
        # Set when a client gave up on a reply before its end (a cancel drops it).
        self.given_up = threading.Event()
        self._per_model: dict[str, Script] = {}
        self._closing = threading.Event()
        self._server = _Server(("127.0.0.1", port), _make_handler(self))
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        # A short poll interval: shutdown() waits up to one interval (0.5 s by default).
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(0.02,),
            name=f"fakellm-{self.port}",
            daemon=True,
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

    @property
    def answered(self) -> int:
        """How many replies have begun (their delay over)."""
        with self._lock:
            return self._answered

    def _begin_answer(self) -> None:
        with self._lock:
            self._answered += 1

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


def _http_chunk(data: bytes) -> bytes:
    """One piece of a ``Transfer-Encoding: chunked`` body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _make_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
        disable_nagle_algorithm = True  # else headers then body wait on a delayed ACK (40 ms)

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
            except ConnectionError:
                # The client gave up (a timeout or a cancel under test): nothing to answer.
                self.close_connection = True
                fake.given_up.set()

        def _answer(self, reply: Reply, request: RecordedRequest) -> None:
            fake._sleep(reply.delay)
            fake._begin_answer()
            if reply.status != 200:
                error = {
                    "message": reply.message,
                    "type": error_type(reply.status),
                    "param": None,
                    "code": str(reply.status),
                }
                self._send_json(reply.status, {"error": error}, reply.headers)
                return
            cid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
            if not request.body.get("stream"):
                fake._sleep(reply.chunk_delay * len(words(reply.text or "")))
                self._send_json(200, completion_body(reply, request, cid), reply.headers)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            events = [
                f"data: {json.dumps(p)}\n\n".encode() for p in stream_chunks(reply, request, cid)
            ]
            events.append(b"data: [DONE]\n\n")
            if reply.chunk_delay <= 0:
                # One write: the client still parses event by event, and a test (or the
                # benchmark) does not wait on a hundred thread switches of this server.
                self._write(b"".join(_http_chunk(e) for e in events) + b"0\r\n\r\n")
                return
            for event in events:
                self._write(_http_chunk(event))
                fake._sleep(reply.chunk_delay)
            self._write(b"0\r\n\r\n")

        def _write(self, data: bytes) -> None:
            self.wfile.write(data)
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
