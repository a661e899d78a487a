"""The HTTP side of the OpenAI-compatible face: ``/v1/models`` and
``/v1/chat/completions`` (plain or streamed as server-sent events), as a Starlette app.

Each request is one turn of the daemon, sent through this face's connection
(:class:`~passepartout.faces.face.Face`); the events of the turn become the reply: the
text, the tool calls the model made of the client's tools, and a word on what the gates
refused or left waiting as a Flight Plan.  A client that goes away cancels its turn.
Every error is in the protocol's shape, ``{"error": {"message", "type", "code"}}``.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from passepartout import protocol
from passepartout.faces.face import Face, Turn
from passepartout.faces.openai.conversation import (
    MODELS,
    BadRequest,
    Conversations,
    Request,
    TurnInput,
    read_request,
)
from passepartout.wire.client import DaemonError

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024 * 1024
POLL = 0.25  # how often a waiting turn looks whether its client is still there
OWNER = "passepartout"


def error(status: int, message: str, kind: str = "invalid_request_error",
          code: str | None = None, param: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": param,
                                   "code": code}}, status_code=status)


def unauthorized_body() -> bytes:
    return json.dumps({"error": {
        "message": "a valid bearer token is needed (Authorization: Bearer TOKEN; the token "
                   "is in the file `passepartout openai` printed)",
        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}).encode()


@dataclass
class Outcome:
    """What a turn gave, gathered from its events."""

    text: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: protocol.TurnError | None = None
    model: str | None = None
    cancelled: bool = False
    gone: str | None = None


class Endpoint:
    """The app's state: the daemon's face and the conversations it started."""

    def __init__(self, face_factory: Callable[[], Face], default_client: str = "") -> None:
        self._face_factory = face_factory
        self._face: Face | None = None
        self.conversations = Conversations()
        self.default_client = default_client
        self._before: dict[str, dict[str, Any]] = {}  # a turn's session usage at its start

    def face(self) -> Face:
        """The connection to the daemon, made again when the daemon restarted."""
        if self._face is None or self._face.closed:
            self._face = self._face_factory()
        return self._face

    def close(self) -> None:
        if self._face is not None:
            self._face.close()

    # -- routes -----------------------------------------------------------------------

    async def models(self, http: HttpRequest) -> Response:
        created = int(time.time())
        return JSONResponse({"object": "list", "data": [
            {"id": m, "object": "model", "created": created, "owned_by": OWNER}
            for m in MODELS]})

    async def chat(self, http: HttpRequest) -> Response:
        try:
            raw = await http.body()
            if len(raw) > MAX_BODY:
                raise BadRequest(f"the body is larger than {MAX_BODY} bytes", status=413)
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise BadRequest(f"the body is not JSON: {err}") from None
            request = read_request(body)
            turn_input = self.conversations.turn(request)
        except BadRequest as err:
            return error(err.status, err.message, code=err.code, param=err.param)
        client = _client_name(http, request, self.default_client)
        try:
            turn = await anyio.to_thread.run_sync(self._start, request, turn_input, client)
        except DaemonError as err:
            if err.kind == "bad-arguments":  # the daemon's own check of the turn's fields
                return error(400, err.message.removeprefix("chat-send: "), code=err.kind)
            log.warning("a turn could not start: %s", err.message)
            return error(503, f"the agent cannot take the request: {err.message}",
                         "server_error", "daemon_unavailable")
        reply_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        if request.stream:
            return TurnStream(self._stream(http, request, turn_input, turn, reply_id), turn)
        outcome = await self._collect(http, turn, None)
        if outcome.gone is not None:
            return error(503, f"the agent went away: {outcome.gone}", "server_error",
                         "daemon_unavailable")
        if outcome.error is not None and not outcome.text:
            return _turn_error(outcome.error)
        usage = await self._usage(turn, outcome)
        self._remember(request, turn_input, outcome)
        message: dict[str, Any] = {"role": "assistant", "content": _content(outcome)}
        if outcome.calls:
            message["tool_calls"] = outcome.calls
        return JSONResponse({
            "id": reply_id, "object": "chat.completion", "created": int(time.time()),
            "model": request.model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if outcome.calls else "stop"}],
            "usage": usage})

    # -- one turn ---------------------------------------------------------------------

    def _start(self, request: Request, turn_input: TurnInput, client: str) -> Turn:
        context: dict[str, Any] = {"client": client}
        if request.tier:
            context["tier"] = request.tier
        if turn_input.system:
            context["system"] = turn_input.system
        if turn_input.new and turn_input.history:
            context["client-history"] = json.dumps(turn_input.history, ensure_ascii=False)
        if request.tools and not request.tool_choice_none:
            context["client-tools"] = json.dumps([t.schema for t in request.tools],
                                                 ensure_ascii=False)
        if turn_input.tool_results:
            context["client-results"] = json.dumps(turn_input.tool_results,
                                                   ensure_ascii=False)
        face = self.face()
        before = face.usage(turn_input.session).get("session") or {}
        turn = face.send(turn_input.session, turn_input.text, context=context)
        self._before[turn.turn] = before
        return turn

    async def _events(self, http: HttpRequest, turn: Turn) -> AsyncIterator[protocol.Event]:
        """The turn's events; the turn is cancelled when the client disconnects."""
        try:
            looked = time.monotonic()
            while not turn.finished:
                event = await anyio.to_thread.run_sync(turn.next, POLL)
                if event is None or time.monotonic() - looked > POLL:
                    looked = time.monotonic()
                    if await http.is_disconnected():
                        break
                if event is not None:
                    yield event
        finally:
            await _cancel_unfinished(turn)

    async def _collect(self, http: HttpRequest, turn: Turn,
                       on_text: Callable[[str], Any] | None) -> Outcome:
        outcome = Outcome()
        async for event in self._events(http, turn):
            _gather(outcome, event)
        return outcome

    async def _stream(self, http: HttpRequest, request: Request, turn_input: TurnInput,
                      turn: Turn, reply_id: str) -> AsyncIterator[bytes]:
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return _sse({"id": reply_id, "object": "chat.completion.chunk", "created": created,
                         "model": request.model,
                         "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                      "finish_reason": finish}]})

        outcome = Outcome()
        yield chunk({"role": "assistant", "content": ""})
        async for event in self._events(http, turn):
            shown = len(outcome.text)
            _gather(outcome, event)
            if isinstance(event, protocol.Chunk) and len(outcome.text) > shown:
                yield chunk({"content": event.text})
            elif isinstance(event, protocol.ToolRequested):
                index = len(outcome.calls) - 1
                yield chunk({"tool_calls": [{"index": index, **outcome.calls[-1]}]})
        if outcome.gone is not None:
            yield _sse({"error": {"message": f"the agent went away: {outcome.gone}",
                                  "type": "server_error", "code": "daemon_unavailable"}})
            return
        if outcome.error is not None:
            yield chunk({"content": _error_text(outcome.error)})
        elif outcome.notes:
            yield chunk({"content": "\n\n" + "\n".join(outcome.notes)})
        yield chunk({}, "tool_calls" if outcome.calls else "stop")
        if request.include_usage:
            usage = await self._usage(turn, outcome)
            yield _sse({"id": reply_id, "object": "chat.completion.chunk", "created": created,
                        "model": request.model, "choices": [], "usage": usage})
        self._remember(request, turn_input, outcome)
        yield b"data: [DONE]\n\n"

    async def _usage(self, turn: Turn, outcome: Outcome) -> dict[str, int]:
        """The tokens the turn's model calls used (the session's sums before and after)."""
        def read() -> dict[str, Any]:
            return self.face().usage(turn.session).get("session") or {}

        try:
            after = await anyio.to_thread.run_sync(read)
        except DaemonError:
            after = {}
        before = self._before.pop(turn.turn, {})
        prompt = max(0, int(after.get("tokens-in") or 0) - int(before.get("tokens-in") or 0))
        completion = max(0, int(after.get("tokens-out") or 0)
                         - int(before.get("tokens-out") or 0))
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    def _remember(self, request: Request, turn_input: TurnInput, outcome: Outcome) -> None:
        """The conversation with this reply, so the client's next request finds it."""
        if outcome.cancelled or outcome.gone is not None:
            return
        reply: dict[str, Any] = {"role": "assistant", "content": _content(outcome) or ""}
        if outcome.calls:
            reply["tool_calls"] = outcome.calls
        self.conversations.remember([*request.messages, reply], turn_input.session)


async def _cancel_unfinished(turn: Turn) -> None:
    """The client left before the turn ended: cancel it in the daemon."""
    if turn.finished or getattr(turn, "_cancelled", False):
        return
    turn._cancelled = True  # type: ignore[attr-defined]
    log.info("the client left: turn %s cancelled", turn.turn)
    with anyio.CancelScope(shield=True):
        try:
            await anyio.to_thread.run_sync(turn.cancel)
        except DaemonError as err:
            log.warning("cancelling turn %s: %s", turn.turn, err.message)


class TurnStream(StreamingResponse):
    """Server-sent events of one turn; the turn is cancelled when the client goes away
    (the send fails or the client disconnects), whatever the generator's fate."""

    def __init__(self, content: AsyncIterator[bytes], turn: Turn) -> None:
        super().__init__(content, media_type="text/event-stream",
                         headers={"cache-control": "no-cache"})
        self.turn = turn
        self._content = content

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                await _cancel_unfinished(self.turn)
                aclose = getattr(self._content, "aclose", None)
                if aclose is not None:
                    await aclose()


def _gather(outcome: Outcome, event: protocol.Event) -> None:
    match event:
        case protocol.Chunk(text=text):
            if text:
                outcome.text.append(text)
        case protocol.ToolRequested(name=name, arguments=arguments, call_id=call_id):
            outcome.calls.append({"id": call_id or f"call_{uuid.uuid4().hex[:24]}",
                                  "type": "function",
                                  "function": {"name": name, "arguments": arguments}})
        case protocol.ToolDenied(name=name, reason=reason):
            outcome.notes.append(f"[not done: {name}: {reason or 'refused'}]")
        case protocol.TurnError():
            outcome.error = event
        case protocol.Done(cancelled=cancelled, model=model):
            outcome.cancelled, outcome.model = cancelled, model
        case protocol.Disconnected(reason=reason):
            outcome.gone = reason
        case _:
            pass


def _content(outcome: Outcome) -> str | None:
    text = "".join(outcome.text)
    if outcome.error is not None:
        text = (text + "\n\n" if text else "") + _error_text(outcome.error)
    elif outcome.notes:
        text = (text + "\n\n" if text else "") + "\n".join(outcome.notes)
    return text or (None if outcome.calls else "")


def _error_text(err: protocol.TurnError) -> str:
    return f"[{err.kind}: {err.message}]"


_STATUS = {"budget-error": 429, "refused": 400, "bad-arguments": 400, "boot-error": 503}


def _turn_error(err: protocol.TurnError) -> JSONResponse:
    status = _STATUS.get(err.kind, 500)
    kind = ("insufficient_quota" if status == 429 else
            "invalid_request_error" if status == 400 else "server_error")
    return error(status, err.message, kind, err.kind)


def _sse(value: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(value, ensure_ascii=False).encode() + b"\n\n"


def _client_name(http: HttpRequest, request: Request, default: str) -> str:
    """Who sent the request, for the audit: ``X-Client-Name``, else the body's ``user``,
    else the User-Agent's product, else the default."""
    named = http.headers.get("x-client-name") or request.user
    if not named:
        agent = http.headers.get("user-agent") or ""
        named = agent.split(" ", 1)[0] if agent else ""
    name = "".join(c for c in (named or default or "an OpenAI client")
                   if c.isprintable())[:80]
    return name or "an OpenAI client"


def build_app(endpoint: Endpoint) -> Starlette:
    async def not_found(http: HttpRequest, exc: Exception) -> Response:
        return error(404, f"no such endpoint: {http.method} {http.url.path}", code="not_found")

    async def not_allowed(http: HttpRequest, exc: Exception) -> Response:
        return error(405, f"{http.method} is not served at {http.url.path}",
                     code="method_not_allowed")

    async def failed(http: HttpRequest, exc: Exception) -> Response:
        log.exception("a request failed")
        return error(500, "the endpoint failed on this request (see its log)",
                     "server_error", "internal_error")

    return Starlette(routes=[
        Route("/v1/models", endpoint.models, methods=["GET"]),
        Route("/v1/chat/completions", endpoint.chat, methods=["POST"]),
    ], exception_handlers={404: not_found, 405: not_allowed, 500: failed,
                           Exception: failed})
