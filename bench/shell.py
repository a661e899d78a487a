"""Shell policy and sandbox cost.

    python bench/shell.py

Policy: ``analyze`` on commands of 10 to 1,000 simple commands, against a baseline of
bashlex's parse alone on the same text (the ratio is what the analysis adds). Sandbox:
``run_sandboxed("true")`` against a bare ``subprocess.run(["bash", "-c", "true"])``.
Prints the median of 7 runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bashlex

from passepartout.security.sandbox import run_sandboxed
from passepartout.security.shell import ShellPolicy, analyze

RUNS = 7


def median_ms(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    policy = ShellPolicy(max_commands=10_000)
    print("policy: simple commands, analyze ms, bashlex.parse ms, ratio")
    for n in (10, 100, 500, 1000):
        cmd = " && ".join(["grep -n 'x y' notes.txt | wc -l"] * (n // 2))
        verdict = analyze(cmd, policy)
        assert verdict.decision == "allow" and len(verdict.commands) == n
        ours = median_ms(lambda cmd=cmd: analyze(cmd, policy))
        base = median_ms(lambda cmd=cmd: bashlex.parse(cmd))
        print(f"  {n:5d}  {ours:8.2f}  {base:8.2f}  {ours / base:5.2f}x")
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        sandboxed = median_ms(lambda: run_sandboxed("true", ws, timeout=10))
        bare = median_ms(lambda: subprocess.run(["bash", "-c", "true"], cwd=ws, check=True))
    print(
        f"sandbox: run_sandboxed('true') {sandboxed:.2f} ms, bare bash -c {bare:.2f} ms, "
        f"ratio {sandboxed / bare:.2f}x"
    )


if __name__ == "__main__":
    main()
