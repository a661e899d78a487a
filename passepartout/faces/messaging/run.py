"""Where the messaging faces run: threads of the daemon, started at boot.

Why in the daemon rather than a ``passepartout messaging`` service of its own: a face
configured is on whenever the agent is, with nothing more to install or supervise;
and every text it sends leaves through the daemon's own vault and private index
(:mod:`.boundary`), the exit of model requests, which another process would not have.
Each face is still a client of the daemon over its socket, with the token, like any
other: it reaches the agent only through the method table, and its turns pass the
same gates as Emacs's.  A face whose settings are wrong stays off and says why in the
log (``passepartout doctor`` says it too); the daemon runs on.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Iterator, Mapping

from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.faces.face import Face
from passepartout.faces.messaging.relay import Relay
from passepartout.faces.messaging.settings import signal_settings, telegram_settings
from passepartout.faces.messaging.transport import Transport
from passepartout.wire.client import DaemonError

log = logging.getLogger(__name__)

RETRY = 2.0
APPROVAL_TIMEOUT = 300.0  # PASSEPARTOUT_APPROVAL_TIMEOUT's default


def configured(extra: Mapping[str, str]) -> list[tuple[Transport, frozenset[str], bool]]:
    """The transports of the faces that are on: (transport, allowed ids, notify)."""
    found: list[tuple[Transport, frozenset[str], bool]] = []
    makers: list[tuple[str, Callable[[], tuple[Transport, frozenset[str], bool] | None]]] = [
        ("telegram", lambda: _telegram(extra)), ("signal", lambda: _signal(extra))]
    for name, make in makers:
        try:
            made = make()
        except ConfigError as err:
            log.error("the %s face is off: %s", name, err.message)
            continue
        if made is not None:
            found.append(made)
    return found


def start_faces(config: Config, stop: threading.Event) -> list[threading.Thread]:
    """Start a thread per configured face; each ends once ``stop`` is set."""
    threads = []
    for transport, allowed, notify in configured(config.extra):
        thread = threading.Thread(target=run_face,
                                  args=(config, transport, allowed, notify, stop),
                                  name=f"messaging-{transport.name}", daemon=True)
        thread.start()
        log.info("the %s face is on (%d allowed)", transport.name, len(allowed))
        threads.append(thread)
    return threads


def run_face(config: Config, transport: Transport, allowed: frozenset[str], notify: bool,
             stop: threading.Event) -> None:
    """Attach to the daemon and relay, again after a dropped connection, until ``stop``."""
    numbers: Iterator[int] = itertools.count(1)  # approval numbers, unique for the thread
    try:
        while not stop.is_set():
            try:
                face = Face.attach(config.home, source=transport.name,
                                   client={"approval-timeout": approval_timeout(config)})
            except DaemonError as err:
                log.warning("the %s face cannot attach: %s", transport.name, err.message)
                face = None
            if face is None:
                stop.wait(RETRY)
                continue
            relay = Relay(face, transport, allowed, notify=notify, numbers=numbers)
            watcher = threading.Thread(target=_end_with, args=(stop, relay.ended),
                                       daemon=True, name=f"{transport.name}-stop")
            watcher.start()
            try:
                relay.serve()
            except Exception:  # a bug must not end the face for good
                log.exception("the %s face failed", transport.name)
            finally:
                relay.ended.set()
                face.close()
            stop.wait(RETRY)
    finally:
        transport.close()


def approval_timeout(config: Config) -> float:
    """How long the daemon waits for a phone's answer: the setting every face that asks
    a person honours (a phone is not always at hand: not Emacs's 60 s)."""
    return float(config.extra.get("PASSEPARTOUT_APPROVAL_TIMEOUT") or APPROVAL_TIMEOUT)


def _end_with(stop: threading.Event, ended: threading.Event) -> None:
    while not ended.is_set():
        if stop.wait(0.5):
            ended.set()


def _telegram(extra: Mapping[str, str]) -> tuple[Transport, frozenset[str], bool] | None:
    settings = telegram_settings(extra)
    if settings is None:
        return None
    from passepartout.faces.messaging.telegram import TelegramTransport

    return TelegramTransport(settings), settings.allowed, settings.notify


def _signal(extra: Mapping[str, str]) -> tuple[Transport, frozenset[str], bool] | None:
    settings = signal_settings(extra)
    if settings is None:
        return None
    from passepartout.faces.messaging.signal_cli import SignalTransport

    return SignalTransport(settings), settings.allowed, settings.notify
