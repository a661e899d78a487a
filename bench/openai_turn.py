"""A chat turn through ``passepartout openai`` (the OpenAI-compatible endpoint, with
the official ``openai`` client, streamed) beside the same turn typed into one running
``passepartout chat``, against one warm daemon and the fake model, in the same run.

The daemon is started once (``passepartout daemon --detach``) in a scratch home, memex
and runtime directory, then the endpoint (``passepartout openai --port 0``) and one
terminal chat.  Each turn is timed from sending the prompt to its whole answer (the
fake model echoes the prompt); the endpoint's first streamed piece is timed too.  The
figure is the median of several turns, and the ratio endpoint / terminal.

    .venv/bin/python bench/openai_turn.py [--runs 9]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from fakellm import FakeLLM  # noqa: E402
from terminal_chat import PYTHON, cli, scratch_env, wait_ready  # noqa: E402


def endpoint_turns(url: str, token: str, runs: int) -> tuple[list[float], list[float]]:
    import openai

    client = openai.OpenAI(base_url=url, api_key=token, max_retries=0, timeout=120)
    whole, first = [], []
    for i in range(runs + 1):
        prompt = f"endpoint {i}"
        start = time.perf_counter()
        seen: float | None = None
        text = ""
        for chunk in client.chat.completions.create(
                model="passepartout", stream=True,
                messages=[{"role": "user", "content": prompt}]):
            piece = chunk.choices[0].delta.content if chunk.choices else None
            if piece:
                seen = seen or time.perf_counter()
                text += piece
        took = time.perf_counter() - start
        if prompt not in text:
            raise SystemExit(f"the endpoint's answer did not echo {prompt!r}: {text[:200]!r}")
        if i:  # the first turn warms the endpoint's connection
            whole.append(took)
            first.append((seen or time.perf_counter()) - start)
    return whole, first


def chat_turns(env: dict[str, str], runs: int) -> list[float]:
    proc = subprocess.Popen([PYTHON, "-m", "passepartout", "chat"], env=env, cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None
    times = []
    try:
        for i in range(runs + 1):
            prompt = f"terminal {i}"
            start = time.perf_counter()
            proc.stdin.write(prompt + "\n")
            proc.stdin.flush()
            while prompt not in (line := proc.stdout.readline()):
                if not line:
                    raise SystemExit(f"chat: the reply never named {prompt!r}")
            if i:
                times.append(time.perf_counter() - start)
    finally:
        proc.stdin.close()
        proc.wait(120)
        proc.stdout.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="passepartout-bench-openai-"))
    with FakeLLM(default="echo") as fake:
        env = scratch_env(tmp, fake)
        env["PASSEPARTOUT_STREAM"] = "1"
        endpoint = None
        try:
            detach = cli(env, "daemon", "--detach")
            if detach.returncode != 0:
                raise SystemExit(f"the daemon did not start: {detach.stderr}")
            wait_ready(env)
            endpoint = subprocess.Popen([PYTHON, "-m", "passepartout", "openai", "--port", "0"],
                                        env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True)
            assert endpoint.stdout is not None
            url = endpoint.stdout.readline().split()[0]
            token = (tmp / "home" / "openai.token").read_text().strip()
            chat = chat_turns(env, args.runs)
            whole, first = endpoint_turns(url, token, args.runs)
        finally:
            if endpoint is not None:
                endpoint.terminate()
                endpoint.wait(20)
            cli(env, "stop")
            shutil.rmtree(env["XDG_RUNTIME_DIR"], ignore_errors=True)
            shutil.rmtree(tmp, ignore_errors=True)

    def line(name: str, values: list[float]) -> float:
        median = statistics.median(values)
        print(f"{name:<34} {median * 1000:8.1f} ms   (median of {len(values)}; "
              + "/".join(f"{v * 1000:.0f}" for v in values) + ")")
        return median

    ours = line("passepartout chat (terminal)", chat)
    theirs = line("openai endpoint, whole answer", whole)
    line("openai endpoint, first piece", first)
    print(f"{'endpoint / terminal':<34} {theirs / ours:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
