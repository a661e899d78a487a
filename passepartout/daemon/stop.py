"""``passepartout stop``: stop the running daemon (SIGTERM: it saves memory and cron
state, then exits) and wait until it has exited."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from passepartout.config import Config
from passepartout.daemon.place import Place

STOP_WAIT = 40.0  # the daemon's own bound on shutdown is 20 s, plus the boot's 10 s


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "stop the daemon (memory saved) and wait until it has exited"
    parser.add_argument("--timeout", type=float, default=STOP_WAIT, metavar="SECONDS",
                        help=f"how long to wait for it (default {STOP_WAIT:g})")


def run(args: argparse.Namespace) -> int:
    place = Place.find(Config.load().home)
    info = place.read_info()
    pid = info.get("pid") if info else None
    if not isinstance(pid, int) or pid <= 1:
        print("passepartout stop: no daemon runs")
        return 0
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        print(f"passepartout stop: pid {pid} is not ours to stop", file=sys.stderr)
        return 1
    started = time.monotonic()
    # The lock goes with the process: once it is free, the daemon has exited.
    while place.held():
        if time.monotonic() - started > args.timeout:
            print(f"passepartout stop: the daemon (pid {pid}) is still stopping after "
                  f"{args.timeout:g} s", file=sys.stderr)
            return 1
        time.sleep(0.05)
    print(f"passepartout stop: stopped the daemon (pid {pid}) in "
          f"{time.monotonic() - started:.1f} s")
    return 0
