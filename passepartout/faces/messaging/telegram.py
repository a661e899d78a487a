"""Telegram's Bot API, the four calls a face needs, over httpx.

Why httpx and not python-telegram-bot: the face needs ``getUpdates`` (long polling:
no public address, no webhook), ``sendMessage``, ``editMessageText`` and
``answerCallbackQuery``; httpx is already installed (litellm's transport) and does
them synchronously on the face's own thread, where python-telegram-bot would add a
dependency and an asyncio Application to host beside the daemon's threads.

The bot token is part of every URL (``/bot<TOKEN>/method``): it never appears in an
error of ours, and a filter on httpx's logger replaces it in the request lines httpx
logs, whatever the vault knows.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx

from passepartout.faces.messaging.boundary import pieces
from passepartout.faces.messaging.settings import TelegramSettings
from passepartout.faces.messaging.transport import Answer, Incoming, Message, TransportError

log = logging.getLogger(__name__)

POLL_SECONDS = 20  # getUpdates' long poll: the server answers at once when a message comes
MAX_TEXT = 4096  # Telegram's limit of a message's text
RETRY_MAX = 60.0
MAX_RATE_WAIT = 30.0  # a longer wait asked for a message: it is dropped (and logged)


class _HideToken(logging.Filter):
    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        if self.token in message:
            record.msg, record.args = message.replace(self.token, "[telegram token]"), None
        return True


class BotAPI:
    """A client of the Bot API for one bot."""

    def __init__(self, token: str, api: str, *, poll: float = POLL_SECONDS) -> None:
        self.poll = poll
        self._token = token
        self._http = httpx.Client(base_url=f"{api}/bot{token}/",
                                  timeout=httpx.Timeout(poll + 15.0, connect=10.0))
        logging.getLogger("httpx").addFilter(_HideToken(token))

    def close(self) -> None:
        self._http.close()

    def call(self, method: str, **params: Any) -> Any:
        """The ``result`` of ``method``; a :class:`TransportError` (its ``retry_after``
        set when Telegram asked to slow down) otherwise."""
        try:
            response = self._http.post(method, json=params)
            data = response.json()
        except httpx.HTTPError as err:
            raise TransportError(f"telegram {method}: {type(err).__name__}") from None
        except ValueError:
            raise TransportError(f"telegram {method}: not JSON (HTTP "
                                 f"{response.status_code})") from None
        if not isinstance(data, dict) or not data.get("ok"):
            description = data.get("description") if isinstance(data, dict) else None
            retry = (data.get("parameters") or {}).get("retry_after") \
                if isinstance(data, dict) else None
            raise TransportError(
                f"telegram {method}: {str(description or 'refused').replace(self._token, '')}",
                retry_after=retry if isinstance(retry, int | float) else None)
        return data.get("result")

    def updates(self, offset: int | None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"timeout": int(self.poll),
                                  "allowed_updates": ["message", "callback_query"]}
        if offset is not None:
            params["offset"] = offset
        result = self.call("getUpdates", **params)
        return [u for u in result if isinstance(u, dict)] if isinstance(result, list) else []


class TelegramTransport:
    """The Telegram face's side of the Bot API (see :class:`Transport`)."""

    name = "telegram"

    def __init__(self, settings: TelegramSettings, *, poll: float = POLL_SECONDS) -> None:
        self.settings = settings
        self.api = BotAPI(settings.token, settings.api, poll=poll)
        self._offset: int | None = None
        # In every button: a press of a button sent before this start answers nothing.
        self.nonce = secrets.token_hex(4)

    def close(self) -> None:
        self.api.close()

    def receive(self, stop: threading.Event) -> Iterator[Incoming]:
        failures = 0
        while not stop.is_set():
            try:
                updates = self.api.updates(self._offset)
            except TransportError as err:
                failures += 1
                wait = err.fields.get("retry_after") or min(2.0 ** failures, RETRY_MAX)
                log.warning("%s; trying again in %.0f s", err.message, wait)
                stop.wait(float(wait))
                continue
            failures = 0
            for update in updates:
                update_id = update.get("update_id")
                if isinstance(update_id, int):
                    self._offset = update_id + 1  # acknowledged at the next poll
                incoming = parse_update(update, self.nonce)
                if incoming is not None:
                    yield incoming

    def send(self, chat: str, text: str) -> None:
        for piece in pieces(text, MAX_TEXT):
            self._send(chat_id=int(chat), text=piece)

    def _send(self, **params: Any) -> None:
        """``sendMessage``, once more after the wait Telegram asks for when it limits
        the rate (a long reply's pieces come in a burst)."""
        try:
            self.api.call("sendMessage", **params)
        except TransportError as err:
            wait = err.fields.get("retry_after")
            if wait is None or wait > MAX_RATE_WAIT:
                raise
            time.sleep(float(wait))
            self.api.call("sendMessage", **params)

    def working(self, chat: str) -> None:
        try:
            self.api.call("sendChatAction", chat_id=int(chat), action="typing")
        except TransportError as err:
            log.info("typing not shown: %s", err.message)

    def ask(self, chat: str, number: int, question: str) -> None:
        data = f"approve:{self.nonce}:{number}"
        keyboard = [[{"text": "Allow", "callback_data": f"{data}:yes"},
                     {"text": "Deny", "callback_data": f"{data}:no"}]]
        self._send(chat_id=int(chat),
                   text=pieces(f"Approval {number}: {question}", MAX_TEXT)[0],
                   reply_markup={"inline_keyboard": keyboard})

    def answered(self, answer: Answer, note: str, *, edit: bool = True) -> None:
        if len(answer.ref) != 2:  # typed, not pressed: the relay replied in the chat
            return
        query_id, message_id = answer.ref
        try:
            self.api.call("answerCallbackQuery", callback_query_id=query_id,
                          text=note[:200])
            if not edit:
                return
            # The buttons go: the question shows its answer and cannot be pressed again.
            self.api.call("editMessageText", chat_id=int(answer.chat),
                          message_id=int(message_id), text=pieces(note, MAX_TEXT)[0])
        except TransportError as err:
            log.info("approval %d acknowledged only in part: %s", answer.number, err.message)


def parse_update(update: dict[str, Any], nonce: str) -> Incoming | None:
    """A message or a button press of one update; None for anything else.  A press of
    a button of another start (``nonce``) is an answer to approval 0: none waits."""
    message = update.get("message")
    if isinstance(message, dict):
        chat = _id(message.get("chat"))
        sender = _id(message.get("from"))
        if chat is None or sender is None:
            return None
        text = message.get("text")
        date = message.get("date")
        return Message(chat, sender, text if isinstance(text, str) else "",
                       float(date) if isinstance(date, int) and not isinstance(date, bool)
                       else None)
    query = update.get("callback_query")
    if isinstance(query, dict):
        sender = _id(query.get("from"))
        found = query.get("message")
        origin: dict[str, Any] = found if isinstance(found, dict) else {}
        chat = _id(origin.get("chat"))
        parts = str(query.get("data") or "").split(":")
        if (sender is None or chat is None or len(parts) != 4 or parts[0] != "approve"
                or not parts[2].isdigit() or parts[3] not in ("yes", "no")):
            return None
        number = int(parts[2]) if parts[1] == nonce else 0
        return Answer(chat, sender, number, parts[3] == "yes",
                      (str(query.get("id")), str(origin.get("message_id"))))
    return None


def _id(holder: Any) -> str | None:
    value = holder.get("id") if isinstance(holder, dict) else None
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None
