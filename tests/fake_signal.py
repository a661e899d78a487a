"""A fake of signal-cli's JSON-RPC daemon in HTTP mode on 127.0.0.1, for the
messaging tests.

``POST /api/v1/rpc`` takes JSON-RPC 2.0 (``Content-Type: application/json``, as
signal-cli demands; ``send`` is recorded in :attr:`FakeSignal.sent`), ``GET
/api/v1/events`` streams Server-Sent Events (``id:``, ``event:receive``, ``data:``
the receive notification's params as JSON, a ``:`` keep-alive comment now and then,
resumed after ``Last-Event-ID``; without it, only events from then on),
``GET /api/v1/check`` answers 200.  The test acts
as a person with :meth:`FakeSignal.says`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ACCOUNT = "+15550000000"
KEEP_ALIVE = 1.0


@dataclass(frozen=True)
class SignalSent:
    recipient: str
    message: str
    account: str | None


class FakeSignal:
    def __init__(self, account: str = ACCOUNT) -> None:
        self.account = account
        self.sent: list[SignalSent] = []
        self.requests: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.streams = 0
        self._cond = threading.Condition()
        self._closing = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeSignal:
        self._thread.start()
        return self

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._server.shutdown()
        self._server.server_close()

    # -- people --------------------------------------------------------------------

    def says(self, number: str | None, text: str | None, *, uuid: str = "",
             group: bool = False, ago: float = 0.0) -> None:
        """A message from ``number`` (or ``uuid``), sent ``ago`` seconds before now."""
        envelope = self.envelope_for(number, text, uuid=uuid, group=group,
                                     sent_ms=int((time.time() - ago) * 1000))
        self._push({"envelope": envelope, "account": self.account})

    @staticmethod
    def envelope_for(number: str | None, text: str | None, *, uuid: str = "",
                     group: bool = False, sent_ms: int = 0) -> dict[str, Any]:
        """A receive event's envelope as signal-cli writes it."""
        data: dict[str, Any] = {"timestamp": sent_ms, "expiresInSeconds": 0,
                                "viewOnce": False, "mentions": [], "attachments": []}
        if text is not None:
            data["message"] = text
        if group:
            data["groupInfo"] = {"groupId": "R3JvdXA=", "type": "DELIVER"}
        return {"source": number or uuid, "sourceNumber": number,
                "sourceUuid": uuid or None, "sourceName": "Someone", "sourceDevice": 1,
                "timestamp": sent_ms, "dataMessage": data}

    def receipt(self, number: str) -> None:
        self._push({"envelope": {"source": number, "sourceNumber": number,
                                 "timestamp": 1, "receiptMessage": {"isDelivery": True}},
                    "account": self.account})

    def _push(self, params: dict[str, Any]) -> None:
        with self._cond:
            self.events.append(params)
            self._cond.notify_all()

    # -- what the bot did ----------------------------------------------------------

    def wait_sent(self, test: Callable[[SignalSent], bool],
                  timeout: float = 30.0) -> SignalSent:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for sent in self.sent:
                    if test(sent):
                        return sent
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no such message within {timeout:g} s; sent: "
                                         f"{self.sent}")
                self._cond.wait(left)

    def wait_streaming(self, count: int = 1, timeout: float = 60.0) -> None:
        """Wait until ``count`` connections to the events stream were made."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.streams < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no client of the events within {timeout:g} s")
                self._cond.wait(left)

    def to(self, recipient: str) -> list[SignalSent]:
        with self._cond:
            return [s for s in self.sent if s.recipient == recipient]

    # -- the endpoints -------------------------------------------------------------

    def rpc(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or "method" not in request:
            return {"jsonrpc": "2.0", "id": None,
                    "error": {"code": -32600, "message": "method field must be set"}}
        with self._cond:
            self.requests.append(request)
        params = request.get("params") or {}
        if request["method"] == "sendTyping":
            return {"jsonrpc": "2.0", "id": request.get("id"), "result": {}}
        if request["method"] != "send":
            return {"jsonrpc": "2.0", "id": request.get("id"),
                    "error": {"code": -32601, "message": "Method not implemented"}}
        if params.get("account") not in (None, self.account):
            return {"jsonrpc": "2.0", "id": request.get("id"),
                    "error": {"code": -32602, "message": "Specified account does not exist"}}
        recipients = params.get("recipient")
        recipients = recipients if isinstance(recipients, list) else [recipients]
        with self._cond:
            for recipient in recipients:
                self.sent.append(SignalSent(str(recipient), str(params.get("message")),
                                            params.get("account")))
            self._cond.notify_all()
        return {"jsonrpc": "2.0", "id": request.get("id"),
                "result": {"timestamp": int(time.time() * 1000)}}

    def stream(self, write: Callable[[bytes], None], last_id: str | None) -> None:
        """Write the events after ``last_id`` (all those kept when it is unknown, as
        signal-cli does; none of the past without it), then new ones as they come."""
        with self._cond:
            self.streams += 1
            self._cond.notify_all()
            if last_id is None:
                sent = len(self.events)
            elif last_id.isdigit() and int(last_id) <= len(self.events):
                sent = int(last_id)
            else:
                sent = 0
        while True:
            with self._cond:
                if sent >= len(self.events) and not self._closing:
                    self._cond.wait(KEEP_ALIVE)
                if self._closing:
                    return
                pending = list(enumerate(self.events))[sent:]
            if not pending:
                write(b":\n")
                continue
            for index, params in pending:
                write(f"id:{index + 1}\nevent:receive\ndata:{json.dumps(params)}\n\n"
                      .encode())
                sent = index + 1


def _handler(fake: FakeSignal) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if urlsplit(self.path).path != "/api/v1/rpc":
                self._empty(404)
                return
            if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                self._empty(415)
                return
            try:
                request = json.loads(raw)
            except ValueError:
                request = None
            data = json.dumps(fake.rpc(request)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/api/v1/check":
                self._empty(200)
                return
            if parts.path != "/api/v1/events":
                self._empty(404)
                return
            account = parse_qs(parts.query).get("account", [fake.account])[0]
            if account != fake.account:
                self._empty(400)
                return
            last = self.headers.get("Last-Event-ID")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def write(data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            try:
                fake.stream(write, last)
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass

        def _empty(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler

