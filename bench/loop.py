"""Reflex-tier throughput: signals per second through perceive -> gates -> a no-op actuator.

Runs the shipped mandatory gates (policy, dispatcher) on every signal, as the agent
does, and compares with a bare baseline (calling the reflex and the actuator directly)
measured in the same process.  Prints the median of 5 runs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.engine import Skill
from passepartout.loop import Action
from passepartout.signals import Keyword, Signal

N = 20_000
RUNS = 5


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Config.from_mapping(
            {
                "PASSEPARTOUT_HOME": tmp + "/home",
                "PASSEPARTOUT_CONFIG_DIR": tmp + "/config",
                "MEMEX_DIR": tmp + "/memex",
                "HEARTBEAT_INTERVAL": "3600",
                # The loop is measured, not memory: no embedding model loading meanwhile.
                "PASSEPARTOUT_EMBEDDINGS": "off",
            }
        )
        agent = Agent(config).boot(start_threads=False)
        # The steady state: litellm's import runs in the background after a boot, and a
        # busy thread makes every other one wait for the GIL after each system call.
        for thread in threading.enumerate():
            if thread.name == "litellm-import":
                thread.join()
        noop = Action("system", "noop")
        agent.registry.add(
            Skill(
                "bench", priority=1000, trigger=lambda s: s.sensor == "bench", reflex=lambda s: noop
            )
        )
        done: list[Action] = []
        agent.loop.register_actuator("system", lambda a, s: done.append(a) or None)
        signals = [Signal(payload={"sensor": Keyword("bench"), "n": i}) for i in range(N)]
        gates = [s.name for s in agent.registry.gates]

        def through_loop() -> float:
            start = time.perf_counter()
            for signal in signals:
                agent.loop.process(signal)
            return N / (time.perf_counter() - start)

        def baseline() -> float:
            start = time.perf_counter()
            for signal in signals:
                action = noop if signal.sensor == "bench" else None
                assert action is not None
            return N / (time.perf_counter() - start)

        loop_rates = [through_loop() for _ in range(RUNS)]
        assert len(done) == RUNS * N, "every signal must reach the actuator"
        base_rates = [baseline() for _ in range(RUNS)]
        agent.shutdown()
    loop_rate = statistics.median(loop_rates)
    base_rate = statistics.median(base_rates)
    print(f"reflex tier, gates {gates}: {loop_rate:,.0f} signals/s (median of {RUNS} x {N:,})")
    print(f"bare baseline (no loop):       {base_rate:,.0f} signals/s")
    print(
        f"loop cost per signal: {1e6 / loop_rate:.1f} us; "
        f"ratio to baseline: {base_rate / loop_rate:.1f}x; target >= 10,000 signals/s: "
        f"{'met' if loop_rate >= 10_000 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
