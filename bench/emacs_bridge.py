"""Emacs <-> server bridge benchmark: the transport, streaming into a chat buffer, a turn.

    python bench/emacs_bridge.py            # 1,000 no-op calls, 10,000 chunks, 60 turns
    python bench/emacs_bridge.py --quick    # fewer of each

This script starts the raw sources and the fake model, then runs
``emacs --batch -l bench/emacs_bridge.el``, which starts the real server with
``M-x passepartout-start`` and measures, each beside a baseline taken in the
same run:

- a no-op call (``ping``) from Emacs to the server and back, p50/p95 over the
  calls, against a raw-socket round trip of one small frame (no Lisp
  printing or reading on either side);
- ``echo`` of a 1 MB string both ways, against the raw socket echo of the same
  bytes;
- 10,000 ``chunk`` frames sent by a raw Python source into a
  real chat buffer through the transport, against the same bytes inserted by a
  bare process filter: the difference is the per-chunk overhead;
- a whole chat turn against the fake model, which gives every prompt the same
  reply in the same chunks at once; with ``GPTEL_DIR`` set to a checkout of
  gptel (https://github.com/karthink/gptel; it needs compat, Debian's
  elpa-compat, on Emacs 28), the same prompt with ``gptel-send`` in an org
  buffer against the same fake model, turns alternating with ours.  Each
  client's turn is timed from its send command to two moments: the reply's
  whole text in its buffer (on screen: the same moment for both, noted by a
  buffer change hook, bench/emacs_onscreen.el), and its own turn end
  (Passepartout's turn-end hook after the server's done event; gptel's
  post-response hook, after its curl process exited).

Then, to see where a turn's time goes, it times here the same streamed
completion through litellm alone and through a bare HTTP client.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakellm import FakeLLM, RecordedRequest  # noqa: E402
from fakellm_protocol import Reply  # noqa: E402

PYTHON = sys.executable
MODEL = "fake-model"
PROMPT = "Reply with a short greeting of about ten words, please."
# The fake model's reply to every prompt (one chunk per word): plain text, which
# neither client rewrites, so both show it verbatim.
REPLY = "Hello! It is good to hear from you, and I hope your day goes well."


# -- raw sources -------------------------------------------------------------------------


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    parts: list[bytes] = []
    while n:
        data = conn.recv(min(n, 1 << 20))
        if not data:
            raise ConnectionError("peer closed")
        parts.append(data)
        n -= len(data)
    return b"".join(parts)


def _echo_client(conn: socket.socket) -> None:
    """Echo length-prefixed frames verbatim: the raw-socket baseline."""
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        while True:
            header = _recv_exact(conn, 6)
            conn.sendall(header + _recv_exact(conn, int(header, 16)))
    except (ConnectionError, OSError, ValueError):
        conn.close()


def _chunk_frames(count: int, text: str) -> bytes:
    frames = []
    for uid in range(1, count + 1):
        body = f'(call {uid} chunk ("bench" "turn" "{text}"))'.encode()
        frames.append(b"%06x" % len(body) + body)
    return b"".join(frames)


def _chunk_client(conn: socket.socket) -> None:
    """On a line "COUNT", send COUNT on-chunk frames at once, draining the replies."""
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader = conn.makefile("rb")
    line = reader.readline()
    if not line:
        conn.close()
        return
    data = _chunk_frames(int(line), "word ")

    def drain() -> None:
        try:
            while conn.recv(1 << 16):
                pass
        except OSError:
            pass

    threading.Thread(target=drain, daemon=True).start()
    conn.sendall(data)


def _serve(handler: Callable[[socket.socket], None]) -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return server, server.getsockname()[1]


# -- the fake model and the model-side baselines ---------------------------------------------


GPTEL_MODEL = "gptel-fake-model"  # the name gptel asks for (bench/emacs_bridge.el)


def start_fake_llm() -> tuple[FakeLLM, dict[str, list[float]]]:
    """The fake model, in this process, giving every request the reply REPLY and noting
    when each request arrives, per model name (wall clock)."""
    fake = FakeLLM().start()
    fake._next_reply = lambda _request: Reply(text=REPLY)  # type: ignore[method-assign]
    arrivals: dict[str, list[float]] = {MODEL: [], GPTEL_MODEL: []}
    record = fake._record

    def stamped(request: RecordedRequest) -> None:
        arrivals.setdefault(str(request.body.get("model")), []).append(time.time())
        record(request)

    fake._record = stamped  # type: ignore[method-assign,unused-ignore]
    return fake, arrivals


def time_raw_http(base_url: str, runs: int) -> list[float]:
    """A streamed completion read with http.client: the fake model's own cost."""
    url = urlparse(base_url)
    body = json.dumps({"model": MODEL, "stream": True,
                       "messages": [{"role": "user", "content": PROMPT}]})
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        conn.request("POST", url.path + "/chat/completions", body,
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        while b"[DONE]" not in response.readline():
            pass
        response.read()
        times.append(time.perf_counter() - start)
    conn.close()
    return times


def time_litellm(base_url: str, runs: int) -> list[float]:
    """The same completion through litellm's streaming code path, as the server calls it
    (passepartout.llm.tuning's settings, the keep-alive client), read to its end."""
    sys.path.insert(0, str(ROOT))
    from passepartout.llm.keepalive import openai_handler_client
    from passepartout.llm.litellm_import import load_litellm

    litellm = load_litellm()
    client = openai_handler_client()
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        stream = litellm.completion(model=f"openai/{MODEL}", api_base=base_url,
                                    api_key="sk-bench", stream=True, client=client,
                                    stream_options={"include_usage": True},
                                    messages=[{"role": "user", "content": PROMPT}])
        text = "".join((c.choices[0].delta.content or "") for c in stream)
        assert text
        times.append(time.perf_counter() - start)
    return times[1:]  # the first call warms up litellm's lazy imports


# -- running Emacs -------------------------------------------------------------------------------


def run_emacs(env: dict[str, str]) -> dict[str, list[float]]:
    result = subprocess.run(
        ["emacs", "-Q", "--batch", "-L", str(ROOT / "elisp"),
         "-l", str(ROOT / "bench" / "emacs_bridge.el"), "-f", "passepartout-bench-run"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=900,
    )
    figures: dict[str, list[float]] = {}
    for line in result.stdout.splitlines():
        if line.startswith("NOTE "):
            print(line[5:])
        elif line.startswith("BENCH "):
            _, name, values = line.split(" ", 2)
            figures[name] = [float(v) for v in values.split()]
    if result.returncode != 0 or not figures:
        sys.stderr.write(result.stdout[-4000:] + result.stderr[-4000:])
        raise SystemExit(f"emacs exited with {result.returncode}")
    return figures


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(value: float) -> str:
    return f"{value * 1000:9.3f} ms"


def stats(values: list[float]) -> str:
    return f"p50 {ms(statistics.median(values))}  p90 {ms(pct(values, 0.9))}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile-python", metavar="OUT",
                        help="sample the server's threads with bench/pysample.py into OUT")
    parser.add_argument("--profile-emacs", metavar="OUT",
                        help="write Emacs's CPU profile of the turns (profiler.el) into OUT")
    parser.add_argument("--profile-threads", default="", metavar="PREFIXES",
                        help="comma-separated thread name prefixes to sample (default: all)")
    args = parser.parse_args()
    calls, chunks, turns = (200, 2000, 8) if args.quick else (1000, 10000, 60)

    echo_server, echo_port = _serve(_echo_client)
    chunk_server, chunk_port = _serve(_chunk_client)
    fake, arrivals = start_fake_llm()
    base_url = fake.base_url
    state = tempfile.mkdtemp(prefix="passepartout-bench-")
    profile = {}
    if args.profile_emacs:
        profile["BENCH_PROFILE_EMACS"] = str(Path(args.profile_emacs).resolve())
    if args.profile_python:
        profile["BENCH_PROFILE"] = "1"
        profile["BENCH_SERVER_ARGS"] = "\n".join(
            [str(ROOT / "bench" / "pysample.py"), str(Path(args.profile_python).resolve()),
             args.profile_threads, "-m", "passepartout", "serve"])
    gptel_dir = os.environ.get("GPTEL_DIR", "")
    if gptel_dir and not (Path(gptel_dir) / "gptel.el").is_file():
        print(f"GPTEL_DIR={gptel_dir} holds no gptel.el: gptel is not measured")
        gptel_dir = ""
    try:
        f = run_emacs({
            "GPTEL_DIR": gptel_dir,
            **profile,
            "BENCH_ECHO_PORT": str(echo_port), "BENCH_CHUNK_PORT": str(chunk_port),
            "BENCH_CALLS": str(calls), "BENCH_CHUNKS": str(chunks), "BENCH_TURNS": str(turns),
            "BENCH_PYTHON": str(ROOT / ".venv" / "bin" / "python"), "BENCH_ROOT": str(ROOT),
            "BENCH_SERVER_ENV": "\n".join([
                f"PASSEPARTOUT_HOME={state}/home", f"PASSEPARTOUT_CONFIG_DIR={state}/config",
                f"PASSEPARTOUT_MODEL=openai/{MODEL}", f"OPENAI_BASE_URL={base_url}",
                f"OPENAI_API_BASE={base_url}", "OPENAI_API_KEY=sk-bench",
                "LITELLM_LOCAL_MODEL_COST_MAP=True", "HEARTBEAT_INTERVAL=3600"]),
            "BENCH_PROMPT": PROMPT, "BENCH_REPLY": REPLY, "BENCH_LLM_PORT": str(fake.port),
        })
        emacs_arrivals = {model: list(times) for model, times in arrivals.items()}
        raw_http = time_raw_http(base_url, turns)
        lite = time_litellm(base_url, turns)
    finally:
        fake.close()
        echo_server.close()
        chunk_server.close()

    print(f"Emacs <-> server bridge ({calls} calls, {chunks} chunks, {turns} turns)")
    print("no-op call, Emacs -> server -> Emacs")
    for name, label in (("raw-rtt", "raw socket baseline"), ("ping", "ping (EPC, real server)")):
        print(f"  {label:32} p50 {ms(statistics.median(f[name]))}  p95 {ms(pct(f[name], 0.95))}")
    ratio = statistics.median(f["ping"]) / statistics.median(f["raw-rtt"])
    print(f"  ratio p50 ping/raw {ratio:.1f}x")
    print("1 MB payload both ways (median)")
    print(f"  Emacs alone: print+read 1 MB     {ms(statistics.median(f['emacs-codec-1mb']))}")
    print(f"  Emacs alone: as an attachment    {ms(statistics.median(f['emacs-attach-1mb']))}")
    raw_mb, echo_mb = statistics.median(f["raw-1mb"]), statistics.median(f["echo-1mb"])
    print(f"  raw socket baseline              {ms(raw_mb)}")
    print(f"  echo (EPC, real server)          {ms(echo_mb)}   ratio {echo_mb / raw_mb:.1f}x")
    print(f"    of which garbage collection    {ms(statistics.median(f['echo-1mb-gc']))}"
          f"  ({statistics.median(f['echo-1mb-gcs']):.0f} per call, median)")
    print(f"{chunks} streamed chunks into a chat buffer (median of runs)")
    raw_c, epc_c = statistics.median(f["chunks-raw"]), statistics.median(f["chunks-epc"])
    print(f"  raw bytes into a buffer          {ms(raw_c)}  ({raw_c / chunks * 1e6:.2f} us/chunk)")
    print(f"  on-chunk frames -> chat buffer   {ms(epc_c)}  ({epc_c / chunks * 1e6:.2f} us/chunk)")
    gc = statistics.median(f["chunks-epc-gc"]) / chunks * 1e6
    print(f"  overhead per chunk               {(epc_c - raw_c) / chunks * 1e6:9.2f} us"
          f"  (of which garbage collection {gc:.2f} us)")
    big = statistics.median(f["chunks-epc-biggc"])
    print(f"  same, gc-cons-threshold 64 MB    {ms(big)}  ({big / chunks * 1e6:.2f} us/chunk)")
    print(f"whole chat turn against the fake model ({turns} turns; same reply, same chunks)")
    print("  on screen: send -> the reply's whole text in the client's buffer (same moment)")
    turn_screen, turn = f["turn-screen"], f["turn"]
    print(f"    Passepartout                   {stats(turn_screen)}")
    if "gptel-screen" in f:
        gptel_screen, gptel = f["gptel-screen"], f["gptel-turn"]
        print(f"    gptel                          {stats(gptel_screen)}")
        print(f"    Passepartout / gptel p50       "
              f"{statistics.median(turn_screen) / statistics.median(gptel_screen):9.2f}x")
    print("  turn end: send -> each client's own end of the turn (not the same moment)")
    print(f"    Passepartout (turn-end hook)   {stats(turn)}")
    if "gptel-screen" in f:
        print(f"    gptel (post-response hook)     {stats(gptel)}")
        print(f"    Passepartout / gptel p50       "
              f"{statistics.median(turn) / statistics.median(gptel):9.2f}x")
    else:
        print("  gptel: not measured (set GPTEL_DIR to a gptel checkout to compare)")
    print("  where the time goes (p50)")
    first = statistics.median(f["turn-first"])
    print(f"    Passepartout: send -> first chunk in buffer  {ms(first)}")
    # The last len(sent) requests of each model belong to the timed turns, one each.
    sent, done = f["turn-sent-at"], f["turn-done-at"]
    arrived = emacs_arrivals[MODEL][-len(sent):]
    before = [a - s for a, s in zip(arrived, sent, strict=True)]
    after = [d - a for d, a in zip(done, arrived, strict=True)]
    print(f"    Passepartout: send -> request at the model   {ms(statistics.median(before))}"
          "  (Emacs, transport, agent loop, litellm's request)")
    print(f"    Passepartout: request at the model -> end    {ms(statistics.median(after))}"
          "  (model stream, litellm, events back to Emacs)")
    if "gptel-sent-at" in f:
        gptel_sent = f["gptel-sent-at"]
        gptel_arrived = emacs_arrivals[GPTEL_MODEL][-len(gptel_sent):]
        gptel_before = [a - s for a, s in zip(gptel_arrived, gptel_sent, strict=True)]
        print(f"    gptel: send -> request at the model          "
              f"{ms(statistics.median(gptel_before))}  (Emacs, curl's start)")
    print("    measured in this process, same fake model:")
    print(f"      bare HTTP client                         {ms(statistics.median(raw_http))}")
    print(f"      litellm.completion(stream)               {ms(statistics.median(lite))}"
          "  (to its end; a turn goes on at the reply's finish)")
    print(f"      ping (transport round trip)              {ms(statistics.median(f['ping']))}")
    rest = statistics.median(turn) - statistics.median(lite) - statistics.median(f["ping"])
    if rest >= 0:
        print(f"    Passepartout: turn end minus those two       {ms(rest)}"
              "  (agent loop, gates, events)")
    else:  # litellm alone is timed after the turns: the machine's load changed between
        print("    Passepartout: turn end minus those two       not shown: litellm alone"
              " took longer than a turn (a busy machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
