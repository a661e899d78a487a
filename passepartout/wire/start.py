"""Find the running daemon, or start one that outlives whoever asked.

Every face that attaches (Emacs, ``passepartout chat``, ACP) calls :func:`ensure_daemon`:
when no daemon runs it starts ``passepartout daemon`` in a session of its own (so a
closing terminal or Emacs does not take it along) and waits until it has written
``daemon.json``, which it does once it is ready to answer.  The new daemon says so at
once on a pipe (:data:`READY_FD`, its write end inherited): the face does not wait for
a poll to notice.  The wait ends when the daemon is ready or has exited; a daemon
still starting is waited for (:data:`START_TIMEOUT`, minutes) and then left running.
Two faces starting at once are fine, whatever their environments: the second daemon
finds the state directory's lock taken and exits 1, and both faces then read the first
one's info (through the pointer in the state directory when it runs in another place).
What the new daemon prints before its log file opens goes to
``<home>/daemon-start.log``, so that a daemon that cannot start says why.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.wire.place import HomeLock, Place, PlaceError

# How long a face waits for a daemon that is alive but not ready yet.  Its boot (the
# model library's import above all) takes seconds on a quiet machine and can take
# minutes on a busy one: a daemon that is still running is waited for, and only one
# that died (or this long a start) ends the wait.
START_TIMEOUT = 300.0
_TAIL_LINES = 6
# The variable naming the descriptor a daemon writes "ready" to (then closes) once it
# is ready; set by ensure_daemon for the daemon it starts.
READY_FD = "PASSEPARTOUT_READY_FD"
# How often the daemon's info is looked for besides the pipe: when another start won
# the race (this one's daemon exited 1), the winner says nothing on our pipe.
_LOOK_EVERY = 0.1


class StartError(PassepartoutError):
    """The daemon did not start (the message holds what it said)."""

    kind = "daemon-start-error"


@dataclass(frozen=True)
class Running:
    """The daemon a face attaches to; ``started`` when this call started it."""

    info: dict[str, Any]
    started: bool


def ensure_daemon(config: Config, *, timeout: float = START_TIMEOUT,
                  environ: Mapping[str, str] | None = None) -> Running:
    """The running daemon of ``config.home``, started detached when none runs."""
    place = _find(config, environ)
    info = place.read_info()
    if info is not None:
        return Running(info, started=False)
    stale = _left_info(place)  # a daemon killed by SIGKILL leaves its daemon.json
    config.home.mkdir(parents=True, exist_ok=True)
    log_path = config.home / "daemon-start.log"
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    ready_r, ready_w = os.pipe()
    env = dict(os.environ if environ is None else environ)
    env[READY_FD] = str(ready_w)
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "passepartout", "daemon"],
            stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, close_fds=True,
            pass_fds=(ready_w,), start_new_session=True, env=env)
    except OSError as err:
        os.close(ready_r)
        raise StartError(f"cannot start the daemon: {err.strerror or err}") from None
    finally:
        os.close(fd)
        os.close(ready_w)
    try:
        return _wait_started(config, environ, child, stale, log_path, ready_r, timeout)
    finally:
        os.close(ready_r)


def _wait_started(config: Config, environ: Mapping[str, str] | None,
                  child: subprocess.Popen[bytes], stale: dict[str, Any] | None,
                  log_path: os.PathLike[str], ready: int, timeout: float) -> Running:
    """Wait for the started daemon's info (or the info of one that won the race)."""
    deadline = time.monotonic() + timeout
    home_lock = HomeLock(config.home)
    pipe_open = True
    while (left := deadline - time.monotonic()) > 0:
        # Found again each time: the daemon that won may run in another place (started
        # with another environment); its pointer says where.
        place = _find(config, environ)
        info = place.read_info()
        # A daemon writes its info once it is ready (booted, its model layer loaded).
        if info is not None and info != stale:
            return Running(info, started=info.get("pid") == child.pid)
        status = child.poll()
        if status is not None and status != 1:  # 1: another start won the race
            raise StartError(f"the daemon exited with status {status}: "
                             f"{_tail(log_path) or 'it said nothing'}")
        if status == 1 and not home_lock.held() and not place.held():
            raise StartError(f"the daemon did not start: {_tail(log_path) or 'status 1'}")
        if pipe_open:
            # "ready" (its info is written by then) or the end of the pipe (it exited):
            # either way look again at once.
            readable, _, _ = select.select([ready], [], [], min(left, _LOOK_EVERY))
            if readable and not os.read(ready, 64):
                pipe_open = False
        else:
            time.sleep(min(left, 0.02))
    alive = "it" if child.poll() is None else "the daemon that won the start"
    raise StartError(f"the daemon is still starting after {timeout:g} s; {alive} was left "
                     "running: `passepartout status` says when it is ready, `passepartout "
                     f"stop` ends it (its output is in {log_path})")


def _find(config: Config, environ: Mapping[str, str] | None) -> Place:
    try:
        return Place.find(config.home, environ)
    except PlaceError as err:
        raise StartError(err.message) from None


def _left_info(place: Place) -> dict[str, Any] | None:
    return place.read_info(running=False)


def _tail(path: os.PathLike[str]) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = [line.strip().removeprefix("passepartout daemon: ") for line in handle
                     if line.strip()]
    except OSError:
        return ""
    return " / ".join(lines[-_TAIL_LINES:])
