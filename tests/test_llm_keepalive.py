"""Streamed model calls give their connection back (passepartout.llm.keepalive).

Against a real HTTP server on a socket: one written here, whose stream can hold its
last bytes back, and the fake model server through litellm itself.
"""

from __future__ import annotations

import gc
import select
import socket
import socketserver
import threading
import time
import types
from collections.abc import Iterator

import httpx
import pytest
from fakellm import FakeLLM

from passepartout.llm.keepalive import KeepAliveTransport, openai_handler_client
from passepartout.llm.provider import close_stream
from passepartout.llm.tuning import configure_litellm_fast

EVENTS = [b'data: {"n": 1}\n\n', b'data: {"n": 2}\n\n', b"data: [DONE]\n\n"]


class _StreamServer(socketserver.ThreadingTCPServer):
    """Answers every POST with a chunked event stream; counts connections; holds the
    terminating chunk until ``release`` is set; notes connections the client closed."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.connections = 0
        self.closed_by_client = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.events = EVENTS


class _Handler(socketserver.StreamRequestHandler):
    server: _StreamServer

    def _peek(self) -> bytes:
        """What the client sent next; b"" when it closed (a reset, with data unread)."""
        try:
            return self.connection.recv(1, socket.MSG_PEEK)
        except ConnectionResetError:
            return b""

    def handle(self) -> None:
        self.server.connections += 1
        try:
            self._serve()
        except OSError:  # the client reset the connection: it is gone
            self.server.closed_by_client.set()

    def _serve(self) -> None:
        while True:
            line = self.rfile.readline()
            if not line:
                self.server.closed_by_client.set()
                return
            length = 0
            while line not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                line = self.rfile.readline()
            self.rfile.read(length)
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n")
            for event in self.server.events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
            while not self.server.release.is_set():  # holding back the last bytes
                readable, _, _ = select.select([self.connection], [], [], 0.01)
                if readable and not self._peek():
                    self.server.closed_by_client.set()
                    return
            self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def server() -> Iterator[_StreamServer]:
    srv = _StreamServer()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()


def _read_until_done(client: httpx.Client, url: str) -> None:
    """What the OpenAI SDK does: stop at [DONE] and close, the last bytes unread."""
    with client.stream("POST", url, content=b"{}") as response:
        for line in response.iter_lines():
            if line == "data: [DONE]":
                break


def _join_drains() -> None:
    """Wait for the connections being finished in the background to be back (the model
    call's worker closing its stream, then the drain)."""
    for _ in range(100):
        busy = [t for t in threading.enumerate() if t.name.startswith("llm-")]
        if not busy:
            return
        for thread in busy:
            if thread.ident is not None:  # a thread listed before it has started
                thread.join(10)
        time.sleep(0.01)


def test_a_stream_closed_at_done_keeps_its_connection(server: _StreamServer) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    server.release.clear()  # the terminating chunk waits: closing must not
    client = httpx.Client(transport=KeepAliveTransport(httpx.HTTPTransport()))
    _read_until_done(client, url)  # returns although the server still holds its last bytes
    server.release.set()
    _join_drains()
    for _ in range(3):
        _read_until_done(client, url)
        _join_drains()
    assert server.connections == 1
    # httpx's own transport drops the connection of each such stream.
    plain = httpx.Client()
    for _ in range(2):
        _read_until_done(plain, url)
    assert server.connections == 3


def test_a_stream_left_at_done_unclosed_keeps_its_connection(server: _StreamServer) -> None:
    """What litellm's own OpenAI handler does: stop reading at [DONE], never close."""
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    client = httpx.Client(transport=KeepAliveTransport(httpx.HTTPTransport()))
    kept = []
    for _ in range(3):
        response = client.send(client.build_request("POST", url, content=b"{}"), stream=True)
        lines = response.iter_lines()
        while next(lines) != "data: [DONE]":
            pass
        kept.append(response)  # neither read on nor closed (nor collected)
        _join_drains()
    assert server.connections == 1


def test_a_stream_read_past_done_gets_every_byte(server: _StreamServer) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    server.events = [*EVENTS, b"data: after\n\n"]
    client = httpx.Client(transport=KeepAliveTransport(httpx.HTTPTransport()))
    for _ in range(2):
        with client.stream("POST", url, content=b"{}") as response:
            assert [line for line in response.iter_lines() if line] == [
                'data: {"n": 1}', 'data: {"n": 2}', "data: [DONE]", "data: after"]
    _join_drains()
    assert server.connections == 1


def test_provider_streams_reuse_one_connection(fake_llm: FakeLLM,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The turn's own path: Provider, litellm's OpenAI handler, the keep-alive client."""
    from passepartout.llm.provider import Provider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_BASE", fake_llm.base_url)
    port = fake_llm.port
    connects: list[int] = []
    real = socket.create_connection

    def counting(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        if address[1] == port:
            connects.append(port)
        return real(address, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", counting)
    fake_llm.reply("one two", usage={"prompt_tokens": 5, "completion_tokens": 2})
    fake_llm.tool_call("read-file", {"path": "a.org"}).reply("three")
    provider = Provider()
    replies = []
    for _ in range(3):
        shown: list[str] = []
        result = provider.complete(["openai/fake-model"], [{"role": "user", "content": "hi"}],
                                   on_text=shown.append)
        replies.append((result.reply.text, [c.name for c in result.reply.tool_calls],
                        "".join(shown), result.streamed))
        _join_drains()
    assert replies == [("one two", [], "one two", True), ("", ["read-file"], "", True),
                       ("three", [], "three", True)]
    assert "client" in provider._kwargs("openai/fake-model", [], None, True)
    assert len(connects) == 1


def test_a_stream_abandoned_before_done_is_dropped_at_once(server: _StreamServer) -> None:
    url = f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    server.events = EVENTS[:2]  # a cancelled turn: no [DONE] read
    server.release.clear()
    # A read timeout longer than the wait below: a drain would outlast the wait.
    client = httpx.Client(transport=KeepAliveTransport(httpx.HTTPTransport()),
                          timeout=httpx.Timeout(120))
    with client.stream("POST", url, content=b"{}") as response:
        next(response.iter_lines())
    # The provider must see the connection go: that is what stops its generation.
    assert server.closed_by_client.wait(60)
    server.release.set()
    _read_until_done(client, url)
    assert server.connections == 2


def test_litellm_streams_reuse_one_connection(fake_llm: FakeLLM,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import litellm

    configure_litellm_fast()
    port = fake_llm.port
    connects: list[int] = []
    real = socket.create_connection

    def counting(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        if address[1] == port:
            connects.append(port)
        return real(address, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", counting)
    fake_llm.reply("one two three").reply("four five").reply("six")
    texts = []
    for _ in range(3):
        stream = litellm.completion(model="openai/fake-model", api_base=fake_llm.base_url,
                                    api_key="sk-test", stream=True,
                                    client=openai_handler_client(),
                                    messages=[{"role": "user", "content": "count"}])
        texts.append("".join(c.choices[0].delta.content or "" for c in stream))
        close_stream(stream)  # as the agent does: closing keeps the connection too
        _join_drains()
    assert texts == ["one two three", "four five", "six"]
    assert len(connects) == 1


def _left_to_the_collector() -> list[str]:
    """httpx's and httpcore's stream generators still suspended, and pool streams still
    open: what the cyclic collector would end later, on whichever thread it runs."""
    left = []
    for thing in gc.get_objects():
        if isinstance(thing, types.GeneratorType) and thing.gi_frame is not None:
            where = thing.gi_code.co_filename
            if "/httpx/" in where or "/httpcore/" in where:
                left.append(thing.gi_code.co_qualname)
        elif type(thing).__name__ == "PoolByteStream" and not thing._closed:
            left.append("open PoolByteStream")
    return left


def test_a_cancelled_call_leaves_nothing_for_the_collector(
        fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cancelled stream's generators end on the call's own thread.  Left to the
    collector, one of them ended inside httpcore's pool lock, taken by the next call,
    and waited for that same lock for ever: the daemon answered nothing more."""
    from passepartout.llm.provider import Cancelled, Provider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", fake_llm.base_url)
    fake_llm.slow_stream(" ".join(f"word{i}" for i in range(40)), 0.05)
    fake_llm.reply("after the cancel")
    cancel = threading.Event()
    gc.collect()
    gc.disable()
    try:
        with pytest.raises(Cancelled):
            Provider().complete(["openai/fake-model"], [{"role": "user", "content": "hi"}],
                                on_text=lambda _text: cancel.set(), cancel=cancel)
        _join_drains()
        assert _left_to_the_collector() == []
        result = Provider().complete(["openai/fake-model"],
                                     [{"role": "user", "content": "again"}])
        assert result.reply.text == "after the cancel"
    finally:
        gc.enable()
