"""The daemon: one agent per person that every face (Emacs, the terminal, the command
line) attaches to.  ``passepartout daemon`` runs :mod:`passepartout.daemon.server`."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("run the agent in the foreground until SIGTERM, listening on a "
                          "Unix socket of yours and on 127.0.0.1 (one per user)")


def run(args: argparse.Namespace) -> int:
    from passepartout.config import Config
    from passepartout.daemon.server import run_daemon
    from passepartout.errors import ConfigError
    from passepartout.serve import exit_process

    try:
        config = Config.load()
    except ConfigError as err:
        print(f"passepartout daemon: {err.message}", file=sys.stderr, flush=True)
        return 2
    exit_process(run_daemon(config))
    return 0  # not reached
