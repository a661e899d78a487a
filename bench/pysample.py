"""Run a Python module under a small sampling profiler of its threads.

    python bench/pysample.py OUT PREFIXES -m MODULE ARGS...

Every millisecond the stacks of the threads whose name starts with one of
PREFIXES (comma-separated, e.g. ``lane-,llm-`` for the agent's session lanes
and its model calls) are sampled.  A thread whose top frame is at a blocking
call (a line calling get/wait/sleep/acquire/recv/read/select/join) counts as
waiting there; otherwise as busy.  At exit (also through ``os._exit``) OUT
gets, per function, the share of busy samples in which it was on the stack
(inclusive) and on top (exclusive), and the places where threads waited.  SIGUSR1
forgets the samples taken so far (the driver sends it after a warm-up).  Time a
thread spends blocked in C (a socket read) counts for the Python frame that
called it: this is wall-clock sampling.
``bench/emacs_bridge.py --profile-python OUT`` runs the server this way.
"""

from __future__ import annotations

import atexit
import collections
import linecache
import os
import runpy
import signal
import sys
import threading
import time
from types import FrameType
from typing import NoReturn

IDLE = {"wait", "_wait_for_tstate_lock", "get", "select", "poll", "read", "recv", "readinto"}
PLUMBING = ("threading.py", "queue.py", "selectors.py", "socket.py", "socketserver.py",
            "concurrent/futures/thread.py")
BLOCKING = ("get(", "wait(", "sleep(", "acquire(", "recv", "read(", "readline(", "select(",
            "join(", "accept(")


def _waiting(frame: FrameType) -> bool:
    """True when the thread is blocked: in a known wait, or at a line calling one."""
    if frame.f_code.co_name in IDLE:
        return True
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno or 0)
    return any(call in line for call in BLOCKING)


class Sampler:
    """Counts where the sampled threads are, every ``interval`` seconds."""

    def __init__(self, prefix: str, interval: float = 0.001) -> None:
        self.prefix = prefix
        self.prefixes = tuple(prefix.split(","))
        self.interval = interval
        self.samples = 0
        self.inclusive: collections.Counter[str] = collections.Counter()
        self.exclusive: collections.Counter[str] = collections.Counter()
        self.waits: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._run, name="pysample", daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                name = names.get(ident, "")
                if name != "pysample" and name.startswith(self.prefixes):
                    try:
                        self._count(frame)
                    except Exception as err:  # a sampler that dies would report nothing
                        self.waits[f"(sampling failed: {err!r})"] += 1

    def _count(self, frame: FrameType) -> None:
        if _waiting(frame):
            caller: FrameType | None = frame
            while caller is not None and caller.f_code.co_filename.endswith(PLUMBING):
                caller = caller.f_back
            waiter = caller or frame
            self.waits[f"{_where(waiter)} line {waiter.f_lineno}"] += 1
            return
        self.samples += 1
        self.exclusive[_where(frame)] += 1
        seen = set()
        current: FrameType | None = frame
        while current is not None:
            where = _where(current)
            if where not in seen:
                seen.add(where)
                self.inclusive[where] += 1
            current = current.f_back

    def reset(self) -> None:
        """Forget the samples so far (the warm-up)."""
        self.samples = 0
        self.inclusive.clear()
        self.exclusive.clear()
        self.waits.clear()

    def report(self, path: str) -> None:
        self._stop.set()
        total = max(self.samples, 1)
        lines = [f"{self.samples} samples of busy '{self.prefix}*' threads "
                 f"(every {self.interval * 1000:.0f} ms)", "", "inclusive:"]
        lines += [f"{100 * n / total:6.1f}%  {w}" for w, n in self.inclusive.most_common(45)]
        lines += ["", "exclusive:"]
        lines += [f"{100 * n / total:6.1f}%  {w}" for w, n in self.exclusive.most_common(25)]
        lines += ["", "waiting (samples, where a sampled thread was blocked):"]
        lines += [f"{n:8d}  {w}" for w, n in self.waits.most_common(15)]
        with open(path, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")


def _where(frame: FrameType) -> str:
    code = frame.f_code
    path = code.co_filename
    for marker in ("site-packages/", "passepartout/", "python3.11/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{code.co_name} ({path}:{code.co_firstlineno})"


def main() -> None:
    if len(sys.argv) < 5:  # run bare (make bench): a tool of emacs_bridge.py, no figure
        print("pysample: the profiler of `bench/emacs_bridge.py --profile-python OUT`")
        return
    out, prefix, flag, module, *args = sys.argv[1:]
    if flag != "-m":
        raise SystemExit(__doc__)
    sampler = Sampler(prefix)
    atexit.register(sampler.report, out)
    real_exit = os._exit

    def exit_with_report(status: int) -> NoReturn:
        # The server ends with os._exit, which skips atexit.
        sampler.report(out)
        real_exit(status)

    os._exit = exit_with_report
    signal.signal(signal.SIGUSR1, lambda *_: sampler.reset())
    sampler.start()
    sys.argv = [module, *args]
    time.sleep(0)
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
