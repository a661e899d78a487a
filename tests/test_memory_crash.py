"""SIGKILL the memory store at random moments; nothing acknowledged may be lost.

A child process (``memory_crash_child.py``) writes, snapshots, rolls back and
collects garbage in a loop, printing each operation before it starts and its
root hash once the call has returned. The parent kills it after a random delay,
reopens the store (which verifies every hash), and replays the acknowledged
operations on a second store: the reopened state must be exactly (equal root
hash) the state after the last acknowledged operation, or after the one that
was in flight when the kill came. Each database lives through many kills.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from passepartout.memory.store import MemoryStore

sys.path.insert(0, str(Path(__file__).parent))
from memory_crash_child import apply

CHILD = Path(__file__).with_name("memory_crash_child.py")
RUNS = 100
WORKERS = 4
KEEP = 5


def _state(store: MemoryStore) -> tuple[str, list[tuple[int, str]]]:
    """The head plus the kept snapshots: what a later rollback depends on."""
    return store.root_hash(), [(s.seq, s.root) for s in store.snapshots()]


@dataclass
class Tally:
    runs: int = 0
    acked: int = 0
    in_flight: int = 0
    in_flight_committed: int = 0
    failures: list[str] = field(default_factory=list)


def _one_kill(db: Path, replay: MemoryStore, rng: random.Random, seed: int, tally: Tally) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(db), str(seed), str(KEEP)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the store is open: from here on, kill at random
    time.sleep(rng.uniform(0.01, 0.4))
    proc.send_signal(signal.SIGKILL)
    # Read through the same buffered file object: readline() may have read ahead.
    out = first + proc.stdout.read()
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, f"child ended by itself: {err[-2000:]}"
    lines = out.split("\n")[:-1]  # the last piece is empty or a half-written line
    pending: dict | None = None
    for line in lines:
        tag, _, rest = line.partition(" ")
        if tag == "S":
            assert rest == replay.root_hash(), "child opened a state other than the last one"
        elif tag == "B":
            pending = json.loads(rest.partition(" ")[2])
        elif tag == "A":
            assert pending is not None
            apply(replay, pending)
            assert replay.root_hash() == rest.split()[1], "replay diverged from the child"
            tally.acked += 1
            pending = None
        elif tag == "R":
            assert pending is not None
            with pytest.raises((ValueError, KeyError)):
                apply(replay, pending)
            pending = None
    store = MemoryStore.open(db, keep_snapshots=KEEP)
    try:
        assert store.load_report is not None and store.load_report.ok, store.load_report
        report = store.verify()
        assert report.ok, report.summary()
        state = _state(store)
        if pending is not None:
            tally.in_flight += 1
            if state != _state(replay):
                # The kill came after the commit but before the child could say so.
                apply(replay, pending)
                tally.in_flight_committed += 1
        assert state == _state(replay), "reopened state is not an acknowledged state"
        assert len(store) == len(replay)
    finally:
        store.close()
    tally.runs += 1


def _worker(base: Path, index: int, runs: int, tally: Tally) -> None:
    rng = random.Random(1000 + index)
    db = base / f"w{index}" / "memory.sqlite3"
    replay = MemoryStore.open(":memory:", keep_snapshots=KEEP)
    try:
        for run in range(runs):
            _one_kill(db, replay, rng, index * 1000 + run + 1, tally)
    except AssertionError as e:
        tally.failures.append(f"worker {index}, run {tally.runs}: {e}")
    finally:
        replay.close()


@pytest.mark.slow
def test_sigkill_loses_nothing_acknowledged(tmp_path: Path) -> None:
    tallies = [Tally() for _ in range(WORKERS)]
    threads = [
        threading.Thread(target=_worker, args=(tmp_path, i, RUNS // WORKERS, tallies[i]))
        for i in range(WORKERS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failures = [f for t in tallies for f in t.failures]
    assert not failures, failures
    runs = sum(t.runs for t in tallies)
    in_flight = sum(t.in_flight for t in tallies)
    committed = sum(t.in_flight_committed for t in tallies)
    acked = sum(t.acked for t in tallies)
    print(f"{runs} kills, {acked} acknowledged ops, {in_flight} mid-operation,"
          f" {committed} of those committed before the kill")
    assert runs == RUNS
    assert acked > 3 * RUNS  # the child really was writing when it died
    assert in_flight > RUNS // 2  # most kills landed inside an operation
