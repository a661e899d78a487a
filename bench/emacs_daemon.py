"""`M-x passepartout-chat` to the first answer, with the daemon warm and cold, each
beside today's ``serve`` child of Emacs, in the same run, against the fake model.

    python bench/emacs_daemon.py            # 7 warm samples, 3 cold ones of each
    python bench/emacs_daemon.py --quick    # 3 and 1

Each sample is a fresh ``emacs --batch -l bench/emacs_daemon.el``; the package loads
and org-mode starts once before the clock starts (org's own first start, ~1.7 s in a
fresh Emacs, is paid by any Emacs that opens an org file), which then runs from
``passepartout-chat`` to the end of the first reply (a short one, streamed by the fake
model).

- daemon warm: the daemon runs and has answered once; Emacs attaches and asks.
  Target: <= 100 ms.
- daemon cold: no daemon runs: ``passepartout daemon --detach`` starts one, Emacs
  attaches, the agent boots and answers; the daemon is stopped after each sample.
- baseline, cold: the ``emacs`` lifetime: Emacs starts its own ``serve`` child,
  which boots and answers (what every Emacs paid before the daemon).
- baseline, warm: the second turn in that same Emacs, its child warm and connected
  (the best the old design could do, and only once Emacs had paid a cold start).

Medians of the samples; each line also shows the spread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakellm import FakeLLM  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")
TARGET_WARM_MS = 100.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    warm_n, cold_n = (3, 1) if args.quick else (7, 3)
    emacs = shutil.which("emacs")
    if emacs is None:
        print("emacs is not installed", file=sys.stderr)
        return 2
    state = Path(tempfile.mkdtemp(prefix="pp-bench-daemon-"))
    runtime = Path(tempfile.mkdtemp(prefix="ppb-", dir="/tmp"))  # short: a socket path
    with FakeLLM(default="echo") as fake:
        env = bench_env(state, runtime, fake.base_url)
        try:
            results = measure(emacs, env, warm_n, cold_n)
        finally:
            cli(env, "stop")
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(runtime, ignore_errors=True)
    report(results, warm_n, cold_n)
    return 0


def bench_env(state: Path, runtime: Path, base_url: str) -> dict[str, str]:
    for name in ("home", "config", "memex/projects", "memex/system"):
        (state / name).mkdir(parents=True, exist_ok=True)
    server = [f"PASSEPARTOUT_HOME={state}/home", f"PASSEPARTOUT_CONFIG_DIR={state}/config",
              f"MEMEX_DIR={state}/memex", f"XDG_RUNTIME_DIR={runtime}",
              "PASSEPARTOUT_MODEL=openai/fake-model", f"OPENAI_BASE_URL={base_url}",
              f"OPENAI_API_BASE={base_url}", "OPENAI_API_KEY=sk-bench",
              "LITELLM_LOCAL_MODEL_COST_MAP=True", "HEARTBEAT_INTERVAL=3600"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSEPARTOUT_")}
    env.update(BENCH_PYTHON=PYTHON, BENCH_ROOT=str(ROOT), BENCH_SERVER_ENV="\n".join(server))
    env.update(dict(line.split("=", 1) for line in server))  # for the `passepartout` CLI
    return env


def sample(emacs: str, env: dict[str, str], lifetime: str) -> tuple[float, float]:
    """One fresh Emacs: (first answer, second answer) in ms."""
    done = subprocess.run(
        [emacs, "-Q", "--batch", "-L", str(ROOT / "elisp"), "-l",
         str(ROOT / "bench" / "emacs_daemon.el"), "-f", "passepartout-bench-daemon-run"],
        cwd=ROOT, env={**env, "BENCH_LIFETIME": lifetime}, capture_output=True, text=True,
        timeout=180)
    if done.returncode != 0:
        raise SystemExit(f"emacs failed ({lifetime}):\n{done.stderr[-3000:]}")
    values = dict(line.split(maxsplit=1) for line in done.stdout.splitlines()
                  if line.startswith(("first-ms ", "again-ms ")))
    return float(values["first-ms"]), float(values["again-ms"])


def cli(env: dict[str, str], *args: str) -> None:
    subprocess.run([PYTHON, "-m", "passepartout", *args], cwd=ROOT, env=env,
                   capture_output=True, text=True, timeout=60)


def measure(emacs: str, env: dict[str, str], warm_n: int,
            cold_n: int) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {"daemon-cold": [], "serve-cold": [],
                                       "daemon-warm": [], "serve-warm": [],
                                       "daemon-attached": []}
    for _ in range(cold_n):  # alternating, so that neither gets a warmer disk cache
        cli(env, "stop")
        first, _again = sample(emacs, env, "persistent")
        results["daemon-cold"].append(first)
        cli(env, "stop")
        first, again = sample(emacs, env, "emacs")
        results["serve-cold"].append(first)
        results["serve-warm"].append(again)
    sample(emacs, env, "persistent")  # the daemon starts and answers once: warm
    for _ in range(warm_n):
        first, again = sample(emacs, env, "persistent")
        results["daemon-warm"].append(first)
        results["daemon-attached"].append(again)
    return results


def line(label: str, values: list[float]) -> str:
    return (f"  {label:44} median {statistics.median(values):8.1f} ms"
            f"   (min {min(values):.1f}, max {max(values):.1f}, n={len(values)})")


def report(r: dict[str, list[float]], warm_n: int, cold_n: int) -> None:
    print(f"M-x passepartout-chat to the first answer, fake model ({warm_n} warm, "
          f"{cold_n} cold samples; a fresh Emacs each)")
    print("cold: nothing running")
    print(line("daemon: started by Emacs, then attached", r["daemon-cold"]))
    print(line("baseline: serve child started by Emacs", r["serve-cold"]))
    print("warm")
    print(line("daemon warm: a fresh Emacs attaches and asks", r["daemon-warm"]))
    print(line("baseline: serve child warm, already connected", r["serve-warm"]))
    print(line("daemon warm, already attached (second turn)", r["daemon-attached"]))
    warm = statistics.median(r["daemon-warm"])
    verdict = "met" if warm <= TARGET_WARM_MS else "missed"
    print(f"target daemon warm <= {TARGET_WARM_MS:.0f} ms: {verdict} ({warm:.1f} ms)")


if __name__ == "__main__":
    raise SystemExit(main())
