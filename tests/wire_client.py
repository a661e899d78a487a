"""A raw-socket EPC client and a server launcher, for the wire tests and the benchmark.

The client speaks the frames by hand (six hex digits, then the s-expression) so that the
tests can also send what no well-behaved client would.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.signals import Symbol
from passepartout.wire.frames import frame, read_payload

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
# Provider keys must never reach a test server: no test may use the network.
_SCRUBBED = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MISTRAL_API_KEY",
             "DEEPSEEK_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "OPENAI_BASE_URL")


class Closed(Exception):
    """The server closed the connection."""


@dataclass
class WireClient:
    port: int
    timeout: float = 10.0
    attachments: bool = False  # send long strings as attachments
    sock: socket.socket = field(init=False)
    callbacks: list[tuple[str, list[Any]]] = field(default_factory=list)
    replies: list[list[Any]] = field(default_factory=list)
    _buf: bytes = b""
    _uid: int = 0

    def __post_init__(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)

    def close(self) -> None:
        self.sock.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def call(self, method: str, *args: Any) -> int:
        self._uid += 1
        self.send_raw(frame([Symbol("call"), self._uid, Symbol(method), list(args)],
                            attachments=self.attachments))
        return self._uid

    def _fill(self, n: int) -> None:
        while len(self._buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise Closed(f"closed with {len(self._buf)} of {n} bytes read")
            self._buf += chunk

    def read_message(self) -> list[Any]:
        """One whole frame (a timeout leaves a partly read frame in the buffer)."""
        self._fill(6)
        length = int(self._buf[:6], 16)
        self._fill(6 + length)
        data, self._buf = self._buf[6:6 + length], self._buf[6 + length:]
        return read_payload(data)  # type: ignore[no-any-return]

    def read_one(self) -> None:
        """Read one message: callbacks are answered and kept, the rest kept as replies."""
        message = self.read_message()
        if message[0] == "call":
            uid, name, args = message[1], str(message[2]), message[3] or []
            self.callbacks.append((name, args))
            self.send_raw(frame([Symbol("return"), uid, None]))
        else:
            self.replies.append(message)

    def request(self, method: str, *args: Any) -> tuple[str, Any]:
        """Call and wait for this call's answer: ("return" | "return-error" | ..., value)."""
        uid = self.call(method, *args)
        while True:
            for i, reply in enumerate(self.replies):
                if reply[1] == uid or reply[1] is None:
                    del self.replies[i]
                    return str(reply[0]), reply[2] if len(reply) > 2 else None
            self.read_one()

    def ok(self, method: str, *args: Any) -> Any:
        kind, value = self.request(method, *args)
        assert kind == "return", (method, kind, value)
        return value

    def hello(self, token: str, client: list[Any] | None = None) -> tuple[str, Any]:
        return self.request("hello", token, client)

    def wait_callback(self, name: str, timeout: float = 10.0, **match: Any) -> list[Any]:
        """The first callback ``name`` whose arguments match (``a1="turn"``: args[1])."""
        deadline = time.monotonic() + timeout
        while True:
            for i, (got, args) in enumerate(self.callbacks):
                if got == name and all(args[int(k[1:])] == v for k, v in match.items()):
                    del self.callbacks[i]
                    return args
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {name} {match}; callbacks: {self.callbacks}")
            self.sock.settimeout(left)
            try:
                self.read_one()
            except TimeoutError:
                continue
            finally:
                self.sock.settimeout(self.timeout)

    def is_closed(self, timeout: float = 5.0) -> bool:
        """True when the server closes the connection (messages before that are read)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                self.read_message()
        except Closed:
            return True
        except TimeoutError:
            return False
        except OSError:
            return True


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    port: int
    token: str
    stderr_path: Path

    def client(self, *, hello: bool = True) -> WireClient:
        client = WireClient(self.port)
        if hello:
            kind, value = client.hello(self.token)
            assert kind == "return", value
        return client

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def log(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def server_env(tmp: Path, token: str | None = None, **extra: str) -> dict[str, str]:
    """The server's environment; ``token`` goes in the old variable only when given."""
    env = {k: v for k, v in os.environ.items()
           if k not in _SCRUBBED and not k.startswith("PASSEPARTOUT_")}
    env.update(PASSEPARTOUT_HOME=str(tmp / "home"), PASSEPARTOUT_CONFIG_DIR=str(tmp / "config"),
               MEMEX_DIR=str(tmp / "memex"), HEARTBEAT_INTERVAL="3600",
               # The wire is under test, not memory: no embedding model to load and join.
               PASSEPARTOUT_EMBEDDINGS="off", PYTHONPATH=str(ROOT), **extra)
    if token is not None:
        env["PASSEPARTOUT_TOKEN"] = token
    return env


def start_server(tmp: Path, *, script: str | None = None, token: str | None = None,
                 handover: str = "stdin", **extra: str) -> ServerProcess:
    """Start ``python -m passepartout.server.serve`` (or a script), hand it the token as Emacs
    does (first line of stdin; ``handover="environment"``: the old variable) and read
    its port line."""
    token = token or secrets.token_hex(16)
    (tmp / "config").mkdir(parents=True, exist_ok=True)
    stderr_path = tmp / "server.stderr"
    command = [PYTHON, script] if script else [PYTHON, "-m", "passepartout.server.serve"]
    env = server_env(tmp, token if handover == "environment" else None, **extra)
    proc = subprocess.Popen(command, cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=stderr_path.open("wb"))
    assert proc.stdout is not None and proc.stdin is not None
    if handover == "stdin":
        proc.stdin.write(token.encode() + b"\n")
        proc.stdin.flush()
    line = proc.stdout.readline()
    if not line.strip().isdigit():
        proc.kill()
        raise RuntimeError(f"no port line: {line!r}; stderr: {stderr_path.read_text()}")
    return ServerProcess(proc, int(line), token, stderr_path)
