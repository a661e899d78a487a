"""What a whole chat turn costs beyond litellm, against the fake server in this process.

Interleaved rounds of: a bare streamed ``litellm.completion`` with the prompt and tool
schemas a turn sends (the baseline), a one-step
turn through the agent's loop (chat skill, context assembly, budget check, gates, ledger,
session), and a two-step turn (tool call, gates, the tool actuator, ``:tool-output``,
the model again, so two model calls).  Median ms of N rounds and the ratio to the
baseline per model call.

    .venv/bin/python bench/chat_turn.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fakellm import FakeLLM

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.llm.litellm_import import load_litellm
from passepartout.signals import Keyword, Signal

MODEL = "openai/gpt-4o-mini"


class Quiet:
    def send(self, signal: Signal, event: Any) -> None:
        pass

    def approve(self, request: Any) -> bool:
        return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as fake:
        root = Path(tmp)
        (root / "memex").mkdir()
        (root / "memex" / "a.org").write_text("* A heading\nsome text\n")
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-bench")
        config = Config.from_mapping({
            "PASSEPARTOUT_HOME": str(root / "home"), "MEMEX_DIR": str(root / "memex"),
            "PASSEPARTOUT_WORKSPACE": str(root / "memex"), "PASSEPARTOUT_MODEL": MODEL,
            "PASSEPARTOUT_EMBEDDINGS": "off", "PASSEPARTOUT_MEMORY_IMPORT": "off",
        }, config_dir=root / "config")
        agent = Agent(config)
        agent.boot(start_threads=False)
        agent.register_channel("bench", Quiet())
        lit = load_litellm()
        n = [0]
        # time spent inside the provider (litellm and HTTP), per round
        layer = agent.services["llm"]
        inner = [0.0]
        complete = layer.provider.complete

        def timed_complete(*a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return complete(*a, **k)
            finally:
                inner[0] += time.perf_counter() - started

        layer.provider.complete = timed_complete

        def signal(text: str) -> Signal:
            n[0] += 1
            return Signal(payload={"sensor": Keyword("user-input"), "text": text},
                          meta={"source": Keyword("bench"), "session-id": f"b{n[0]}",
                                "turn-id": f"t{n[0]}"})

        sent: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}

        def raw() -> None:
            fake.reply("Hello there, person.")
            stream = lit.completion(model=MODEL, stream=True, max_retries=0, **sent)
            for _ in stream:
                pass

        def one_step() -> None:
            fake.reply("Hello there, person.")
            agent.loop.process(signal("hi"))

        def two_step() -> None:
            fake.tool_call("grep-search", {"pattern": "heading"})
            fake.reply("It has one heading.")
            agent.loop.process(signal("how many headings are in my notes?"))

        variants: dict[str, Callable[[], None]] = {
            "litellm streamed call": raw, "one-step turn": one_step, "two-step turn": two_step}
        for fn in variants.values():  # warm: first-call imports, tokenizer, sqlite pages
            fn()
        # the bare call sends exactly what a one-step turn sends (prompt and tool schemas)
        one_step()
        body = fake.last_request.body
        sent = {"messages": body["messages"], "tools": body["tools"]}
        times: dict[str, list[float]] = {k: [] for k in variants}
        outside: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(args.rounds):
            for name, fn in variants.items():
                inner[0] = 0.0
                started = time.perf_counter()
                fn()
                elapsed = time.perf_counter() - started
                times[name].append(elapsed * 1000)
                outside[name].append((elapsed - inner[0]) * 1000)
        base = statistics.median(times["litellm streamed call"])
        for name, values in times.items():
            calls = 2 if name == "two-step turn" else 1
            med = statistics.median(values)
            own = statistics.median(outside[name]) if name != "litellm streamed call" else 0.0
            print(f"{name:>22}: {med:7.2f} ms median of {args.rounds}; "
                  f"{med / calls:6.2f} ms per model call = "
                  f"{med / calls / base:4.2f}x the bare call; outside the provider: {own:.2f} ms")
        agent.shutdown()


if __name__ == "__main__":
    main()
