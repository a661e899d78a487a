"""The EPC server Emacs talks to: frames, the token, value conversion, dispatch.

This is the only module that imports python-epc.  From it we keep the TCP server, its
client list and the handler's life cycle; the handler's protocol parts are replaced:

- reading: python-epc's ``itermessage`` takes any length ``int(head, 16)`` accepts
  (`` 0x1f``, ``+0001``), has no maximum and raises a traceback on a short body;
  :meth:`Connection.handle` checks 6 hex digits, caps the frame size (64 KiB before the
  token, 8 MiB after) and gives a body 30 s to arrive, then closes the connection;
- admission: ``ThreadingMixIn`` gives every connection a thread, token or not; here a
  connection waits for its token under :mod:`passepartout.wire.admission` (at most 16 at
  once, each for a few seconds, whatever it sent), and its writer thread starts only
  once it has presented the token;
- dispatch: its ``_handle`` runs any registered function with no token check and sends
  ``repr(err)`` back; here a call is read into its typed request
  (:func:`passepartout.protocol.decode_request`: an unknown name or arguments that do not
  fit are refused there), only the table in :mod:`passepartout.server.methods` answers,
  after ``hello``, and errors are ``(KIND MESSAGE)``;
- writing: its ``_send`` writes from whichever thread calls it, without a lock, so a
  lane's callback and a reply could interleave their bytes; here every write holds the
  connection's lock, and callbacks go through a writer thread so the loop never waits
  on the socket;
- frames and values: the codec both sides share is :mod:`passepartout.wire.frames`
  (with its attachments: long strings as raw bytes, sent only to a client whose
  ``hello`` said ``:attachments t``); every frame that leaves here is masked first.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import itertools
import logging
import os
import queue
import socket
import socketserver
import struct
import threading
from typing import Any

from epc.handler import EPCHandler
from epc.server import EPCServer

from passepartout.errors import PassepartoutError, ProtocolError
from passepartout.protocol import (
    DEFAULT_FACE,
    EVENT_NAMES,
    Hello,
    MethodError,
    Request,
    decode_request,
    face_name,
)
from passepartout.security.vault import mask_value
from passepartout.server.methods import METHODS, Bridge, Method, Refusal
from passepartout.signals import Symbol
from passepartout.wire import frames
from passepartout.wire.admission import Admission
from passepartout.wire.frames import FrameError

log = logging.getLogger(__name__)

BODY_TIMEOUT = 30.0
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)  # Linux only

# -- values -------------------------------------------------------------------------------


def frame(value: Any, *, attachments: bool = False) -> bytes:
    """One frame to a client (:func:`passepartout.wire.frames.frame`), masked: every
    frame that leaves is, replies too, not only the loop's events."""
    return frames.frame(mask_value(value), attachments=attachments)


def error_reply(kind: str, message: str) -> list[Any]:
    return [Symbol(kind), message]


# -- one connection ---------------------------------------------------------------------


