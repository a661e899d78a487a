"""EPC round trips against ``passepartout serve``, beside baselines measured in the same run.

Prints:
- start to port line of ``python -m passepartout.server.serve`` and ``python -m passepartout
  serve`` (median of 5);
- no-op ``ping`` round trips from a raw-socket client (p50, p95 over 2,000 calls), beside
  a raw socket echo of the same frame and python-epc's stock server answering ``ping``;
- a 1 MB ``echo`` both ways (median of 5), beside the raw socket echo of the same frame.

Run: ``.venv/bin/python bench/epc_python.py``.
"""

from __future__ import annotations

import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from passepartout.signals import Keyword, Symbol  # noqa: E402
from passepartout.wire.frames import frame, read_payload  # noqa: E402

PINGS = 2_000
RUNS = 5
# About 1 MB of chat-like text: one escaped character (quote, backslash) in 20.
PAYLOADS = {
    "text with escapes": ('text with "quotes", a \\ backslash, été and 日本 ' * 20 + "\n") * 900,
    "plain ASCII": "plain text without anything to escape " * 27_000,
}

RAW_ECHO = """
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True)
c, _ = s.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
f = c.makefile("rb")
while True:
    head = f.read(6)
    if len(head) < 6:
        break
    c.sendall(head + f.read(int(head, 16)))
"""

STOCK_EPC = """
from epc.server import EPCServer
server = EPCServer(("127.0.0.1", 0))
server.register_function(lambda: "pong", "ping")
server.register_function(lambda x: x, "echo")
server.print_port()
server.serve_forever()
"""


class Client:
    def __init__(self, port: int, *, attachments: bool = False) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")
        self.uid = 0
        self.attachments = attachments  # long strings as raw bytes (our server only)

    def frame(self) -> bytes:
        head = self.file.read(6)
        return self.file.read(int(head, 16))

    def call(self, method: str, *args: object) -> object:
        self.uid += 1
        self.sock.sendall(frame([Symbol("call"), self.uid, Symbol(method), list(args)],
                                attachments=self.attachments))
        while True:
            message = read_payload(self.frame())
            if message[0] != "call":  # a callback (the boot status): skip it
                return message[2]

    def raw(self, data: bytes) -> bytes:
        self.sock.sendall(data)
        head = self.file.read(6)
        return head + self.file.read(int(head, 16))


def spawn(args: list[str], env: dict[str, str] | None = None,
          token: str | None = None) -> tuple[subprocess.Popen[bytes], int, float]:
    """Start a server; ``token`` goes on its stdin's first line, as Emacs hands it over."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stdin is not None
    if token is not None:
        proc.stdin.write(token.encode() + b"\n")
        proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - started
    return proc, int(line), elapsed


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()


def server_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSEPARTOUT_")}
    env.update(PASSEPARTOUT_HOME=str(tmp / "home"), PASSEPARTOUT_CONFIG_DIR=str(tmp / "cfg"),
               MEMEX_DIR=str(tmp / "memex"), HEARTBEAT_INTERVAL="3600",
               PASSEPARTOUT_EMBEDDINGS="off", PYTHONPATH=str(ROOT))
    return env


def timings(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="epc-bench-"))
    (tmp / "cfg").mkdir()
    token = secrets.token_hex(16)
    env = server_env(tmp)
    py = sys.executable

    print("start to port line (median of 5):")
    serve = [py, "-m", "passepartout.server.serve"]
    for label, args in (("python -m passepartout.server.serve", serve),
                        ("python -m passepartout serve", [py, "-m", "passepartout", "serve"]),
                        ("baseline: python -c 'print(port)'", [py, "-c", RAW_ECHO])):
        times = []
        for _ in range(RUNS):
            proc, _port, elapsed = spawn(args, env, token)
            times.append(elapsed * 1000)
            stop(proc)
        print(f"  {label:36s} {statistics.median(times):7.1f} ms")

    server, port, _ = spawn([py, "-m", "passepartout.server.serve"], env, token)
    raw_proc, raw_port, _ = spawn([py, "-c", RAW_ECHO])
    stock_proc, stock_port, _ = spawn([py, "-c", STOCK_EPC])
    try:
        ours = Client(port)
        assert ours.call("hello", token, None)
        attached = Client(port, attachments=True)
        assert attached.call("hello", token, [Keyword("attachments"), True])
        time.sleep(1.0)  # let the boot finish
        raw = Client(raw_port)
        stock = Client(stock_port)
        ping = frame([Symbol("call"), 1, Symbol("ping"), None])
        for _ in range(200):  # warm up
            ours.call("ping")
            raw.raw(ping)
            stock.call("ping")
        results = {
            "raw socket echo (baseline)": timings(lambda: raw.raw(ping), PINGS),
            "python-epc stock server": timings(lambda: stock.call("ping"), PINGS),
            "passepartout serve": timings(lambda: ours.call("ping"), PINGS),
        }
        base = statistics.median(results["raw socket echo (baseline)"])
        print(f"\nping round trip over {PINGS} calls:      p50       p95   p50/baseline")
        for label, values in results.items():
            p50 = statistics.median(values)
            print(f"  {label:28s} {p50:7.3f} ms {pct(values, 95):7.3f} ms {p50 / base:8.1f}x")

        for name, payload in PAYLOADS.items():
            size = len(payload.encode("utf-8"))
            big = frame([Symbol("call"), 2, Symbol("echo"), [payload]])
            assert ours.call("echo", payload) == payload
            raw_big = statistics.median(timings(lambda b=big: raw.raw(b), RUNS))
            ours_big = statistics.median(timings(lambda p=payload: ours.call("echo", p), RUNS))
            stock_big = statistics.median(timings(lambda p=payload: stock.call("echo", p), RUNS))
            assert attached.call("echo", payload) == payload
            att_big = statistics.median(timings(lambda p=payload: attached.call("echo", p), RUNS))
            print(f"\necho of {size / 1e6:.2f} MB of {name}, both ways (median of {RUNS}):")
            print(f"  {'raw socket echo (baseline)':28s} {raw_big:8.1f} ms")
            print(f"  {'python-epc stock server':28s} {stock_big:8.1f} ms "
                  f"{stock_big / raw_big:6.1f}x")
            print(f"  {'passepartout serve':28s} {ours_big:8.1f} ms "
                  f"{ours_big / raw_big:6.1f}x")
            print(f"  {'  with attachments':28s} {att_big:8.1f} ms "
                  f"{att_big / raw_big:6.1f}x")
        print("  (the EPC figures include this client's own parse of the reply)")
    finally:
        for proc in (server, raw_proc, stock_proc):
            stop(proc)


if __name__ == "__main__":
    main()
