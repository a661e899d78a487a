"""A long-running process (the daemon, the Emacs server) lives in its own directory.

The directory it was launched from (a checkout, wherever Emacs or a terminal happened
to be) says nothing about where the person works: the process moves to its state
directory, after every configured path was made absolute against the directory it was
given in.  The shell's workspace is chosen per turn instead
(:mod:`passepartout.workspace`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import sys
from pathlib import Path

from passepartout.config import Config


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(path.expanduser()))


def settle_in(config: Config) -> Config:
    """``config`` with absolute paths; the process's directory is now its state
    directory (made, private, when missing)."""
    extra = dict(config.extra)
    workspace = extra.get("PASSEPARTOUT_WORKSPACE")
    if workspace:
        extra["PASSEPARTOUT_WORKSPACE"] = str(_absolute(Path(workspace)))
    settled = dataclasses.replace(
        config,
        home=_absolute(config.home),
        config_dir=_absolute(config.config_dir),
        memex_dir=_absolute(config.memex_dir),
        skills_dir=_absolute(config.skills_dir) if config.skills_dir else None,
        extra=extra,
    )
    settled.home.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chdir(settled.home)
    return settled


def exit_process(code: int) -> None:
    """End the process now, once the agent has shut down: background threads of
    libraries (a model import, an embedding load) must not hold the exit."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    os._exit(code)