class Connection(EPCHandler):
    """One Emacs connection (a :class:`~passepartout.server.peer.Peer`)."""

    server: BridgeServer

    def setup(self) -> None:
        super().setup()
        # Chunks and replies are small frames: Nagle with delayed ACKs held each ~40 ms.
        with contextlib.suppress(OSError):
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.authenticated = False
        self.attachments = False  # may our frames carry attachments? (hello says)
        self._approval_timeout: float | None = None
        self._face = DEFAULT_FACE
        self._closed = threading.Event()
        self._write_lock = threading.Lock()
        self._uids = itertools.count(1)
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None  # started with the token: one thread
        if not self.server.admission.attach(self.request, self.close):
            self.close()  # turned away before this thread began

    def finish(self) -> None:
        self._closed.set()
        self._outbox.put(None)
        self.server.admission.left(self.request)
        self.server.bridge.channel.peer_closed(self)
        with contextlib.suppress(OSError):  # the peer may already be gone
            super().finish()

    # -- Peer ---------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def approval_timeout(self) -> float | None:
        return self._approval_timeout

    @property
    def face(self) -> str:
        return self._face

    def call(self, method: str, args: list[Any]) -> bool:
        """Queue a callback into Emacs; its ``(return UID nil)`` is read and ignored."""
        if method not in EVENT_NAMES:
            raise ValueError(f"{method} is not an event of the protocol")
        if self.closed or not self.authenticated:
            return False
        try:
            data = frame([Symbol("call"), next(self._uids), Symbol(method), args],
                         attachments=self.attachments)
        except ProtocolError as err:
            log.error("callback %s not sent: %s", method, err.message)
            return False
        self._outbox.put(data)
        return True

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    # -- writing ------------------------------------------------------------------------

    def _drain(self) -> None:
        while (data := self._outbox.get()) is not None:
            self._write(data)

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            try:
                self.wfile.write(data)
            except (OSError, ValueError):  # ValueError: the file is already closed
                self._closed.set()

    def _reply(self, uid: Any, value: Any) -> None:
        try:
            data = frame([Symbol("return"), uid, value], attachments=self.attachments)
        except ProtocolError as err:
            data = frame([Symbol("return-error"), uid, error_reply(err.kind, err.message)])
        self._write(data)

    def _error(self, uid: Any, kind: str, message: str, *, tag: str = "return-error") -> None:
        self._write(frame([Symbol(tag), uid, error_reply(kind, message)]))

    # -- reading ------------------------------------------------------------------------

    def handle(self) -> None:
        while not self.closed:
            try:
                data = self._read_frame()
            except FrameError as err:
                if self.closed:  # closed here on purpose (admission, stop): a short read
                    return
                if self.authenticated:
                    log.warning("closing an Emacs connection: %s", err)
                else:
                    self.server.admission.refused(f"a bad frame: {err}", self.client_address)
                self._error(None, "protocol-error", str(err), tag="epc-error")
                return
            except (OSError, ValueError):
                return
            if data is None or not self._handle_frame(data):
                return

    def _read_frame(self) -> bytes | None:
        head = self.rfile.read(6)
        if not head:
            return None
        self._ack_now()
        limit = frames.MAX_FRAME if self.authenticated else frames.MAX_FRAME_BEFORE_HELLO
        length = frames.length(head, limit)
        self.connection.settimeout(BODY_TIMEOUT)
        try:
            data = self.rfile.read(length)
        except TimeoutError:
            raise FrameError(f"no complete frame within {BODY_TIMEOUT:g} s") from None
        finally:
            if not self.closed:
                self.connection.settimeout(None)
        if len(data) < length:
            raise FrameError(f"the frame said {length} bytes but {len(data)} came")
        return bytes(data)

    def _ack_now(self) -> None:
        """Acknowledge what Emacs sent at once.  Emacs cannot turn Nagle's algorithm off
        on its sockets (no TCP_NODELAY in Emacs 28), so its next small frame (a prompt
        after the ``(return UID nil)`` of a callback) waits for our ACK, which Linux
        otherwise delays ~40 ms when we have nothing to send back.  Linux clears
        TCP_QUICKACK after a while, so it is set again for every frame."""
        if _QUICKACK is not None:
            with contextlib.suppress(OSError):
                self.request.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)

    def _handle_frame(self, data: bytes) -> bool:
        """Answer one message; False closes the connection."""
        try:
            message = frames.read_payload(data)
        except ProtocolError as err:
            self._error(None, err.kind, err.message, tag="epc-error")
            return True
        if not isinstance(message, list) or len(message) < 2 or not isinstance(message[0], str):
            self._error(None, "protocol-error", "a message is (KIND UID ...)", tag="epc-error")
            return True
        kind, uid, rest = str(message[0]), message[1], message[2:]
        if not isinstance(uid, int | str) or isinstance(uid, bool):
            self._error(None, "protocol-error", "the message uid must be a number", tag="epc-error")
            return True
        if kind == "call":
            return self._call(uid, rest)
        if kind == "methods":
            if not self.authenticated:
                self._error(uid, "unauthorized", "call hello with the token first")
            else:
                self._reply(uid, [[Symbol(m.name), [Symbol(p) for p, _ in m.params], ""]
                                  for m in METHODS.values()])
            return True
        if kind in ("return", "return-error", "epc-error"):
            if kind != "return":
                log.warning("Emacs answered callback %s with %s: %s", uid, kind, rest)
            return True
        self._error(uid, "protocol-error", f"unknown message kind {kind}", tag="epc-error")
        return True

    def _call(self, uid: Any, rest: list[Any]) -> bool:
        if len(rest) != 2 or not isinstance(rest[0], str):
            self._error(uid, "protocol-error", "a call is (call UID METHOD ARGS)", tag="epc-error")
            return True
        name = str(rest[0])
        if name != Hello.NAME and not self.authenticated:
            self._error(uid, "unauthorized", "call hello with the token first")
            return True
        try:
            request = decode_request(name, rest[1])
        except MethodError as err:  # unknown, or arguments that do not fit
            self._error(uid, err.kind, err.message)
            return True
        if isinstance(request, Hello):
            return self._hello(uid, request)
        method = METHODS.get(name)
        if method is None:  # a request of the protocol this server does not serve
            self._error(uid, "unknown-method", f"no method named {name}")
            return True
        if method.slow:
            # Its own daemon thread: a slow call never holds the connection, nor the exit.
            threading.Thread(target=self._run, args=(uid, method, request),
                             name=f"epc-{method.name}", daemon=True).start()
        else:
            self._run(uid, method, request)
        return True

    def _hello(self, uid: Any, hello: Hello) -> bool:
        if not hmac.compare_digest(hello.token.encode("utf-8"), self.server.token):
            self.server.admission.refused("a wrong token", self.client_address)
            self._error(uid, "unauthorized", "wrong token")
            return False
        client = hello.client_fields()
        self.attachments = client.get("attachments") is True
        self._face = face_name(client.get("client"))
        timeout = client.get("approval-timeout")
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            self._approval_timeout = float(timeout)
        if not self.authenticated:
            self.authenticated = True
            self.server.admission.passed(self.request)
            self._writer = threading.Thread(target=self._drain, name="epc-writer",
                                            daemon=True)
            self._writer.start()
            self.server.bridge.channel.peer_opened(self)
            log.info("Emacs connected (%s)", client.get("emacs-version", "unknown version"))
        self._reply(uid, self.server.bridge.hello_info())
        if client.get("backlog") is True:  # a face: it shows what it missed meanwhile
            try:
                self.server.bridge.welcome(self)
            except Exception:  # the connection stands without its backlog
                log.exception("the backlog could not be replayed")
        return True

    def _run(self, uid: Any, method: Method, request: Request[Any]) -> None:
        try:
            result = method.run(self.server.bridge, self, request)
        except PassepartoutError as err:  # Refusal included: a structured error reply
            self._error(uid, err.kind, err.message)
            return
        except Exception:
            log.exception("method %s failed", method.name)
            self._error(uid, "internal-error", f"{method.name} failed; see the server log")
            return
        self._reply(uid, result)


