"""Streamed model calls give their connection back to the pool.

The OpenAI SDK (2.x, under litellm for every OpenAI-compatible provider) stops reading
a stream at its ``data: [DONE]`` event and closes the response before the last bytes
of the chunked body (its terminating empty chunk) are read.  httpcore then cannot
reuse the connection and drops it, so every streamed call opened a new one: against
the fake server, 6 streamed calls made 6 connections where 6 unstreamed calls made
one.  Against a real provider that is a TCP and TLS handshake per turn.

:class:`KeepAliveTransport` wraps httpx's transport: when a response that has just
yielded ``[DONE]`` is closed unread to its end, a daemon thread reads the few bytes
left (64 KiB at most) and then releases the connection, so closing never waits on
the server.  A stream abandoned before ``[DONE]`` (a cancelled turn) is closed at
once, as before: dropping the connection is what stops the provider generating.
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

    def __iter__(self) -> Iterator[bytes]:
        self._pending = iter(self._inner)
        for chunk in self._pending:
            self._tail = (self._tail + chunk)[-64:]
            yield chunk
        self._pending = None  # read to its end: nothing to drain

    def close(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None or _DONE not in self._tail:
            self._inner.close()
            return
        threading.Thread(target=self._drain, args=(pending,), name="llm-drain",
                         daemon=True).start()

    def _drain(self, pending: Iterator[bytes]) -> None:
        read = 0
        try:
            for chunk in pending:
                read += len(chunk)
                if read > DRAIN_LIMIT:  # not the end of an event stream after all
                    break
        except Exception as err:  # the connection is dropped below; nothing is lost
            log.debug("draining a finished stream failed: %s", type(err).__name__)
        finally:
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
