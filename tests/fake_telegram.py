"""A fake of Telegram's Bot API on 127.0.0.1, for the messaging tests.

It serves ``POST /bot<TOKEN>/<method>`` for the calls the face makes (``getUpdates``
with its long poll and offset, ``sendMessage``, ``editMessageText``,
``answerCallbackQuery``), answers 401 for another token, and lets the test act as
people: :meth:`FakeTelegram.says` (a message in a chat), :meth:`FakeTelegram.press`
(a button under a message the bot sent).  What the bot sent is kept in
:attr:`FakeTelegram.sent`; :meth:`FakeTelegram.wait_sent` waits for a message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "123456789:AAEfakeTOKENfakeTOKENfakeTOKEN_abcdef"
MAX_POLL = 5.0  # the fake holds a long poll at most this long


@dataclass
class Sent:
    """A message the bot sent (its text as edited last)."""

    message_id: int
    chat_id: int
    text: str
    buttons: list[dict[str, Any]] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)
    offered: list[dict[str, Any]] = field(default_factory=list)  # the buttons at first

    def __post_init__(self) -> None:
        self.offered = list(self.buttons)


class FakeTelegram:
    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.sent: list[Sent] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._updates: list[dict[str, Any]] = []
        self._next_update = 1000
        self._next_message = 1
        self._cond = threading.Condition()
        self.polls = 0
        self._limited: dict[str, int] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeTelegram:
        self._thread.start()
        return self

    def close(self) -> None:
        with self._cond:
            self._cond.notify_all()
        self._server.shutdown()
        self._server.server_close()

    # -- people --------------------------------------------------------------------

    def says(self, chat: int, text: str | None, *, sender: int | None = None,
             ago: float = 0.0) -> None:
        """A message in ``chat`` (a private chat unless ``sender`` differs), sent
        ``ago`` seconds before now."""
        sender = chat if sender is None else sender
        message: dict[str, Any] = {
            "message_id": 10_000 + self._next_update, "date": int(time.time() - ago),
            "chat": {"id": chat, "type": "private" if chat == sender else "group"},
            "from": {"id": sender, "is_bot": False, "first_name": "Someone"}}
        if text is not None:
            message["text"] = text
        self._push({"message": message})

    def press(self, sent: Sent, label: str, *, sender: int | None = None) -> None:
        """A press of the button ``label`` under ``sent`` (by ``sender``, default the
        chat's person); a button since removed is pressed as a late client would."""
        button = next(b for b in sent.offered if b["text"] == label)
        self._push({"callback_query": {
            "id": f"q{self._next_update}", "data": button["callback_data"],
            "from": {"id": sent.chat_id if sender is None else sender, "is_bot": False,
                     "first_name": "Someone"},
            "message": {"message_id": sent.message_id, "chat": {"id": sent.chat_id},
                        "text": sent.text}}})

    def _push(self, update: dict[str, Any]) -> None:
        with self._cond:
            update["update_id"] = self._next_update
            self._next_update += 1
            self._updates.append(update)
            self._cond.notify_all()

    # -- what the bot did ----------------------------------------------------------

    def wait_sent(self, test: Callable[[Sent], bool], timeout: float = 30.0) -> Sent:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for sent in self.sent:
                    if test(sent):
                        return sent
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no such message within {timeout:g} s; sent: "
                                         f"{[(s.chat_id, s.text) for s in self.sent]}")
                self._cond.wait(left)

    def wait_call(self, method: str, test: Callable[[dict[str, Any]], bool],
                  timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for name, params in self.calls:
                    if name == method and test(params):
                        return params
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {method} within {timeout:g} s")
                self._cond.wait(left)

    def to(self, chat: int) -> list[Sent]:
        with self._cond:
            return [s for s in self.sent if s.chat_id == chat]

    # -- the API -------------------------------------------------------------------

    def limit_next(self, method: str, retry_after: int = 1) -> None:
        """The next call of ``method`` gets 429 Too Many Requests."""
        with self._cond:
            self._limited[method] = retry_after

    def api(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._cond:
            self.calls.append((method, params))
            self._cond.notify_all()
            retry_after = self._limited.pop(method, None)
        if retry_after is not None:
            return 429, {"ok": False, "error_code": 429,
                         "description": f"Too Many Requests: retry after {retry_after}",
                         "parameters": {"retry_after": retry_after}}
        if method == "getUpdates":
            return 200, {"ok": True, "result": self._get_updates(params)}
        if method == "sendMessage":
            with self._cond:
                sent = Sent(self._next_message, int(params["chat_id"]), str(params["text"]),
                            [b for row in (params.get("reply_markup") or {})
                             .get("inline_keyboard", []) for b in row])
                self._next_message += 1
                self.sent.append(sent)
                self._cond.notify_all()
            return 200, {"ok": True, "result": {"message_id": sent.message_id,
                                                "chat": {"id": sent.chat_id},
                                                "text": sent.text}}
        if method == "editMessageText":
            with self._cond:
                for sent in self.sent:
                    if (sent.message_id == int(params["message_id"])
                            and sent.chat_id == int(params["chat_id"])):
                        sent.edits.append(sent.text)
                        sent.text, sent.buttons = str(params["text"]), []
                        self._cond.notify_all()
                        return 200, {"ok": True, "result": {"message_id": sent.message_id}}
            return 400, {"ok": False, "error_code": 400,
                         "description": "Bad Request: message to edit not found"}
        if method == "sendChatAction":
            return 200, {"ok": True, "result": params.get("action") == "typing"}
        if method == "answerCallbackQuery":
            return 200, {"ok": True, "result": True}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = params.get("offset")
        timeout = min(float(params.get("timeout") or 0), MAX_POLL)
        deadline = time.monotonic() + timeout
        with self._cond:
            self.polls += 1
            if isinstance(offset, int):  # confirmed: never sent again
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
            while not self._updates and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return list(self._updates)


def _handler(fake: FakeTelegram) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            prefix = f"/bot{fake.token}/"
            if not self.path.startswith(prefix):
                self._json(401, {"ok": False, "error_code": 401,
                                 "description": "Unauthorized"})
                return
            try:
                params = json.loads(raw or b"{}")
            except ValueError:
                self._json(400, {"ok": False, "error_code": 400,
                                 "description": "Bad Request: not JSON"})
                return
            self._json(*fake.api(self.path[len(prefix):], params))

        def _json(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler

