"""Model servers the person runs on this machine: Ollama and llama.cpp's server.

An Ollama server answers ``GET /api/tags`` on port 11434 with the models it has
pulled; llama.cpp's ``llama-server`` answers ``GET /v1/models`` (or at least
``GET /health``) on port 8080 with the one model it serves. Each found server's
models are offered under the names litellm calls them by: ``ollama/<model>``
(litellm's Ollama provider) and ``llamafile/<model>`` (litellm's provider for an
OpenAI-protocol server on 127.0.0.1:8080, which llama.cpp's server is).

Where to look is where litellm will call: ``OLLAMA_API_BASE`` and
``LLAMAFILE_API_BASE`` when set (the environment or the config directory's .env),
else the default local ports; so what is offered is what answers when chosen.

Each probe is one small GET with a short timeout; an answer that is not the
protocol's (not JSON, too large, names that are not model names) counts as no
server, so nothing a local port says becomes more than a list of names.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass

OLLAMA_BASE = "http://127.0.0.1:11434"
LLAMACPP_BASE = "http://127.0.0.1:8080"
PROBE_TIMEOUT = 0.5  # seconds: a local server answers at once, or is not there
MAX_BYTES = 1 << 20  # a model list is small; more is not one
MAX_MODELS = 50
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


@dataclass(frozen=True)
class LocalServer:
    """A server found: its kind ("ollama" or "llama.cpp"), where, and its models
    under the names litellm calls them by."""

    kind: str
    base: str
    models: tuple[str, ...]

    @property
    def label(self) -> str:
        return {"ollama": "Ollama", "llama.cpp": "llama.cpp server"}[self.kind]

    def line(self) -> str:
        shown = ", ".join(self.models[:5]) + (" ..." if len(self.models) > 5 else "")
        return f"{self.label} at {self.base}: {shown or 'no model pulled yet'}"


def ollama_base() -> str:
    return (os.environ.get("OLLAMA_API_BASE") or OLLAMA_BASE).rstrip("/")


def llamacpp_base() -> str:
    base = (os.environ.get("LLAMAFILE_API_BASE") or LLAMACPP_BASE).rstrip("/")
    return base.removesuffix("/v1")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # a model server answers where it is asked, or not at all


# No proxy (a local port is asked directly, whatever http_proxy says), no redirect.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _get_json(url: str, timeout: float) -> object | None:
    """The JSON a GET of ``url`` answers with; None when nothing (or no JSON) does."""
    try:
        with _OPENER.open(url, timeout=timeout) as response:
            if response.status != 200:
                return None
            data = response.read(MAX_BYTES + 1)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    if len(data) > MAX_BYTES:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _names(items: object, key: str, prefix: str) -> tuple[str, ...] | None:
    """``prefix`` + each item's ``key``, for a list of objects naming models; None
    when ``items`` is not such a list. Names that are not plain model names are left
    out."""
    if not isinstance(items, list):
        return None
    found: list[str] = []
    for item in items:
        name = item.get(key) if isinstance(item, dict) else None
        if isinstance(name, str) and _NAME.fullmatch(name):
            found.append(prefix + name)
    return tuple(dict.fromkeys(found))[:MAX_MODELS]


def probe_ollama(base: str | None = None, timeout: float = PROBE_TIMEOUT) -> LocalServer | None:
    base = (base or ollama_base()).rstrip("/")
    if not base.startswith(("http://", "https://")):
        return None
    answer = _get_json(base + "/api/tags", timeout)
    models = _names(answer.get("models"), "name", "ollama/") if isinstance(answer, dict) else None
    return None if models is None else LocalServer("ollama", base, models)


def probe_llamacpp(base: str | None = None,
                   timeout: float = PROBE_TIMEOUT) -> LocalServer | None:
    base = (base or llamacpp_base()).rstrip("/").removesuffix("/v1")
    if not base.startswith(("http://", "https://")):
        return None
    answer = _get_json(base + "/v1/models", timeout)
    if isinstance(answer, dict):
        models = _names(answer.get("data"), "id", "llamafile/")
        if models is not None:
            return LocalServer("llama.cpp", base, models)
    health = _get_json(base + "/health", timeout)
    if isinstance(health, dict) and health.get("status") == "ok":
        # An older server without /v1/models serves one model, whatever it is called.
        return LocalServer("llama.cpp", base, ("llamafile/default",))
    return None


def detect(timeout: float = PROBE_TIMEOUT) -> list[LocalServer]:
    """The local model servers answering where litellm would call them."""
    found = [probe_ollama(timeout=timeout), probe_llamacpp(timeout=timeout)]
    return [s for s in found if s is not None]


def offered(servers: list[LocalServer]) -> list[str]:
    """Every model the servers offer, once each."""
    return list(dict.fromkeys(m for s in servers for m in s.models))
