"""The daemon: one agent per person that every face (Emacs, the terminal, the command
line) attaches to.  ``passepartout daemon`` runs :mod:`passepartout.server.daemon`."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from passepartout.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("run the agent in the foreground until SIGTERM, listening on a "
                          "Unix socket of yours and on 127.0.0.1 (one per user)")
    parser.add_argument("--detach", action="store_true",
                        help="start it in the background (unless one runs) and return "
                             "once it listens")


def run(args: argparse.Namespace) -> int:
    from passepartout import startup

    startup.hold_collector()  # until the daemon is ready (see passepartout.startup)
    startup.mark("command line read")
    from passepartout.config import Config
    from passepartout.errors import ConfigError
    from passepartout.ownplace import exit_process, settle_in
    from passepartout.server.daemon import run_daemon

    try:
        config = Config.load()
        startup.mark("settings read")
    except ConfigError as err:
        print(f"passepartout daemon: {err.message}", file=sys.stderr, flush=True)
        return 2
    if args.detach:
        return _detach(config)
    try:
        config = settle_in(config)  # its own directory, never the one it was started in
    except OSError as err:
        print(f"passepartout daemon: cannot enter the state directory {config.home}: "
              f"{err.strerror or err}", file=sys.stderr, flush=True)
        return 2
    exit_process(run_daemon(config, ready_fd=_ready_fd()))
    return 0  # not reached


def _ready_fd() -> int | None:
    """The descriptor to say "ready" on, when whoever started us gave one (see
    wire.start); taken out of the environment and not inherited, so that no process
    this daemon starts holds it open."""
    from passepartout.wire.start import READY_FD

    value = os.environ.pop(READY_FD, "")
    try:
        fd = int(value)
        # Only a pipe, never standard input, output or error: a stray value in the
        # environment must not make the daemon write to, or close, what it is not for.
        if fd <= 2 or not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        os.set_inheritable(fd, False)
    except (ValueError, OSError):  # none given, or not a descriptor of ours
        return None
    return fd


def _detach(config: Config) -> int:
    from passepartout.wire.start import StartError, ensure_daemon

    try:
        running = ensure_daemon(config)
    except StartError as err:
        print(f"passepartout daemon: {err.message}", file=sys.stderr, flush=True)
        return 1
    info = running.info
    what = "started" if running.started else "already runs"
    print(f"passepartout daemon: {what}: pid {info.get('pid')}, socket {info.get('socket')}, "
          f"port {info.get('port')}", flush=True)
    return 0
