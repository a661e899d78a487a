"""The single place that calls ``litellm.completion``: lazy import, timeouts, streaming
with cancel, and the cascade through the fallback models.

litellm takes seconds to import, so it loads on first use or in a background thread
(:func:`warm_up`), never at import of this module; its remote cost-map fetch is turned
off before it loads.  A call runs in a worker thread so that a cancel (``C-c C-k``)
returns at once, even while the provider has not sent its first byte.
"""

from __future__ import annotations

import importlib
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from passepartout.errors import LLMError, PassepartoutError
from passepartout.llm.litellm_import import call_options, load_litellm
from passepartout.llm.translate import Message, Reply, StreamAccumulator, reply_from_response

log = logging.getLogger(__name__)

DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_READ_TIMEOUT = 120.0
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
_POLL = 0.05

_warming: threading.Thread | None = None
# Seconds after the warm-up starts that the model's own tokenizer loads: past a
# daemon's ready on a quiet machine (tokens.load_later says why).
TOKENIZER_DELAY = 5.0


def warm_up(model: str | None = None) -> threading.Thread:
    """Import and prime litellm in the background, so the first call does not wait for
    it; ``model``'s own tokenizer loads :data:`TOKENIZER_DELAY` seconds later (counting
    uses the estimate until then)."""
    global _warming
    thread = threading.Thread(target=_quiet_load, args=(model,), name="litellm-import",
                              daemon=True)
    thread.start()
    _warming = thread
    return thread


def wait_warm(timeout: float) -> bool:
    """Wait until the warm-up started by :func:`warm_up` is over (loaded and primed, or
    failed: the first call then says why); True at once when none was started."""
    thread = _warming
    if thread is None:
        return True
    thread.join(timeout)
    return not thread.is_alive()


def _quiet_load(model: str | None) -> None:
    from passepartout import startup
    from passepartout.llm import tokens

    tokens.load_later(model, TOKENIZER_DELAY)
    try:
        startup.mark("model layer warm-up started")
        lit = load_litellm()
        startup.mark("litellm imported")
        _prime(lit)
        startup.mark("litellm primed")
    except Exception as err:
        log.error("litellm failed to load: %s", err)


# litellm's first call imports some 300 more modules and loads its default tokenizer
# (about half a second): make it with a mock reply, which sends nothing, so that the
# person's first call does not wait for them; and make what that call makes before it
# sends (the HTTP handler's client with its TLS settings, our outbound filters).
# A model litellm counts with its default tokenizer (which a first call loads anyway):
# a mock reply's usage is counted, and a gpt-4o would load a second tokenizer for it.
_PRIME_MODEL = "openai/gpt-4"
_PRIME_TOOLS = [{"type": "function", "function": {
    "name": "noop", "description": "nothing", "parameters": {"type": "object", "properties": {}}}}]


def _prime(lit: ModuleType) -> None:
    started = time.perf_counter()
    stream = lit.completion(model=_PRIME_MODEL, api_key="unused", mock_response="ok",
                            messages=[{"role": "user", "content": "hi"}], tools=_PRIME_TOOLS,
                            stream=True, **call_options())
    for _ in stream:
        pass
    for name in ("litellm.llms.openai.openai", "passepartout.security.outbound",
                 "passepartout.security.vault"):
        try:
            importlib.import_module(name)
        except ImportError as err:
            log.debug("priming: %s", err)
    from passepartout.llm.keepalive import openai_handler_client

    openai_handler_client()
    log.info("litellm primed in %.1f s", time.perf_counter() - started)


def is_local(model: str) -> bool:
    """Whether ``model`` runs in this process (the ``local`` provider), so nothing sent
    to it leaves the machine."""
    return model.split("/", 1)[0] == "local" and "/" in model


def answered_by(used: Sequence[str] | None) -> tuple[str | None, bool | None]:
    """Which model answered a turn (its last call), and whether it is the local one."""
    if not used:
        return None, None
    model = str(used[-1])
    return model, is_local(model)


def provider_of(model: str) -> str:
    """The provider litellm would route ``model`` to (``openai``, ``anthropic``, ...)."""
    if "/" in model:
        return model.split("/", 1)[0]
    try:
        return str(load_litellm().get_llm_provider(model)[1])
    except Exception:
        return "unknown"


def classify(err: BaseException) -> tuple[bool, str]:
    """Whether the cascade may try the next model, and a one-line summary."""
    lit = load_litellm()
    status = getattr(err, "status_code", None)
    summary = _summary(err, status)
    retry_types = tuple(
        t for t in (
            getattr(lit, "Timeout", None), getattr(lit, "RateLimitError", None),
            getattr(lit, "APIConnectionError", None), getattr(lit, "InternalServerError", None),
            getattr(lit, "ServiceUnavailableError", None), getattr(lit, "BadGatewayError", None),
        ) if isinstance(t, type)
    )
    if isinstance(err, (*retry_types, TimeoutError, ConnectionError)):
        return True, summary
    if isinstance(status, int) and (status >= 500 or status in RETRYABLE_STATUS):
        return True, summary
    return False, summary


