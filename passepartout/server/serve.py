"""``passepartout serve``: the EPC server that Emacs starts.

Emacs writes a fresh token as the first line of stdin (:mod:`passepartout.wire.token`;
``--token-file`` for a start by hand); every connection must present it.
The port is the first and only line on stdout, printed before anything slow: the agent
(skills, memory) boots after it on a thread, and the model layer that the chat skill
installs imports litellm (seconds) in the background after that.  Logs go to stderr and
``<home>/passepartout.log``.
SIGTERM, SIGINT, SIGHUP or the end of stdin (Emacs going away) stop the server: the
agent shuts down (memory saves) and the exit status is 0.
"""

from __future__ import annotations

import argparse
import logging
import logging.handlers
import os
import signal
import socket
import stat
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passepartout.config import Config
from passepartout.errors import ConfigError, PassepartoutError
from passepartout.ownplace import exit_process
from passepartout.security import logs
from passepartout.wire.admission import Admission
from passepartout.wire.token import TokenError, receive_token

if TYPE_CHECKING:
    from passepartout.loop.actions import Think
    from passepartout.server.epc import BridgeServer
    from passepartout.server.methods import Bridge

log = logging.getLogger(__name__)

BOOT_JOIN_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 20.0
MODEL_LAYER_WAIT = 120.0  # litellm takes seconds to load; a hung import is not waited on


def run_server(config: Config, *, think: Think | None = None,
               token_file: Path | None = None) -> int:
    """Serve Emacs until told to stop; the exit status (0 after a clean stop)."""
    started = time.perf_counter()
    setup_logging(config)
    try:
        admission = Admission.from_settings(config.extra)
        token = receive_token(token_file, os.environ)
    except (TokenError, ConfigError) as err:
        print(f"passepartout serve: {err.message}", file=sys.stderr, flush=True)
        return 2
    stop = threading.Event()
    _on_stop_request(stop)
    try:
        listener = listen()
    except OSError as err:
        log.error("cannot listen on 127.0.0.1: %s", err)
        return 1
    port = listener.getsockname()[1]
    sys.stdout.write(f"{port}\n")
    sys.stdout.flush()
    sys.stdout = sys.stderr  # a library's stray print must never follow the port line
    port_ms = (time.perf_counter() - started) * 1000
    # Connections wait in the listen backlog while python-epc and the rest import.
    from passepartout.server.epc import BridgeServer
    from passepartout.server.methods import Bridge

    bridge = Bridge(config)
    server = BridgeServer(bridge, token, listener=listener, admission=admission)
    log.info("serving on 127.0.0.1:%d (port line after %.0f ms)", port, port_ms)
    return serve_until_stopped(config, bridge, [server], think, stop)


def serve_until_stopped(config: Config, bridge: Bridge, servers: list[BridgeServer],
                        think: Think | None, stop: threading.Event, *,
                        on_ready: Callable[[], None] | None = None) -> int:
    """Accept on every server and boot the agent, then call ``on_ready`` (once it can
    answer, or has failed to start and can say why); once ``stop`` is set, stop in order
    (approvals denied, servers closed, the agent shut down); 0 after a clean stop."""
    for server in servers:
        threading.Thread(target=server.serve_forever, name="epc-accept", daemon=True).start()

    def boot() -> None:
        boot_agent(config, bridge, think)
        if on_ready is not None and not stop.is_set():
            try:
                on_ready()
            except Exception:
                log.exception("cannot say the daemon is ready")
                stop.set()

    booter = threading.Thread(target=boot, name="boot", daemon=True)
    booter.start()
    while not stop.wait(0.5):
        pass
    log.info("stopping")
    bridge.channel.stop()  # pending approvals are denied, so lanes can finish
    for server in servers:
        server.stop()
    booter.join(BOOT_JOIN_TIMEOUT)
    if bridge.agent is not None:
        _shutdown(bridge.agent)
    log.info("stopped")
    return 0


def _shutdown(agent: Any) -> None:
    """The agent's shutdown (its hooks save memory), within a bound: a skill's worker
    that will not stop must not keep Emacs waiting for the process to end."""
    worker = threading.Thread(target=agent.shutdown, name="shutdown", daemon=True)
    worker.start()
    worker.join(SHUTDOWN_TIMEOUT)
    if worker.is_alive():
        log.warning("the agent did not shut down within %.0f s; exiting anyway",
                    SHUTDOWN_TIMEOUT)