# -- the server -------------------------------------------------------------------------


class BridgeServer(socketserver.ThreadingMixIn, EPCServer):
    """An EPC server on 127.0.0.1 (or on a Unix socket given as ``listener``: the
    daemon's), one thread per Emacs connection.

    ``admission`` bounds the connections still waiting for their token; servers on
    several sockets share one, so that its cap is for them all."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, bridge: Bridge, token: str, *,
                 listener: socket.socket | None = None,
                 admission: Admission | None = None) -> None:
        self.bridge = bridge
        self.token = token.encode("utf-8")
        self.admission = admission or Admission()
        # python-epc gives its logger a stream handler of its own: route it through ours.
        epc_logger = logging.getLogger("epc")
        epc_logger.handlers.clear()
        epc_logger.setLevel(logging.WARNING)
        EPCServer.__init__(self, ("127.0.0.1", 0), RequestHandlerClass=Connection,
                           bind_and_activate=listener is None)
        if listener is not None:  # already listening: the port line went out before imports
            socketserver.TCPServer.server_close(self)  # the unbound socket it made
            self.socket = listener
            self.server_address = listener.getsockname()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def verify_request(self, request: Any, client_address: Any) -> bool:
        """On a Unix socket, only our own user: the kernel says who the peer is (the
        socket's 0700 directory already keeps others out; this holds if it did not)."""
        if request.family != socket.AF_UNIX:
            return True
        uid = peer_uid(request)
        if uid is None or uid == os.geteuid():
            return True
        self.admission.refused(f"a connection from another user (uid {uid})")
        return False

    def process_request(self, request: Any, client_address: Any) -> None:
        # On the accepting thread, before the connection's thread exists: over the cap,
        # the oldest waiting connection is closed, so waiting threads stay bounded.
        if not self.admission.admit(request, functools.partial(_shut, request)):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.admission.left(request)  # no thread will say so
            raise

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.exception("error on the connection from %s", client_address)

    def connections(self) -> list[Connection]:
        return list(self.clients)

    def stop(self) -> None:
        """Stop accepting, close every connection, and release the port."""
        self.shutdown()
        for conn in self.connections():
            conn.close()
        self.server_close()
        self.admission.flush()


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None where the system
    has no SO_PEERCRED: there the directory's mode alone keeps others out)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option,
                                                           struct.calcsize("3i")))
    return int(uid)


def _shut(sock: socket.socket) -> None:
    """End a socket's reads and writes; its own thread sees the end and closes it."""
    sock.shutdown(socket.SHUT_RDWR)


__all__ = ["BridgeServer", "Connection", "Refusal", "frame"]
