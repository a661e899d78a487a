"""The first answer after a cold daemon start, beside ``python -c "import litellm"``.

Each run starts ``passepartout daemon --detach`` on a fresh state directory (so nothing
is warm but the OS's file cache), against the fake OpenAI-protocol server of the tests,
and times, from the start command:

- ready: ``daemon --detach`` has returned (the daemon says where it is only once it
  has booted and loaded the model layer: ready means it can answer);
- first answer: a chat sent through ``Face.attach`` at that moment has its whole reply.

Medians of N runs, beside the median of ``python -c "import litellm"`` (with
LITELLM_LOCAL_MODEL_COST_MAP=True, as the daemon imports it), each a new process; with
the processor time each used (the daemon's until it was ready), which a busy machine
changes far less than wall times; and the load average before and after.

The checkout's modules are compiled to bytecode first, as an installed package's are
(an environment with PYTHONDONTWRITEBYTECODE would otherwise compile them from source
at every start, some 0.3 s that no installation pays).

    .venv/bin/python bench/cold_start.py [--runs 5]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakellm import FakeLLM  # noqa: E402

from passepartout.faces.face import Face  # noqa: E402
from passepartout.protocol import Chunk, Done  # noqa: E402

MODEL = "openai/gpt-4o-mini"


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def import_litellm() -> tuple[float, float]:
    """(wall, processor) seconds of ``python -c "import litellm"``."""
    started, cpu = time.perf_counter(), children_cpu()
    subprocess.run([sys.executable, "-c", "import litellm"], check=True,
                   env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    return time.perf_counter() - started, children_cpu() - cpu


def process_cpu(pid: int) -> float:
    """The processor time ``pid`` has used so far (user and system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cold_start(fake: FakeLLM) -> tuple[float, float, float]:
    """(ready, first answer) in seconds after the start command, and the daemon's
    processor time until ready, one fresh daemon."""
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
        pid = int(detach.stdout.split("pid ", 1)[1].split(",", 1)[0])
        cpu = process_cpu(pid)
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
    return ready, answered, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "passepartout", quiet=1)
    before = load()
    baseline = [import_litellm() for _ in range(args.runs)]
    runs = []
    with FakeLLM(default="echo") as fake:
        for _ in range(args.runs):
            runs.append(cold_start(fake))

    def median(values: list[float]) -> float:
        return statistics.median(values)

    print(f"runs: {args.runs} (medians; each a new process); load average {before} "
          f"before, {load()} after")
    print(f"python -c 'import litellm'        {median([b[0] for b in baseline]):6.2f} s  "
          f"(cpu {median([b[1] for b in baseline]):.2f} s)")
    print(f"daemon --detach returned (ready)  {median([r[0] for r in runs]):6.2f} s  "
          f"(daemon's cpu {median([r[2] for r in runs]):.2f} s)")
    print(f"first answer after a cold start   {median([r[1] for r in runs]):6.2f} s")


if __name__ == "__main__":
    main()