def listen() -> socket.socket:
    """A socket listening on 127.0.0.1 (only), on a port the system picks."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        # A burst of connections waits in the kernel (no thread, no 1 s SYN retry) for
        # the accepting thread, which closes what is over the admission's cap.
        listener.listen(512)
    except OSError:
        listener.close()
        raise
    return listener


def boot_agent(config: Config, bridge: Bridge, think: Think | None = None) -> None:
    """Build and boot the agent, then hand it to the bridge (or say why it failed).

    The model comes with the chat skill (it installs the model layer, which starts
    importing litellm in the background, in parallel with the rest of the boot);
    ``think`` replaces it (tests, benchmarks).  The agent is handed over, and so called
    ready, only once that layer is loaded: ready means it can answer.
    """
    try:
        from passepartout.agent import Agent

        agent = Agent(config)
        agent.boot()
        if think is not None:
            agent.loop.think = think
        else:
            _wait_model_layer()
        bridge.attach(agent)
    except PassepartoutError as err:
        log.error("the agent cannot start: %s", err.message)
        bridge.boot_failed(err.message)
        return
    except Exception as err:  # anything else: the server stays up to say so
        log.exception("the agent cannot start")
        bridge.boot_failed(f"{type(err).__name__}: {err}")
        return
    log.info("agent ready: %s", agent.health.status)


def _wait_model_layer() -> None:
    """Wait (bounded) until the model layer's warm-up has loaded and primed litellm."""
    from passepartout.llm.provider import wait_warm

    started = time.perf_counter()
    if not wait_warm(MODEL_LAYER_WAIT):
        log.warning("the model layer is still loading after %.0f s; ready anyway",
                    MODEL_LAYER_WAIT)
    else:
        log.info("model layer ready after %.1f s more", time.perf_counter() - started)


def setup_logging(config: Config) -> None:
    """stderr and a rotating ``<home>/passepartout.log``; stdout stays the port's alone."""
    root = logging.getLogger()
    if root.level != logging.DEBUG:  # the command line's --verbose stays
        root.setLevel(logging.INFO)
    form = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = []
    if not any(type(h) is logging.StreamHandler for h in root.handlers):
        handlers.append(logging.StreamHandler(sys.stderr))
    try:
        config.home.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.handlers.RotatingFileHandler(
            config.log_file, maxBytes=2_000_000, backupCount=3, encoding="utf-8"))
    except OSError as err:
        print(f"passepartout serve: no log file ({err}); logging to stderr only",
              file=sys.stderr, flush=True)
    for handler in handlers:
        handler.setFormatter(form)
        root.addHandler(handler)
    logs.install()


def _on_stop_request(stop: threading.Event) -> None:
    def request(signum: int, frame: Any) -> None:
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, request)
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return
    # Emacs holds our stdin; its end means Emacs is gone.  /dev/null or a file is no signal.
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0):
        threading.Thread(target=_wait_stdin_end, args=(stop,), name="stdin",
                         daemon=True).start()


def _wait_stdin_end(stop: threading.Event) -> None:
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    log.info("stdin closed")
    stop.set()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Emacs writes the token on stdin; by hand, a file can hold it instead."""
    parser.add_argument("--token-file", type=Path, metavar="FILE",
                        help="read the token from FILE (mode 600, yours), then delete it; "
                             "without it, the token is the first line of stdin")


def run(args: argparse.Namespace) -> int:
    from passepartout.ownplace import settle_in

    try:
        config = Config.load()
    except ConfigError as err:
        print(f"passepartout serve: {err.message}", file=sys.stderr, flush=True)
        return 2
    try:
        config = settle_in(config)  # its own directory, never the one Emacs was in
    except OSError as err:
        print(f"passepartout serve: cannot enter the state directory {config.home}: "
              f"{err.strerror or err}", file=sys.stderr, flush=True)
        return 2
    exit_process(run_server(config, token_file=getattr(args, "token_file", None)))
    return 0  # not reached


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="passepartout serve")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
