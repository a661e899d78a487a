"""``passepartout chat``: the first answer, and the exit after end of input, with the
daemon warm, beside ``--standalone`` (the agent in the chat's own process) in the same run.

Every figure is the median of several runs against the fake OpenAI-protocol model
(tests/fakellm.py, answering with the prompt), in a scratch home, memex and runtime
directory; the daemon is started once (``passepartout daemon --detach``), warmed by one
chat, and stopped at the end.  "first answer" is from starting the process to the
reply's line on its standard output; "exit" from closing its standard input to the
process's end.  Targets (issue: the terminal attaches): first answer <= 300 ms,
exit <= 200 ms.

    .venv/bin/python bench/terminal_chat.py [--runs 7] [--standalone-runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakellm import FakeLLM  # noqa: E402

PYTHON = sys.executable
FIRST_TARGET, EXIT_TARGET = 0.300, 0.200


@dataclass
class Run:
    first: float  # seconds from the start to the reply's line
    exit: float  # seconds from closing stdin to the process's end
    status: int


def scratch_env(tmp: Path, fake: FakeLLM) -> dict[str, str]:
    for name in ("home", "config", "memex"):
        (tmp / name).mkdir()
    runtime = Path(tempfile.mkdtemp(prefix="ppb-", dir="/tmp"))  # a socket path stays short
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PASSEPARTOUT") and not k.endswith("_API_KEY")}
    env.update(HOME=str(tmp), PASSEPARTOUT_HOME=str(tmp / "home"),
               PASSEPARTOUT_CONFIG_DIR=str(tmp / "config"), MEMEX_DIR=str(tmp / "memex"),
               XDG_RUNTIME_DIR=str(runtime), OPENAI_API_KEY="sk-bench",
               OPENAI_BASE_URL=fake.base_url, PASSEPARTOUT_MODEL="openai/gpt-4o-mini",
               LITELLM_LOCAL_MODEL_COST_MAP="True", PASSEPARTOUT_EMBEDDINGS="off")
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "passepartout", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def chat_once(env: dict[str, str], prompt: str, *args: str) -> Run:
    start = time.perf_counter()
    proc = subprocess.Popen([PYTHON, "-m", "passepartout", "chat", *args], env=env, cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(prompt + "\n")
    proc.stdin.flush()
    # The fake model echoes the whole user message: the context block, then the prompt.
    while prompt not in (line := proc.stdout.readline()):
        if not line:
            proc.kill()
            raise SystemExit(f"chat {' '.join(args)}: the reply never named {prompt!r}")
    first = time.perf_counter() - start
    closed = time.perf_counter()
    proc.stdin.close()
    status = proc.wait(120)
    took = time.perf_counter() - closed
    proc.stdout.close()
    return Run(first, took, status)


def python_start(env: dict[str, str], runs: int) -> float:
    """The floor: starting the interpreter and importing the chat's client side."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([PYTHON, "-c", "import passepartout.cli, passepartout.faces.terminal.chat,"
                        " passepartout.faces.terminal.attached"], env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def wait_ready(env: dict[str, str]) -> None:
    deadline = time.monotonic() + 120
    while "still starting" in (out := cli(env, "status").stdout) or "running" not in out:
        if time.monotonic() > deadline:
            raise SystemExit("the daemon did not get ready within 120 s")
        time.sleep(0.1)


def report(name: str, runs: list[Run]) -> tuple[float, float]:
    first = statistics.median(r.first for r in runs)
    exit_ = statistics.median(r.exit for r in runs)
    statuses = sorted({r.status for r in runs})
    print(f"{name:<24} first answer {first * 1000:8.0f} ms   exit after EOF "
          f"{exit_ * 1000:7.0f} ms   (median of {len(runs)}; first {_ms(r.first for r in runs)};"
          f" exit {_ms(r.exit for r in runs)}; status {statuses})")
    return first, exit_


def _ms(values: object) -> str:
    return "/".join(f"{v * 1000:.0f}" for v in values)  # type: ignore[attr-defined]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--standalone-runs", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="passepartout-bench-chat-"))
    with FakeLLM(default="echo") as fake:
        env = scratch_env(tmp, fake)
        try:
            started = time.perf_counter()
            detach = cli(env, "daemon", "--detach")
            if detach.returncode != 0:
                raise SystemExit(f"the daemon did not start: {detach.stderr}")
            wait_ready(env)
            print(f"daemon started and booted in {time.perf_counter() - started:.1f} s")
            chat_once(env, "warm up")
            floor = python_start(env, args.runs)
            attached = [chat_once(env, f"attached {i}") for i in range(args.runs)]
            standalone = [chat_once(env, f"standalone {i}", "--standalone", "--session",
                                    f"standalone-{i}") for i in range(args.standalone_runs)]
        finally:
            cli(env, "stop")
            shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'interpreter + imports':<24} {floor * 1000:21.0f} ms   (the client's floor)")
    first, exit_ = report("attached (daemon warm)", attached)
    report("--standalone (baseline)", standalone)
    verdict = lambda ok: "met" if ok else "MISSED"  # noqa: E731
    print(f"targets: first answer <= {FIRST_TARGET * 1000:.0f} ms {verdict(first <= FIRST_TARGET)}"
          f", exit <= {EXIT_TARGET * 1000:.0f} ms {verdict(exit_ <= EXIT_TARGET)}")
    bad = [r.status for r in attached + standalone if r.status != 0]
    if bad:
        print(f"non-zero exit statuses: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
