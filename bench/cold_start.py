"""The first answer after a cold daemon start, beside ``python -c "import litellm"``.

Each run starts ``passepartout daemon --detach`` on a fresh state directory (so nothing
is warm but the OS's file cache), against the fake OpenAI-protocol server of the tests,
and times, from the start command:

- ready: ``daemon --detach`` has returned (the daemon says where it is only once it
  has booted and loaded the model layer: ready means it can answer);
- first answer: a chat sent through ``Face.attach`` at that moment has its whole reply.

Medians of N runs, beside the median of ``python -c "import litellm"`` (with
LITELLM_LOCAL_MODEL_COST_MAP=True, as the daemon imports it), each a new process.

    .venv/bin/python bench/cold_start.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakellm import FakeLLM  # noqa: E402

from passepartout.faces.face import Chunk, Done, Face  # noqa: E402

MODEL = "openai/gpt-4o-mini"


def import_litellm() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litellm"], check=True,
                   env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    return time.perf_counter() - started


def cold_start(fake: FakeLLM) -> tuple[float, float]:
    """(ready, first answer) in seconds after the start command, one fresh daemon."""
    with tempfile.TemporaryDirectory(prefix="ppcold-", dir="/tmp") as tmp:
        root = Path(tmp)
        for name in ("config", "memex/projects", "memex/system", "run"):
            (root / name).mkdir(parents=True)
        (root / "run").chmod(0o700)
        (root / "memex" / "notes.org").write_text("* A heading\nsome text\n")
        env = {**os.environ, "HOME": str(root), "PASSEPARTOUT_HOME": str(root / "home"),
               "PASSEPARTOUT_CONFIG_DIR": str(root / "config"), "XDG_RUNTIME_DIR":
               str(root / "run"), "MEMEX_DIR": str(root / "memex"),
               "PASSEPARTOUT_MODEL": MODEL, "PASSEPARTOUT_EMBEDDINGS": "off",
               "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": fake.base_url,
               "PYTHONPATH": str(ROOT)}
        started = time.perf_counter()
        detach = subprocess.run([sys.executable, "-m", "passepartout", "daemon", "--detach"],
                                cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        ready = time.perf_counter() - started
        if detach.returncode != 0:
            raise SystemExit(f"the daemon did not start: {detach.stderr}")
        try:
            face = Face.attach(root / "home", environ=env)
            if face is None:
                raise SystemExit("no daemon to attach to")
            with face:
                text = ""
                for event in face.send("cold", "hello").events(timeout=60):
                    if isinstance(event, Chunk):
                        text += event.text
                    if isinstance(event, Done):
                        break
            answered = time.perf_counter() - started
            if not text:
                raise SystemExit("the first turn had no answer")
        finally:
            subprocess.run([sys.executable, "-m", "passepartout", "stop"], cwd=ROOT, env=env,
                           capture_output=True, timeout=60)
    return ready, answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    baseline = [import_litellm() for _ in range(args.runs)]
    readies, answers = [], []
    with FakeLLM(default="echo") as fake:
        for _ in range(args.runs):
            ready, answered = cold_start(fake)
            readies.append(ready)
            answers.append(answered)
    print(f"runs: {args.runs} (medians; each a new process)")
    print(f"python -c 'import litellm'        {statistics.median(baseline):6.2f} s")
    print(f"daemon --detach returned (ready)  {statistics.median(readies):6.2f} s")
    print(f"first answer after a cold start   {statistics.median(answers):6.2f} s")


if __name__ == "__main__":
    main()
