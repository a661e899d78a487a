"""What litellm costs per chat completion, against the fake server in this process.

Prints the median of N rounds (ms per call) of: a raw HTTP request (http.client on a
kept-alive connection: the floor), then litellm.completion unstreamed and streamed
under several settings, each with its ratio to the raw request. Variants run
interleaved, one call each per round, so a burst of load on the machine hits all
of them alike.

    .venv/bin/python bench/litellm_overhead.py [--rounds 40] [--only defaults FAST]
    .venv/bin/python bench/litellm_overhead.py --profile "stream: defaults"

``--profile`` runs cProfile over one variant instead and prints the top functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import http.client
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import litellm
import openai
from fakellm import FakeLLM

from passepartout.llm.tuning import FAST_ENVIRONMENT, FAST_SETTINGS

MESSAGES = [{"role": "user", "content": "Tell me about the weather in a paragraph."}]
# About 100 words: 100 SSE chunks, so per-chunk costs show.
REPLY = " ".join(["The weather today is mild with a light breeze from the west."] * 9)


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """Sets environment variables (litellm reads some per call) for the block."""
    old = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def settings(values: dict[str, Any]) -> Iterator[None]:
    """Sets litellm module attributes for the block, then puts the old values back."""
    old = {name: getattr(litellm, name) for name in values}
    for name, value in values.items():
        setattr(litellm, name, value)
    try:
        yield
    finally:
        for name, value in old.items():
            setattr(litellm, name, value)


class Bench:
    def __init__(self, fake: FakeLLM) -> None:
        self.fake = fake
        self.conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=10)
        self.client = openai.OpenAI(base_url=fake.base_url, api_key="sk-test", max_retries=0)
        self.loop = asyncio.new_event_loop()

    def args(self, model: str = "openai/gpt-4o-mini", **extra: Any) -> dict[str, Any]:
        args = {
            "model": model,
            "api_base": self.fake.base_url,
            "api_key": "sk-test",
            "messages": MESSAGES,
            "max_retries": 0,
        }
        args.update(extra)
        return args

    def raw(self) -> None:
        self.fake.reply(REPLY)
        body = json.dumps({"model": "gpt-4o-mini", "messages": MESSAGES})
        self.conn.request(
            "POST", "/v1/chat/completions", body, {"Content-Type": "application/json"}
        )
        json.loads(self.conn.getresponse().read())

    def raw_stream(self) -> None:
        self.fake.reply(REPLY)
        body = json.dumps({"model": "gpt-4o-mini", "messages": MESSAGES, "stream": True})
        self.conn.request(
            "POST", "/v1/chat/completions", body, {"Content-Type": "application/json"}
        )
        response = self.conn.getresponse()
        for line in response:
            if line.startswith(b"data: {"):
                json.loads(line[6:])
        response.read()

    def plain(self, **extra: Any) -> None:
        self.fake.reply(REPLY)
        litellm.completion(**self.args(**extra))

    def streamed(self, **extra: Any) -> None:
        self.fake.reply(REPLY)
        for _chunk in litellm.completion(stream=True, **self.args(**extra)):
            pass

    def async_plain(self) -> None:
        self.fake.reply(REPLY)
        self.loop.run_until_complete(litellm.acompletion(**self.args()))

    def async_streamed(self) -> None:
        self.fake.reply(REPLY)

        async def run() -> None:
            async for _chunk in await litellm.acompletion(stream=True, **self.args()):
                pass

        self.loop.run_until_complete(run())


# Settings tried one at a time (each also in FAST_SETTINGS or shown not to help).
CANDIDATES: dict[str, Any] = {
    "suppress_debug_info": True,
    "turn_off_message_logging": True,
    "disable_streaming_logging": True,
    "disable_add_transform_inline_image_block": True,
    "disable_token_counter": True,
}


def variants(bench: Bench) -> dict[str, Callable[[], None]]:
    """Name -> one call. Each sets only what it measures."""

    def under(values: dict[str, Any], call: Callable[[], None],
              env: dict[str, str] | None = None) -> Callable[[], None]:
        def run() -> None:
            with settings(values), environment(env or {}):
                call()

        return run

    fast = dict(FAST_SETTINGS)
    usage = {"stream_options": {"include_usage": True}}
    out: dict[str, Callable[[], None]] = {
        "plain: raw http.client": bench.raw,
        "stream: raw http.client": bench.raw_stream,
    }
    for kind, call in (("plain", bench.plain), ("stream", bench.streamed)):
        out[f"{kind}: defaults"] = call
        out[f"{kind}: unknown model name"] = lambda c=call: c(model="openai/fake-model")
        for name, value in CANDIDATES.items():
            out[f"{kind}: only {name}"] = under({name: value}, call)
        out[f"{kind}: explicit openai client"] = lambda c=call: c(client=bench.client)
        out[f"{kind}: hosted_vllm provider (no SDK)"] = lambda c=call: c(model="hosted_vllm/m")
        out[f"{kind}: FAST_SETTINGS"] = under(fast, call)
        out[f"{kind}: FAST_SETTINGS + FAST_ENVIRONMENT"] = under(fast, call, FAST_ENVIRONMENT)
    out["stream: include_usage"] = lambda: bench.streamed(**usage)
    out["stream: FAST_SETTINGS + include_usage"] = under(fast, lambda: bench.streamed(**usage))
    out["plain: acompletion"] = bench.async_plain
    out["stream: acompletion"] = bench.async_streamed
    return out


def measure(calls: dict[str, Callable[[], None]], rounds: int) -> dict[str, tuple[float, float]]:
    """Name -> (median wall ms, mean CPU ms of the whole process) per call.

    Variants run in blocks, forward then backward, so a drift in the machine's load
    evens out. CPU time counts litellm's background logging threads too, which a
    wall-clock median of the calling thread can hide.
    """
    walls: dict[str, list[float]] = {name: [] for name in calls}
    cpus: dict[str, list[float]] = {name: [] for name in calls}
    half = max(1, rounds // 2)
    for order in (list(calls), list(reversed(calls))):
        for name in order:
            call = calls[name]
            for _ in range(3):  # warm-up: clients, caches
                call()
            cpu_start = time.process_time()
            for _ in range(half):
                started = time.perf_counter()
                call()
                walls[name].append(time.perf_counter() - started)
            cpus[name].append((time.process_time() - cpu_start) / half)
    return {
        name: (statistics.median(walls[name]) * 1000, statistics.mean(cpus[name]) * 1000)
        for name in calls
    }


def profile(call: Callable[[], None], rounds: int, sort: str = "cumulative") -> None:
    for _ in range(3):
        call()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(rounds):
        call()
    profiler.disable()
    pstats.Stats(profiler).sort_stats(sort).print_stats(45)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--profile", help="a variant name, e.g. 'plain: defaults'")
    parser.add_argument("--only", nargs="*", help="run the variants whose names contain these")
    args = parser.parse_args()
    litellm.suppress_debug_info = True
    with FakeLLM(default="echo") as fake:
        fake.default = "echo"
        bench = Bench(fake)
        calls = variants(bench)
        if args.only:
            keep = [n for n in calls if "raw" in n or any(part in n for part in args.only)]
            calls = {name: calls[name] for name in keep}
        if args.profile:
            profile(calls[args.profile], args.rounds)
            return 0
        print(f"median of {args.rounds} calls (wall) and mean CPU per call, ms")
        medians = measure(calls, args.rounds)
    print(f"  {'variant':<46} {'wall':>8} {'x raw':>6} {'CPU':>8} {'x raw':>6}")
    for name, (wall, cpu) in medians.items():
        floor_wall, floor_cpu = medians[name.split(":")[0] + ": raw http.client"]
        print(
            f"  {name:<46} {wall:8.2f} {wall / floor_wall:6.1f} {cpu:8.2f} {cpu / floor_cpu:6.1f}"
        )
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    # litellm's logging threads and async clients crashed the interpreter at exit
    # (SIGSEGV after every figure was printed): leave without tearing them down.
    os._exit(status)