_NOISE = re.compile(r"^(?:\w*(?:Error|Exception|Timeout)\s*[:-]\s*)+")


def _summary(err: BaseException, status: Any) -> str:
    text = str(err).replace("\n", " ")
    for noise in ("litellm.", "OpenAIException - "):
        text = text.replace(noise, "")
    text = _NOISE.sub("", text).strip()
    if len(text) > 200:
        text = text[:197] + "..."
    head = f"HTTP {status}: " if isinstance(status, int) else ""
    return f"{head}{type(err).__name__}: {text}"


@dataclass
class Attempt:
    model: str
    error: str = ""
    seconds: float = 0.0


@dataclass
class CallResult:
    """A completed call: the reply, which model gave it, and what was tried first."""

    reply: Reply
    model: str
    provider: str
    attempts: list[Attempt] = field(default_factory=list)
    streamed: bool = False
    seconds: float = 0.0
    # A stream returned at its finish, while litellm was still closing it: the whole
    # reply (with the usage the provider reported) once it has.
    settled: Future[Reply] | None = None


class Cancelled(Exception):
    """The person cancelled the turn while the model was answering."""


BeforeAttempt = Callable[[str], None]
OnText = Callable[[str], None]
OnFallback = Callable[[str, str, str], None]


class Provider:
    """Calls models through litellm with timeouts, streaming, cancel and the cascade."""

    def __init__(
        self,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        max_tokens: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_tokens = max_tokens
        self.extra = dict(extra or {})

    def complete(
        self,
        models: Sequence[str],
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        stream: bool = True,
        on_text: OnText | None = None,
        cancel: threading.Event | None = None,
        before_attempt: BeforeAttempt | None = None,
        on_fallback: OnFallback | None = None,
    ) -> CallResult:
        """Try each model in turn; a timeout, 5xx, 429 or lost connection moves on.

        ``before_attempt(model)`` runs before anything is sent (the budget check) and
        may raise to stop the cascade.  Raises :class:`LLMError` when no model answers,
        :class:`Cancelled` when ``cancel`` is set first.
        """
        if not models:
            raise LLMError("no model to call", provider="", cascade=[], attempt_count=0)
        cancel = cancel or threading.Event()
        attempts: list[Attempt] = []
        for index, model in enumerate(models):
            if before_attempt is not None:
                before_attempt(model)
            started = time.perf_counter()
            try:
                reply, streamed, settled = self._call(model, messages, tools, stream, on_text,
                                                      cancel)
            except (Cancelled, PassepartoutError):  # BudgetError included
                raise
            except Exception as err:
                retryable, summary = classify(err)
                attempts.append(Attempt(model, summary, time.perf_counter() - started))
                log.warning("model %s failed: %s", model, summary)
                if not retryable:
                    raise _llm_error(models, attempts, final=True) from err
                if index + 1 < len(models) and on_fallback is not None:
                    on_fallback(model, models[index + 1], summary)
                continue
            elapsed = time.perf_counter() - started
            attempts.append(Attempt(model, "", elapsed))
            return CallResult(reply, model, provider_of(model), attempts, streamed, elapsed,
                              settled)
        raise _llm_error(models, attempts, final=False)

    # -- one model ------------------------------------------------------------------

    def _kwargs(self, model: str, messages: list[Message],
                tools: list[dict[str, Any]] | None, stream: bool) -> dict[str, Any]:
        import httpx

        from passepartout.security.outbound import outbound
        from passepartout.security.vault import mask_value

        # Text of a private subtree never leaves for a remote provider, whichever tool
        # or path brought it (the in-process local model may see it); secrets never do.
        masked = mask_value(messages) if is_local(model) else outbound(messages)
        kwargs: dict[str, Any] = {
            **call_options(),  # litellm's MCP gateway is not ours (see litellm_import)
            "model": model,
            # A secret the person pasted, or one in memory, never leaves for a provider.
            "messages": masked,
            "timeout": httpx.Timeout(self.read_timeout, connect=self.connect_timeout),
            "max_retries": 0,  # the cascade is ours; the SDK would retry twice with backoff
            # A provider without stream_options etc. still answers.  Per call, not
            # litellm's global, which would change every other litellm user in the process.
            "drop_params": True,
            "stream": stream,
            **self.extra,
        }
        if stream:
            kwargs["stream_options"] = {"include_usage": True}
        if provider_of(model) == "openai" and "client" not in kwargs:
            from passepartout.llm.keepalive import openai_handler_client

            if (client := openai_handler_client()) is not None:
                kwargs["client"] = client  # streams keep their connection
        if tools:
            kwargs["tools"] = tools
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        return kwargs

    def _call(
        self,
        model: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        stream: bool,
        on_text: OnText | None,
        cancel: threading.Event,
    ) -> tuple[Reply, bool, Future[Reply] | None]:
        lit = load_litellm()
        kwargs = self._kwargs(model, messages, tools, stream)
        handoff = _Handoff()
        stop = threading.Event()
        worker = threading.Thread(
            target=_produce, args=(lit, kwargs, handoff, stop), name=f"llm-{model}", daemon=True
        )
        worker.start()
        acc = handoff.acc
        held: tuple[str, Any] | None = None
        shown = False
        while True:
            try:
                kind, value = held or handoff.events.get(timeout=_POLL)
                held = None
            except queue.Empty:
                if cancel.is_set():
                    stop.set()
                    raise Cancelled(model) from None
                continue
            if kind == "chunk":
                text = acc.add(value)
                # After the first text, chunks that came meanwhile go on as one text: one
                # event, one frame to Emacs, one masking (a secret split between them is
                # masked whole too).
                while shown and (held := _next_now(handoff.events)) is not None \
                        and held[0] == "chunk":
                    text += acc.add(held[1])
                if text and on_text is not None:
                    shown = True
                    on_text(text)
                if cancel.is_set():
                    stop.set()
                    raise Cancelled(model)
                if acc.finished and held is None:
                    # Text and tool calls are whole: the turn goes on while litellm
                    # closes the stream (its usage, cost and logs: milliseconds of CPU).
                    held = handoff.detach()
                    if held is None:
                        return acc.reply(), True, handoff.rest
            elif kind == "whole":
                return reply_from_response(value), False, None
            elif kind == "error":
                raise value
            else:  # "end"
                return acc.reply(), True, None


class _Handoff:
    """What the worker reads, on its way to the caller; after :meth:`detach` the
    worker applies the rest of the stream itself and settles :attr:`rest`."""

    def __init__(self) -> None:
        self.events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.acc = StreamAccumulator()
        self.rest: Future[Reply] = Future()
        self._lock = threading.Lock()
        self._detached = False

    def put(self, kind: str, value: Any) -> None:
        """The worker's: one event ("chunk", "whole", "end" or "error")."""
        with self._lock:
            if not self._detached:
                self.events.put((kind, value))
                return
        if kind == "chunk":  # the caller has gone on: only this thread uses acc now
            self.acc.add(value)
        elif kind == "end":
            self.rest.set_result(self.acc.reply())
        elif kind == "error":
            self.rest.set_exception(value)

    def detach(self) -> tuple[str, Any] | None:
        """The caller's: take the chunks queued so far, then leave the rest to the
        worker.  Returns the stream's end or error instead when it is already queued."""
        with self._lock:
            while (item := _next_now(self.events)) is not None:
                if item[0] != "chunk":
                    return item
                self.acc.add(item[1])
            self._detached = True
            return None


def _next_now(events: queue.SimpleQueue[tuple[str, Any]]) -> tuple[str, Any] | None:
    try:
        return events.get_nowait()
    except queue.Empty:
        return None


def _produce(lit: ModuleType, kwargs: dict[str, Any], handoff: _Handoff,
             stop: threading.Event) -> None:
    """The worker: one litellm call, its chunks or its result handed on."""
    response: Any = None
    try:
        response = lit.completion(**kwargs)
        if not kwargs.get("stream"):
            handoff.put("whole", response)
            return
        for chunk in response:
            if stop.is_set():
                return
            handoff.put("chunk", chunk)
        handoff.put("end", None)
    except BaseException as err:  # handed to the caller's thread, which raises it
        handoff.put("error", err)
    finally:
        if response is not None and kwargs.get("stream"):
            close_stream(response)


def close_stream(response: Any) -> None:
    """Close a litellm stream here and now, read to its end or abandoned (best effort).

    litellm's own handler leaves the response's generators open after the last chunk;
    left to the garbage collector, they are closed on whatever thread it runs, and one
    that runs inside httpcore's pool lock (another call starting) waits for that same
    lock for ever.  An abandoned stream's connection is dropped, which stops the
    provider generating; a finished one's goes back to the pool (``keepalive``)."""
    stream = getattr(response, "completion_stream", None)
    # The generators first (closing one closes those it reads: the lines, the bytes, the
    # pool's stream), then whatever the SDK or handler offers to close the response.
    for owner, name in ((stream, "streaming_response"), (stream, "response_iterator"),
                        (stream, "close"), (stream, "http_response"), (stream, "response"),
                        (response, "close"), (response, "response")):
        target = getattr(owner, name, None) if owner is not None else None
        closer = target if name == "close" else getattr(target, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception as err:  # one already closed, or a handler of its own kind
                log.debug("closing a stream (%s): %s", name, err)


def _llm_error(models: Sequence[str], attempts: list[Attempt], *, final: bool) -> LLMError:
    tried = "; ".join(f"{a.model}: {a.error}" for a in attempts)
    last = attempts[-1].model if attempts else ""
    if final and len(attempts) < len(models):
        message = f"The model {last} failed and the error is not one to retry: {tried}"
    else:
        message = f"No model answered ({len(attempts)} attempts): {tried}"
    return LLMError(
        message,
        provider=provider_of(last) if last else "",
        cascade=list(models),
        attempt_count=len(attempts),
        attempts=[(a.model, a.error) for a in attempts],
    )
