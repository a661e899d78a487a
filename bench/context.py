"""Context assembly time for 10k and 100k org nodes, under a CONTEXT_MAX_TOKENS budget.

For each size, a memory store is filled with an org tree (files > projects > tasks), the
person's focus is put on one task, and the context of a chat turn is assembled: the
foveal-peripheral rendering (the task in full, its ancestors, siblings and children as
headlines, related notes from full-text search) and the fit of a 50-turn conversation
under the budget.  The baseline, measured in the same run, is the same assembly without
memory (the conversation alone).  Median of 5 runs each.

    .venv/bin/python bench/context.py [--sizes 10000 100000] [--budget 8000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from passepartout.context import Assembly, Focus, assemble, peripheral_sections
from passepartout.llm.tokens import counter, message_tokens
from passepartout.memory import MemoryNode, MemoryStore

RUNS = 5
MODEL = "openai/gpt-4o-mini"
WORDS = ["garden", "invoice", "report", "tomatoes", "fence", "travel", "budget", "review",
         "paper", "deadline", "kernel", "recipe", "meeting", "draft", "taxes", "music"]


def build_store(path: Path, size: int) -> tuple[MemoryStore, str]:
    """``size`` nodes: 100 files, 10 projects each, tasks under the projects."""
    store = MemoryStore.open(path, verify=False)
    per_project = max(1, (size - 100 - 1000) // 1000)
    batch: list[MemoryNode] = []
    focus = ""
    for f in range(100):
        batch.append(MemoryNode(f"f{f}", f"notes-{f}.org", source=f"notes-{f}.org"))
        for p in range(10):
            pid = f"f{f}p{p}"
            batch.append(MemoryNode(pid, f"Project {WORDS[(f + p) % len(WORDS)]} {f}.{p}",
                                    parent=f"f{f}", tags=("project",)))
            for t in range(per_project):
                word = WORDS[(f * 7 + p * 3 + t) % len(WORDS)]
                batch.append(MemoryNode(
                    f"{pid}t{t}", f"Task {t}: {word}", parent=pid,
                    todo="TODO" if t % 3 else "DONE", properties={"EFFORT": f"{t % 5}h"},
                    body=f"Notes on the {word}: " + "details " * 20,
                ))
                focus = focus or f"{pid}t{t}"
        if len(batch) > 5000:
            store.put_many(batch)
            batch = []
    store.put_many(batch)
    return store, "f50p5t3" if per_project > 3 else focus


def conversation(turns: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for i in range(turns):
        out.append({"role": "user", "content": f"question {i}: " + "what about this " * 30})
        out.append({"role": "assistant", "content": f"answer {i}: " + "it is like that " * 60})
    out.append({"role": "user", "content": "What should I do next on this task?"})
    return out


def median_ms(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--budget", type=int, default=8000, help="CONTEXT_MAX_TOKENS")
    args = parser.parse_args()
    count = counter(MODEL)
    prefix = {"role": "system", "content": "You are Passepartout. " * 100}
    history = conversation(50)

    def count_message(m: dict[str, str]) -> int:
        return message_tokens(m, count)

    def baseline() -> object:
        return assemble(prefix, history, [], max_tokens=args.budget, count=count,
                        count_message=count_message)

    baseline()  # load the tokenizer outside the timing
    base = median_ms(baseline)
    print(f"baseline (50-turn conversation, no memory): {base:.2f} ms median of {RUNS}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            store, focus_id = build_store(Path(tmp) / "memory.sqlite3", size)
            built = time.perf_counter() - started
            focus = Focus(id=focus_id, file="notes-50.org")
            query = "What should I do next on the tomatoes follow-up?"

            def with_memory(
                store: MemoryStore = store, focus: Focus = focus, query: str = query
            ) -> Assembly:
                sections = peripheral_sections(store, focus, query)
                return assemble(prefix, history, sections, max_tokens=args.budget,
                                count=count, count_message=count_message)

            result = with_memory()
            ms = median_ms(with_memory)
            store.close()
        print(f"{size:>7} nodes (store built in {built:.1f} s): "
              f"{ms:.2f} ms median of {RUNS}, {ms / base:.1f}x the baseline; "
              f"{result.tokens} tokens <= {args.budget}, "
              f"{len(result.dropped)} old messages left out, "
              f"sections dropped: {result.dropped_sections or 'none'}")


if __name__ == "__main__":
    main()
