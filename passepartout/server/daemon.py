"""``passepartout daemon``: the agent as one long-lived process per person.

It runs in the foreground until SIGTERM, SIGINT or SIGHUP (a service manager sends
the first), holds the lock of its :class:`~passepartout.wire.place.Place` for its
whole life (a second start says where the first runs and exits 1), and serves the EPC
wire of :mod:`passepartout.server.epc` twice, with one admission (at most 16 connections
waiting for the token, 5 s each) for both:

- on ``daemon.sock``, a Unix socket in a 0700 directory; the daemon also refuses a
  peer of another uid (SO_PEERCRED);
- on 127.0.0.1, a port the system picks, for clients that speak TCP.

Both ask for ``hello`` with the token (a fresh one each start, in a 0600 file in the
state directory): over the socket the kernel's uid check comes first, the token still
after it, so a process of ours that can reach the socket but not the state directory
(a sandboxed command) cannot drive the agent.  The agent, its sessions, cron state,
Flight Plans and memory live in the state directory as for ``serve``: a daemon killed
by SIGKILL starts again where it was, and runs a job it missed once.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import secrets
import signal
import socket
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from passepartout import startup
from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.fsutil import atomic_write
from passepartout.server.serve import listen, serve_until_stopped, setup_logging
from passepartout.wire.admission import Admission
from passepartout.wire.place import HomeLock, Place, PlaceError, clear_pointer, write_pointer

if TYPE_CHECKING:
    from passepartout.loop.actions import Think

log = logging.getLogger(__name__)

PROG = "passepartout daemon"


def run_daemon(config: Config, *, think: Think | None = None,
               ready_fd: int | None = None) -> int:
    """Serve until told to stop; the exit status (0 after a clean stop, 1 when another
    daemon runs, 2 when the place or the settings are wrong).  ``ready_fd``: a pipe to
    write "ready" to (then closed) once ready, for whoever started it and waits."""
    place = Place.own(config.home)
    home_lock = HomeLock(config.home)
    try:
        admission = Admission.from_settings(config.extra)
        config.home.mkdir(parents=True, exist_ok=True)
        held = home_lock.take()
        if held is None:
            print(f"{PROG}: {already_running(Place.find(config.home))}", file=sys.stderr,
                  flush=True)
            return 1
    except (ConfigError, PlaceError) as err:
        print(f"{PROG}: {err.message}", file=sys.stderr, flush=True)
        return 2
    except OSError as err:
        print(f"{PROG}: cannot take the lock {home_lock.file}: {err.strerror}",
              file=sys.stderr, flush=True)
        return 2
    try:
        return _run_locked(config, place, admission, think, ready_fd)
    finally:
        os.close(held)  # last of all: a new daemon may start only once this one is gone


def _run_locked(config: Config, place: Place, admission: Admission,
                think: Think | None, ready_fd: int | None = None) -> int:
    """With the state directory's lock held: the place's lock, then serve."""
    try:
        place.make()
        lock = place.lock()
    except PlaceError as err:
        print(f"{PROG}: {err.message}", file=sys.stderr, flush=True)
        return 2
    except OSError as err:
        print(f"{PROG}: cannot take the lock {place.lock_file}: {err.strerror}",
              file=sys.stderr, flush=True)
        return 2
    if lock is None:
        print(f"{PROG}: {already_running(place)}", file=sys.stderr, flush=True)
        return 1
    # A daemon killed by SIGKILL left its daemon.json: it goes now, so that nothing
    # finds this daemon before it is ready (the new one is written then).
    with contextlib.suppress(FileNotFoundError):
        place.info_file.unlink()
    setup_logging(config)
    startup.mark("locks held, log open")
    stop = threading.Event()
    # SIGHUP too: the terminal it was started from closing is a stop, with memory saved.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda signum, frame: stop.set())
    try:
        try:
            write_pointer(config.home, place)  # for clients whose environment has no place
        except OSError as err:
            log.error("cannot say where the daemon is: %s", err)
            return 1
        return _serve(config, place, admission, stop, think, ready_fd)
    finally:
        clear_pointer(config.home, place)
        place.clear()
        os.close(lock)


def already_running(place: Place) -> str:
    info = place.read_info() or {}
    if not info:
        return (f"a daemon already runs for this state directory and is starting (its "
                f"socket will be {place.socket}); `passepartout status` shows it, "
                "`passepartout stop` stops it")
    pid = info.get("pid", "?")
    return (f"a daemon already runs (pid {pid}, socket {info.get('socket', place.socket)}); "
            "`passepartout status` shows it, `passepartout stop` stops it")


def _serve(config: Config, place: Place, admission: Admission, stop: threading.Event,
           think: Think | None, ready_fd: int | None = None) -> int:
    token = secrets.token_hex(32)
    try:
        config.home.mkdir(parents=True, exist_ok=True)
        atomic_write(place.token_file, token + "\n", mode=0o600)
        unix = listen_unix(place)
        tcp = listen()
    except PlaceError as err:
        log.error("cannot listen: %s", err.message)
        return 1
    except OSError as err:
        log.error("cannot listen: %s", err)
        return 1
    startup.mark("listening")
    from passepartout.server.epc import BridgeServer
    from passepartout.server.methods import Bridge

    bridge = Bridge(config)
    servers = [BridgeServer(bridge, token, listener=sock, admission=admission)
               for sock in (unix, tcp)]
    startup.mark("servers made")
    port = tcp.getsockname()[1]
    info = {
        "pid": os.getpid(), "socket": str(place.socket), "port": port,
        "token-file": str(place.token_file), "home": str(config.home),
        "model": config.model, "started": dt.datetime.now(dt.UTC).isoformat(),
        "started-unix": time.time(),
    }

    def ready() -> None:
        # Only now can a face find it: it accepts connections and can answer (the
        # agent booted, the model layer loaded), so "ready" is never said too early.
        place.write_info(info)
        startup.mark("ready")
        log.info("daemon %d ready on %s and 127.0.0.1:%d, %.2f s after its start",
                 os.getpid(), place.socket, port, startup.since_start())
        log.debug("start timeline: %s", startup.report())
        if ready_fd is not None:
            _say_ready(ready_fd)
        print(f"{PROG}: pid {os.getpid()}, socket {place.socket}, port {port}", flush=True)
        from passepartout.faces.messaging.run import start_faces

        start_faces(config, stop)  # the configured messaging faces, clients of this socket

    log.info("daemon %d listening on %s and 127.0.0.1:%d; booting", os.getpid(),
             place.socket, port)
    return serve_until_stopped(config, bridge, servers, think, stop, on_ready=ready)


def _say_ready(fd: int) -> None:
    """Tell whoever started this daemon, at once, that it is ready (its info is
    written): one line on their pipe, which is then closed."""
    try:
        os.write(fd, b"ready\n")
    except OSError as err:  # they stopped waiting: nothing to tell
        log.debug("cannot say ready on fd %d: %s", fd, err)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def listen_unix(place: Place) -> socket.socket:
    """The daemon's socket, 0600 in its 0700 directory (a stale one from a daemon that
    was killed is replaced: we hold the lock, so no daemon uses it).  A path too long
    for a Unix socket is bound through the directory's descriptor."""
    with place.opened() as dirfd:
        if dirfd is None:
            raise PlaceError(f"{place.dir} is gone")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(place.socket.name, dir_fd=dirfd)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # created 0600, never open for an instant
        try:
            listener.bind(place.address(dirfd))
            listener.listen(512)
        except OSError:
            listener.close()
            raise
        finally:
            os.umask(old)
    return listener


def uptime(info: dict[str, Any]) -> float | None:
    started = info.get("started-unix")
    return time.time() - started if isinstance(started, int | float) else None
