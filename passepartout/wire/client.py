"""A client of the running daemon: the EPC wire over its Unix socket.

The same frames and the same ``hello`` as Emacs sends over TCP (six hex digits of
length, then the s-expression), so that the command line and the terminal speak to
the daemon exactly as Emacs does.  Callbacks the daemon sends (``call``) are answered
with ``(return UID nil)`` and kept in :attr:`DaemonClient.callbacks` for whoever wants
them; replies are matched to their call by uid.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from passepartout import protocol
from passepartout.errors import DaemonError, ProtocolError
from passepartout.signals import Keyword, Symbol, plist_to_dict
from passepartout.wire import frames

CONNECT_TIMEOUT = 5.0
R = TypeVar("R")


def frame(value: Any) -> bytes:
    """One frame to the daemon (:func:`passepartout.wire.frames.frame`); one larger than
    the daemon reads is refused here, before anything is sent, and the connection stays."""
    try:
        return frames.frame(value, limit=frames.MAX_FRAME)
    except frames.TooLarge as err:
        raise DaemonError(f"the message is too large to send ({err.size / 2**20:.1f} MB; "
                          f"at most {frames.MAX_FRAME // 2**20} MB)", "too-large") from None


class DaemonClient:
    """One connection to the daemon's socket; ``hello`` with the token from its file,
    once the kernel has said that the process listening there is one of our own user's
    (``SO_PEERCRED``): to anyone else, nothing is sent.  ``path`` is where to connect
    (a path, or ``/proc/self/fd/N/daemon.sock``), ``shown`` how to name it."""

    def __init__(self, path: Path | str, token: str, *, timeout: float = 30.0,
                 client: Mapping[str, Any] | None = None, shown: Path | None = None) -> None:
        from passepartout.wire.place import PlaceError, peer_credentials

        self.timeout = timeout
        self.callbacks: list[tuple[str, list[Any]]] = []
        self._frames = frames.Buffer()
        self._uid = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(CONNECT_TIMEOUT)
        name = shown or path
        try:
            self.sock.connect(str(path))
            peer = peer_credentials(self.sock)
        except OSError as err:
            self.sock.close()
            raise DaemonError(f"cannot connect to {name}: {err.strerror or err}",
                              "unreachable") from None
        # The pid of the process that listens on the socket (None where the system
        # cannot say): the daemon, proved to be of our own user.
        self.peer_pid = peer[0] if peer is not None else None
        if peer is not None and peer[1] != os.geteuid():
            self.sock.close()
            raise PlaceError(f"the process listening on {name} is another user's "
                             f"(uid {peer[1]}, pid {peer[0]}); nothing was sent to it")
        self.sock.settimeout(timeout)
        plist: list[Any] = []
        for key, value in (client or {"client": "cli"}).items():
            plist += [Keyword(key), value]
        self.info = self.request(protocol.Hello(token, plist or None))

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes a thread blocked reading it
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, request: protocol.Request[R]) -> R:
        """Send a request of the protocol and wait for its result; a refusal raises
        DaemonError."""
        return request.result(self.call(request.NAME, *request.args()))

    def call(self, method: str, *args: Any) -> Any:
        """Call ``method`` by its wire name with raw arguments and wait for its reply (a
        refusal raises DaemonError); :meth:`request` is the typed form."""
        self._uid += 1
        uid = self._uid
        try:
            self.sock.sendall(frame([Symbol("call"), uid, Symbol(method), list(args)]))
            while True:
                message = self._read()
                kind = str(message[0])
                if kind == "call":
                    self.callbacks.append((str(message[2]), message[3] or []))
                    self.sock.sendall(frame([Symbol("return"), message[1], None]))
                    continue
                if message[1] != uid and message[1] is not None:
                    continue
                value = message[2] if len(message) > 2 else None
                if kind == "return":
                    return value
                raise _refusal(method, value)
        except TimeoutError:
            raise DaemonError(f"{method}: no answer within {self.timeout:g} s",
                              "timeout") from None
        except OSError as err:
            raise DaemonError(f"{method}: the connection failed ({err})", "closed") from None

    def wait_callback(self, name: str, timeout: float = 30.0) -> list[Any]:
        """The first callback ``name`` the daemon sends (those before it are kept)."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                for i, (got, args) in enumerate(self.callbacks):
                    if got == name:
                        del self.callbacks[i]
                        return args
                left = deadline - time.monotonic()
                if left <= 0:
                    raise DaemonError(f"no {name} within {timeout:g} s", "timeout")
                self.sock.settimeout(left)
                message = self._read()
                if str(message[0]) == "call":
                    self.callbacks.append((str(message[2]), message[3] or []))
                    self.sock.sendall(frame([Symbol("return"), message[1], None]))
        except TimeoutError:
            raise DaemonError(f"no {name} within {timeout:g} s", "timeout") from None
        finally:
            self.sock.settimeout(self.timeout)

    def _read(self) -> list[Any]:
        try:
            while (missing := self._frames.missing()) > 0:
                chunk = self.sock.recv(max(missing, 1 << 16))
                if not chunk:
                    raise DaemonError("the daemon closed the connection", "closed")
                self._frames.feed(chunk)
            message = self._frames.take()
        except ProtocolError as err:
            raise DaemonError(f"the daemon sent a malformed frame ({err.message})",
                              "protocol-error") from None
        if not isinstance(message, list) or len(message) < 2:
            raise DaemonError("the daemon sent a message that is not (KIND UID ...)",
                              "protocol-error")
        return message


def _refusal(method: str, value: Any) -> DaemonError:
    if isinstance(value, list) and len(value) == 2:
        return DaemonError(f"{method}: {value[1]}", str(value[0]))
    return DaemonError(f"{method}: {value}")


def as_dict(value: Any) -> dict[str, Any]:
    """A plist reply as a dict (an empty dict for nil)."""
    return plist_to_dict(value) if value else {}


def connect(home: Path, *, timeout: float = 30.0,
            environ: Mapping[str, str] | None = None,
            client: Mapping[str, Any] | None = None) -> DaemonClient | None:
    """A client of the daemon for the state directory ``home``; None when none runs.
    ``client`` is the plist ``hello`` carries (``:client``, ``:approval-timeout``).

    Nothing is sent before the daemon is proved ours: its directory and ``daemon.json``
    are our own user's with private modes (no symlinks), the token is read only from a
    0600 file of ours, and the socket's peer is a process of our own user; any of these
    failing is a :class:`~passepartout.wire.place.PlaceError` (a DaemonError)."""
    from passepartout.wire.place import Place, read_token

    place = Place.find(home, environ)
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        with place.opened() as dirfd:
            info = None if dirfd is None else place.read_info(dirfd)
            if dirfd is None or info is None:
                return None
            token = read_token(Path(str(info.get("token-file") or place.token_file)))
            try:
                return DaemonClient(place.address(dirfd), token, timeout=timeout,
                                    client=client, shown=place.socket)
            except DaemonError as err:
                # Just started: the socket may not accept yet; just stopped: no daemon.
                if err.kind != "unreachable" or time.monotonic() > deadline:
                    raise
        time.sleep(0.05)
