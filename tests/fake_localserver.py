"""Local model servers on 127.0.0.1 for tests: Ollama's and llama.cpp's model lists.

    with FakeLocalServer("ollama", ["llama3.2:latest"]) as fake:
        fake.base     # http://127.0.0.1:<port>; set OLLAMA_API_BASE to it
    with FakeLocalServer("llama.cpp", ["qwen2.5-0.5b"]) as fake: ...
    FakeLocalServer("llama.cpp", [], health_only=True)   # an older llama-server
    FakeLocalServer("ollama", body=b"<html>")             # something else on the port

Ollama answers ``GET /api/tags`` with ``{"models": [{"name": ...}, ...]}``; llama.cpp's
server ``GET /v1/models`` with ``{"object": "list", "data": [{"id": ...}]}`` and
``GET /health`` with ``{"status": "ok"}``. Anything else is a 404. ``paths`` records
what was asked.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLocalServer:
    def __init__(self, kind: str, models: list[str] | None = None, *,
                 health_only: bool = False, body: bytes | None = None) -> None:
        if kind not in ("ollama", "llama.cpp"):
            raise ValueError(f"no such kind of server: {kind!r}")
        self.kind = kind
        self.models = list(models or [])
        self.health_only = health_only
        self.body = body
        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, path: str) -> Any:
        if self.kind == "ollama" and path == "/api/tags":
            return {"models": [{"name": m, "model": m, "size": 1} for m in self.models]}
        if self.kind == "llama.cpp" and path == "/v1/models" and not self.health_only:
            return {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
        if self.kind == "llama.cpp" and path == "/health":
            return {"status": "ok"}
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.paths.append(self.path)
                found = fake.answer(self.path)
                if found is None and fake.body is None:
                    self.send_error(404)
                    return
                data = fake.body if fake.body is not None else json.dumps(found).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def __enter__(self) -> FakeLocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)
        self._server.server_close()
