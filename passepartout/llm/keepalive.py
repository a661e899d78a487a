"""Streamed model calls give their connection back to the pool.

The OpenAI SDK (2.x, under litellm for every OpenAI-compatible provider) stops reading
a stream at its ``data: [DONE]`` event and closes the response before the last bytes
of the chunked body (its terminating empty chunk) are read.  httpcore then cannot
reuse the connection and drops it, so every streamed call opened a new one: against
the fake server, 6 streamed calls made 6 connections where 6 unstreamed calls made
one.  Against a real provider that is a TCP and TLS handshake per turn.

:class:`KeepAliveTransport` wraps httpx's transport: as soon as a response yields
``[DONE]``, a daemon thread reads the few bytes left (64 KiB at most) and then
releases the connection, so closing never waits on the server.  litellm's own
OpenAI handler (see :mod:`passepartout.llm.tuning`) neither reads on after
``[DONE]`` nor closes the response: the same drain returns its connection.  A
stream abandoned before ``[DONE]`` (a cancelled turn) is closed at once, as before:
dropping the connection is what stops the provider generating.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx

log = logging.getLogger(__name__)

DRAIN_LIMIT = 64 * 1024
_DONE = b"[DONE]"


class _DrainOnClose(httpx.SyncByteStream):
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._pending: Iterator[bytes] | None = None
        self._tail = b""
        self._drainer: _Drainer | None = None

    def __iter__(self) -> Iterator[bytes]:
        self._pending = iter(self._inner)
        try:
            for chunk in self._pending:
                self._tail = (self._tail + chunk)[-64:]
                if _DONE in self._tail:
                    # The event stream is over: its last bytes are read in the background
                    # from now, so that a reader stopping here (litellm's own handler never
                    # reads on, nor closes) or closing here still returns the connection.
                    self._drainer = _Drainer(self._pending, self._inner)
                    yield chunk
                    # A reader that goes on gets what the drainer read, then the rest.
                    self._drainer.thread.join()
                    yield from self._drainer.read
                    if not self._drainer.finished:
                        yield from self._pending
                    self._pending = None
                    return
                yield chunk
        except GeneratorExit:
            # The reader was closed without closing the response (httpx's iter_raw
            # closes it only when read to its end): close it here, now.
            self.close()
            raise
        self._pending = None  # read to its end: nothing to drain

    def close(self) -> None:
        pending, self._pending = self._pending, None
        if self._drainer is not None:
            self._drainer.abandon()  # it closes when it is done
            return
        # Before [DONE] (a cancelled turn): dropping it stops the provider.  The
        # generators reading it end here, on this thread; left to the garbage collector
        # they would end on whichever thread it ran, and one inside httpcore's pool lock
        # (another call starting) would wait for that same lock for ever.
        if pending is not None:
            close = getattr(pending, "close", None)
            if callable(close):
                close()
        self._inner.close()


class _Drainer:
    """Reads what is left of a finished event stream (DRAIN_LIMIT at most), then
    closes it, which gives a fully read connection back to the pool."""

    def __init__(self, pending: Iterator[bytes], inner: Any) -> None:
        self._pending = pending
        self._inner = inner
        self._lock = threading.Lock()
        self._done = False
        self._abandoned = False
        self.read: list[bytes] = []
        self.finished = False  # read to its end
        self.thread = threading.Thread(target=self._run, name="llm-drain", daemon=True)
        self.thread.start()

    def abandon(self) -> None:
        """The reader closed the response: close it once the drain is over."""
        with self._lock:
            self._abandoned = True
            close = self._done and not self.finished
        if close:
            self._inner.close()

    def _run(self) -> None:
        size = 0
        try:
            for chunk in self._pending:
                self.read.append(chunk)
                size += len(chunk)
                if size > DRAIN_LIMIT:  # not the end of an event stream after all
                    break
            else:
                self.finished = True
        except Exception as err:  # the connection is dropped below; nothing is lost
            log.debug("draining a finished stream failed: %s", type(err).__name__)
            self.finished = True
        finally:
            with self._lock:
                self._done = True
                close = self.finished or self._abandoned
            if close:
                self._inner.close()


class KeepAliveTransport(httpx.BaseTransport):
    """httpx's own transport, whose finished event streams return their connection."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        response.stream = _DrainOnClose(response.stream)
        return response

    def close(self) -> None:
        self._inner.close()


def keepalive_client() -> httpx.Client:
    """The client litellm gives the OpenAI SDK: litellm's own settings (its SSL
    configuration, HTTP/2 when enabled, redirects followed) over the transport above."""
    from litellm.llms.custom_httpx.http_handler import get_ssl_configuration, http2_enabled

    transport = httpx.HTTPTransport(verify=get_ssl_configuration(), http2=http2_enabled())
    return httpx.Client(transport=KeepAliveTransport(transport), follow_redirects=True)


_handler: Any = None
_handler_lock = threading.Lock()


def openai_handler_client() -> Any | None:
    """The client for litellm's own OpenAI handler (``client=`` of a call whose
    provider is ``openai``): litellm's ``HTTPHandler`` over :func:`keepalive_client`,
    one per process; None when that handler is switched off (the OpenAI SDK, which
    takes ``litellm.client_session``, serves the call then)."""
    global _handler
    from litellm.secret_managers.main import get_secret_bool

    if not get_secret_bool("EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"):
        return None
    with _handler_lock:
        if _handler is None:
            from litellm.llms.custom_httpx.http_handler import HTTPHandler

            _handler = HTTPHandler(client=keepalive_client())
        return _handler

