"""Signal through signal-cli's JSON-RPC daemon in HTTP mode (``signal-cli -a NUMBER
daemon --http 127.0.0.1:8080``): messages are sent by ``POST /api/v1/rpc``
(JSON-RPC 2.0, method ``send``), and received as the Server-Sent Events of
``GET /api/v1/events`` (``event:receive``, ``data:`` the envelope as JSON), resumed
after a dropped connection with ``Last-Event-ID``.

Signal has no buttons: an approval is a numbered question, answered ``yes N`` or
``no N`` (read by the relay).  Only one-to-one messages count: a group's are ignored.
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx

from passepartout.faces.messaging.boundary import pieces
from passepartout.faces.messaging.settings import SignalSettings
from passepartout.faces.messaging.transport import Answer, Incoming, Message, TransportError

log = logging.getLogger(__name__)

MAX_TEXT = 2000  # longer texts go as an attachment in Signal's apps: cut them instead
READ_TIMEOUT = 60.0  # signal-cli sends a keep-alive comment every 15 s
RETRY_MAX = 60.0


class SignalRPC:
    """signal-cli's HTTP endpoints for one account."""

    def __init__(self, url: str, account: str) -> None:
        self.account = account
        self._ids = itertools.count(1)
        self._http = httpx.Client(base_url=url,
                                  timeout=httpx.Timeout(30.0, connect=10.0))
        self.last_event_id: str | None = None

    def close(self) -> None:
        self._http.close()

    def call(self, method: str, **params: Any) -> Any:
        request = {"jsonrpc": "2.0", "method": method, "id": next(self._ids),
                   "params": {"account": self.account, **params}}
        try:
            response = self._http.post("/api/v1/rpc", json=request)
            data = response.json()
        except httpx.HTTPError as err:
            raise TransportError(f"signal-cli {method}: {type(err).__name__}") from None
        except ValueError:
            raise TransportError(f"signal-cli {method}: not JSON (HTTP "
                                 f"{response.status_code})") from None
        if not isinstance(data, dict):
            raise TransportError(f"signal-cli {method}: not a JSON-RPC response")
        error = data.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else error
            raise TransportError(f"signal-cli {method}: {message}")
        return data.get("result")

    def events(self) -> Iterator[dict[str, Any]]:
        """The receive events of one connection to the stream, until it drops."""
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id:
            headers["Last-Event-ID"] = self.last_event_id
        timeout = httpx.Timeout(READ_TIMEOUT, connect=10.0)
        try:
            with self._http.stream("GET", "/api/v1/events", params={"account": self.account},
                                   headers=headers, timeout=timeout) as response:
                if response.status_code != 200:
                    raise TransportError(f"signal-cli events: HTTP {response.status_code}")
                yield from _sse(response.iter_lines(), self)
        except httpx.HTTPError as err:
            raise TransportError(f"signal-cli events: {type(err).__name__}") from None


def _sse(lines: Iterator[str], rpc: SignalRPC) -> Iterator[dict[str, Any]]:
    """Server-Sent Events: ``field:value`` lines, a blank line ends an event."""
    kind, event_id = "", None
    data: list[str] = []
    for line in lines:
        if line == "":
            if event_id is not None:  # first: an event handled is never asked for again
                rpc.last_event_id = event_id
            if data and kind in ("", "receive"):
                try:
                    value = json.loads("\n".join(data))
                except ValueError:
                    log.warning("signal-cli sent an event that is not JSON")
                    value = None
                if isinstance(value, dict):
                    yield value
            kind, data, event_id = "", [], None
            continue
        if line.startswith(":"):
            continue  # a keep-alive comment
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            kind = value
        elif name == "id":
            event_id = value


class SignalTransport:
    """The Signal face's side of signal-cli (see :class:`Transport`)."""

    name = "signal"

    def __init__(self, settings: SignalSettings) -> None:
        self.settings = settings
        self.rpc = SignalRPC(settings.url, settings.account)

    def close(self) -> None:
        self.rpc.close()

    def receive(self, stop: threading.Event) -> Iterator[Incoming]:
        failures = 0
        while not stop.is_set():
            try:
                for event in self.rpc.events():
                    failures = 0
                    incoming = parse_event(event, self.settings.allowed)
                    if incoming is not None:
                        yield incoming
                    if stop.is_set():
                        return
                failures += 1
            except TransportError as err:
                failures += 1
                log.warning("%s; connecting again", err.message)
            stop.wait(min(0.5 * 2.0 ** failures, RETRY_MAX))

    def send(self, chat: str, text: str) -> None:
        for piece in pieces(text, MAX_TEXT):
            self.rpc.call("send", recipient=[chat], message=piece)

    def working(self, chat: str) -> None:
        try:
            self.rpc.call("sendTyping", recipient=[chat])
        except TransportError as err:
            log.info("typing not shown: %s", err.message)

    def ask(self, chat: str, number: int, question: str) -> None:
        text = pieces(f"Approval {number}: {question}", MAX_TEXT - 60)[0]
        self.send(chat, f"{text}\nAnswer \"yes {number}\" to allow it, "
                        f"\"no {number}\" to refuse it.")

    def answered(self, answer: Answer, note: str, *, edit: bool = True) -> None:
        return  # no buttons: the relay says the outcome in the chat


def parse_event(event: dict[str, Any], allowed: frozenset[str]) -> Incoming | None:
    """The one-to-one text message of a receive event; None for anything else (receipts,
    typing, sync and group messages).  The sender is named as ``allowed`` names it:
    by number, or by ACI when the number is hidden or the ACI is what is listed."""
    found = event.get("params")
    params: dict[str, Any] = found if isinstance(found, dict) else event
    if isinstance(params.get("result"), dict):  # a subscription's wrapping
        params = params["result"]
    envelope = params.get("envelope")
    if not isinstance(envelope, dict):
        return None
    data = envelope.get("dataMessage")
    if not isinstance(data, dict) or "groupInfo" in data or "groupV2" in data:
        return None
    number = envelope.get("sourceNumber") or envelope.get("source")
    aci = envelope.get("sourceUuid")
    names = [str(n) for n in (number, aci) if isinstance(n, str) and n]
    if not names:
        return None
    sender = next((n for n in names if n in allowed), names[0])
    text = data.get("message")
    stamp = data.get("timestamp") or envelope.get("timestamp")  # milliseconds
    return Message(sender, sender, text if isinstance(text, str) else "",
                   stamp / 1000.0 if isinstance(stamp, int) and not isinstance(stamp, bool)
                   else None)
