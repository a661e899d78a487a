"""``passepartout stop``: stop the running daemon (SIGTERM: it saves memory and cron
state, then exits) and wait until it has exited.

Only a process proved to be our daemon is signalled, never a pid read from a file: the
command connects as every client does (a private place of ours, the socket's peer of our
own user), takes a pidfd of the peer's pid (``SO_PEERCRED``) while the connection is open,
then asks the daemon for its pid over that connection; only when it names the same
process is the signal sent, through the pidfd, which cannot reach another process even
if the pid were reused meanwhile.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import sys
import time

from passepartout import protocol
from passepartout.config import Config
from passepartout.errors import DaemonError
from passepartout.wire.client import connect
from passepartout.wire.place import HomeLock, Place

STOP_WAIT = 40.0  # the daemon's own bound on shutdown is 20 s, plus the boot's 10 s
ASK_TIMEOUT = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "stop the daemon (memory saved) and wait until it has exited"
    parser.add_argument("--timeout", type=float, default=STOP_WAIT, metavar="SECONDS",
                        help=f"how long to wait for it (default {STOP_WAIT:g})")


def run(args: argparse.Namespace) -> int:
    state = Config.load().home
    home = HomeLock(state)
    started = time.monotonic()
    try:
        place = Place.find(state)
        pidfd, pid = _daemon_pidfd(state)
        if pidfd is None and (place.held() or home.held()):
            # Starting: it is proved (and so may be signalled) only once it answers.
            print("passepartout stop: the daemon is starting; waiting until it answers")
            while pidfd is None and (place.held() or home.held()):
                if time.monotonic() - started > args.timeout:
                    print(f"passepartout stop: the daemon did not answer within "
                          f"{args.timeout:g} s; nothing was signalled", file=sys.stderr)
                    return 1
                time.sleep(0.1)
                pidfd, pid = _daemon_pidfd(state)
    except DaemonError as err:
        print(f"passepartout stop: {err.message}; nothing was signalled", file=sys.stderr)
        return 1
    if pidfd is None:
        print("passepartout stop: no daemon runs")
        return 0
    try:
        with contextlib.suppress(ProcessLookupError):  # exited meanwhile
            signal.pidfd_send_signal(pidfd, signal.SIGTERM)
        # The pidfd reads ready once the process has exited; the lock goes with it.
        while not select.select([pidfd], [], [], 0.05)[0] or place.held() or home.held():
            if time.monotonic() - started > args.timeout:
                print(f"passepartout stop: the daemon (pid {pid}) is still stopping after "
                      f"{args.timeout:g} s", file=sys.stderr)
                return 1
    finally:
        os.close(pidfd)
    print(f"passepartout stop: stopped the daemon (pid {pid}) in "
          f"{time.monotonic() - started:.1f} s")
    return 0


def _daemon_pidfd(home: os.PathLike[str]) -> tuple[int | None, int]:
    """A pidfd of the running daemon and its pid; (None, 0) when none runs."""
    from pathlib import Path

    client = connect(Path(home), timeout=ASK_TIMEOUT)
    if client is None:
        return None, 0
    with client:
        peer = client.peer_pid
        if peer is None or peer <= 1:
            raise DaemonError("the system cannot say which process serves the socket")
        try:
            pidfd = os.pidfd_open(peer)
        except OSError as err:
            raise DaemonError(f"cannot hold the daemon's process (pid {peer}): "
                              f"{err.strerror}") from None
        try:
            # Asked after the pidfd was taken: the answer names the process it holds.
            said = client.request(protocol.Status()).get("pid")
            if said != peer:
                raise DaemonError(f"the process serving the socket (pid {peer}) says it "
                                  f"is pid {said}: it is not the daemon")
        except BaseException:
            os.close(pidfd)
            raise
    return pidfd, peer
