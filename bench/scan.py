"""Benchmark: the orchestrator's memex scan against orgparse parsing every file.

Generates a memex (default 1,200 files, about 60 MB) of org notes where a few
headings carry ``:CRON:`` or ``:HOOK:`` drawers, then measures in one run:

- the bootstrap scan (``Orchestrator.bootstrap``: pre-filter, orgparse on the
  headings that matter, registry and cron state), median of several runs;
- the baseline: ``orgparse.load`` on every file (what a naive scan would do);
- one incremental rescan (a file edited on disk, ``Orchestrator.rescan``), median.

Targets: at least 25 MB/s for the bootstrap scan, a one-file rescan within 10 ms.
The files are read from the page cache (they were just written).

    .venv/bin/python bench/scan.py [--files 1200] [--mb 60] [--runs 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import orgparse

from passepartout.events.orchestrator import Orchestrator

_TEXT = ("the of and to in is that for it with as was on be by this are from at or an "
         "project note meeting idea draft review emacs org agenda schedule task plan memory "
         "agent cron hook heading property drawer link table code block summary week")
WORDS = _TEXT.split(" ")


def paragraph(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return "\n".join(text[i:i + 78] for i in range(0, len(text), 78))


def org_file(rng: random.Random, size: int, index: int, special: bool) -> str:
    parts = [f"#+TITLE: Notes {index}\n#+FILETAGS: :bench:\n\n"]
    total = 0
    heading = 0
    while total < size:
        heading += 1
        level = rng.choice((1, 2, 2, 3))
        todo = rng.choice(("", "", "TODO ", "DONE "))
        block = [f"{'*' * level} {todo}Heading {index}.{heading} :tag{heading % 7}:\n"]
        if special and heading in (3, 9):
            kind = ":CRON: <2026-05-04 Mon 09:00 +1w>" if heading == 3 else ":HOOK: verify-notes"
            block.append(f":PROPERTIES:\n:ID: job-{index}-{heading}\n{kind}\n:END:\n")
        elif rng.random() < 0.3:
            block.append(f":PROPERTIES:\n:ID: n-{index}-{heading}\n:CREATED: [2026-01-0"
                         f"{1 + heading % 9} Thu]\n:END:\n")
        block.append(paragraph(rng, rng.randint(40, 400)) + "\n")
        if rng.random() < 0.1:
            block.append("#+begin_src python\nprint('cron: hook:')\n#+end_src\n")
        text = "".join(block)
        parts.append(text)
        total += len(text)
    return "".join(parts)


def generate(root: Path, files: int, megabytes: float, seed: int = 7) -> tuple[int, list[Path]]:
    rng = random.Random(seed)
    size = int(megabytes * 1_000_000 / files)
    special: list[Path] = []
    written = 0
    for i in range(files):
        folder = root / ("projects" if i % 3 else "system") / f"d{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"note{i}.org"
        has_jobs = i % 25 == 0  # 4% of the files carry CRON/HOOK drawers
        data = org_file(rng, size, i, has_jobs).encode("utf-8")
        path.write_bytes(data)
        written += len(data)
        if has_jobs:
            special.append(path)
    return written, special


def median_seconds(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1200)
    parser.add_argument("--mb", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-runs", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="passepartout-bench-") as tmp:
        root = Path(tmp)
        memex = root / "memex"
        written, special = generate(memex, args.files, args.mb)
        mb = written / 1e6
        print(f"memex: {args.files} files, {mb:.1f} MB, {len(special)} with CRON/HOOK drawers")

        def bootstrap() -> Orchestrator:
            orch = Orchestrator(home=root / "home", memex_dir=memex, tz=ZoneInfo("UTC"))
            orch.bootstrap()
            return orch

        orch = bootstrap()
        report = orch.bootstrap_report
        assert report is not None
        print(f"found: {report.nodes} nodes, {report.jobs} jobs, {len(report.problems)} problems")
        scan = median_seconds(bootstrap, args.runs)

        def baseline() -> None:
            for path in memex.rglob("*.org"):
                orgparse.load(str(path))

        base = median_seconds(baseline, args.baseline_runs)
        print(f"bootstrap scan:   {scan * 1000:9.1f} ms  {mb / scan:8.1f} MB/s "
              f"(median of {args.runs}; target >= 25 MB/s)")
        print(f"orgparse, every file: {base * 1000:5.0f} ms  {mb / base:8.1f} MB/s "
              f"(median of {args.baseline_runs})")
        print(f"ratio: the bootstrap scan is {base / scan:.1f}x faster than orgparse on all files")

        target = special[len(special) // 2]
        original = target.read_text(encoding="utf-8")
        flip = [original.replace("+1w>", "+2w>"), original]
        counter = [0]

        def rescan() -> None:
            counter[0] += 1
            target.write_text(flip[counter[0] % 2], encoding="utf-8")
            started = time.perf_counter()
            orch.rescan(target)
            timings.append(time.perf_counter() - started)

        timings: list[float] = []
        for _ in range(max(args.runs, 21)):
            rescan()
        one = statistics.median(timings)
        size_kb = len(original.encode("utf-8")) / 1000
        single = median_seconds(lambda: orgparse.load(str(target)), 5)
        print(f"incremental rescan of one file ({size_kb:.0f} KB, its job changed): "
              f"{one * 1000:.2f} ms median of {len(timings)} (target <= 10 ms); "
              f"orgparse on that file: {single * 1000:.2f} ms")
        plain = next(p for p in memex.rglob("*.org") if p not in special)
        quiet = median_seconds(lambda: orch.rescan(plain), 21)
        print(f"incremental rescan of a file without drawers: {quiet * 1000:.2f} ms")
        orch.stop()  # its last state save, before the directory goes
    return 0


if __name__ == "__main__":
    sys.exit(main())
