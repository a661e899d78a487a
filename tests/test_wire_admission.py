"""Connections that never present the token cannot starve ``passepartout serve``.

The real server process, with a deadline of one second for the token: idle sockets by
the hundred keep a bounded number of threads (counted in ``/proc/PID/task``) and an
honest client still gets in at once; a header or body dribbled a byte at a time is
closed at the deadline; a huge frame announced before the token is refused before its
body is read; an authenticated connection has no deadline (the flood's honest client).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from wire_client import ServerProcess, WireClient, start_server

import passepartout.wire.admission as admission_module
from passepartout.errors import ConfigError
from passepartout.signals import Symbol
from passepartout.wire.admission import DEFAULT_CAP, DEFAULT_TIMEOUT, Admission
from passepartout.wire.frames import frame

AUTH_TIMEOUT = 1.0
IDLE = 300


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("admission"),
                       PASSEPARTOUT_AUTH_TIMEOUT=str(AUTH_TIMEOUT))
    client = srv.client()
    deadline = time.monotonic() + 30
    while not _plist(client.ok("status"))["ready"] and time.monotonic() < deadline:
        time.sleep(0.05)  # measure threads once the agent's boot is over
    client.close()
    yield srv
    assert srv.stop() == 0, srv.log()
    assert "Traceback" not in srv.log()


def _plist(value: list) -> dict:
    return {str(k): v for k, v in zip(value[::2], value[1::2], strict=True)}


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _settled_threads(pid: int, at_most: int, within: float = 3.0) -> int:
    """The thread count, once it is at most ``at_most`` (or when ``within`` runs out)."""
    deadline = time.monotonic() + within
    while (count := _threads(pid)) > at_most and time.monotonic() < deadline:
        time.sleep(0.02)
    return count


class _Peak:
    """The most threads the process had, sampled every millisecond until stopped."""

    def __init__(self, pid: int) -> None:
        self.pid, self.most = pid, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.001):
            self.most = max(self.most, _threads(self.pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.most


def _closed_by_server(sock: socket.socket, timeout: float) -> bool:
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


@pytest.mark.attack
def test_hundreds_of_idle_connections_keep_threads_bounded(server: ServerProcess) -> None:
    pid = server.proc.pid
    base = _settled_threads(pid, 0, within=0.5)
    # Threads of connections without the token: at most the cap waiting and the cap
    # ending; one more for the admission's sweeper, one for the honest client's writer.
    steady, bound = base + DEFAULT_CAP + 2, base + 2 * DEFAULT_CAP + 2
    peak = _Peak(pid)
    started = time.monotonic()
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=5)
            for _ in range(IDLE)]
    try:
        opened = time.monotonic() - started
        started = time.monotonic()
        honest = server.client()  # accepted after the idle ones: behind them in the queue
        assert honest.ok("ping") == "pong"
        answered = time.monotonic() - started
        during = _settled_threads(pid, steady)
        most = peak.stop()
        closed = sum(_closed_by_server(s, 0.01) for s in idle[:-DEFAULT_CAP])
        print(f"\n{IDLE} idle connections opened in {opened * 1000:.0f} ms; threads: "
              f"{base} before, {during} with them open (bound {steady}), at most {most} "
              f"(bound {bound}); an honest hello and ping after them in "
              f"{answered * 1000:.1f} ms; {closed} of the {IDLE - DEFAULT_CAP} oldest "
              "closed at once")
        assert during <= steady and most <= bound
        assert answered < 5.0  # the 300 are accepted first: ~0.2 s, ~1.5 s while litellm loads
        assert closed == IDLE - DEFAULT_CAP  # over the cap, the oldest go at once
        # The rest go at the deadline; the honest connection has none: it stays, answers.
        assert all(_closed_by_server(s, AUTH_TIMEOUT + 2) for s in idle[-DEFAULT_CAP:])
        time.sleep(max(0.0, started + AUTH_TIMEOUT * 1.3 - time.monotonic()))
        assert honest.ok("ping") == "pong"
        # The honest one's reader and writer, and the sweeper (it logs the count later).
        after = _settled_threads(pid, base + 3)
        print(f"threads after the deadline: {after}")
        assert after <= base + 3
        honest.close()
    finally:
        for s in idle:
            s.close()
    log = server.log()
    assert log.count("before its token") == 1, log  # the rest is summed up in a minute
    assert "closed a connection before its token: too many connections waiting" in log


@pytest.mark.attack
@pytest.mark.parametrize("drip", [b"00001", b"000040(call 1 ping nil)"],
                         ids=["header", "body"])
def test_a_frame_dribbled_byte_by_byte_is_closed_at_the_deadline(
    server: ServerProcess, drip: bytes
) -> None:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    started = time.monotonic()
    try:
        for byte in drip:  # one byte every 0.1 s: never idle for long, never done
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.1)
        assert _closed_by_server(sock, AUTH_TIMEOUT + 2)
        elapsed = time.monotonic() - started
        print(f"\n{drip!r} dribbled: closed after {elapsed:.2f} s")
        assert AUTH_TIMEOUT * 0.9 <= elapsed < AUTH_TIMEOUT + 1.5
    finally:
        sock.close()
    assert server.client().ok("ping") == "pong"


@pytest.mark.attack
@pytest.mark.parametrize("length", [0xFFFFFF, 64 * 1024 + 1])
def test_a_huge_frame_before_the_token_is_refused_before_its_body(
    server: ServerProcess, length: int
) -> None:
    client = WireClient(server.port)
    started = time.monotonic()
    client.send_raw(b"%06x" % length)  # the header alone: the body is never sent
    message = client.read_message()
    assert message[0] == "epc-error" and "over the limit" in message[2][1]
    assert client.is_closed(1.0)
    assert time.monotonic() - started < AUTH_TIMEOUT  # at once, not at the deadline
    assert server.client().ok("ping") == "pong"


@pytest.mark.attack
def test_calls_without_the_token_do_not_extend_the_deadline(server: ServerProcess) -> None:
    client = WireClient(server.port)
    started = time.monotonic()
    kinds = set()
    with pytest.raises(Exception):  # noqa: B017 - a Closed or an OSError, once closed
        while time.monotonic() - started < AUTH_TIMEOUT + 2:
            kinds.add(client.request("ping")[1][0])
            time.sleep(0.05)
    assert kinds == {"unauthorized"}
    assert time.monotonic() - started < AUTH_TIMEOUT + 1


def test_a_bad_auth_timeout_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="no port line") as caught:
        start_server(tmp_path, PASSEPARTOUT_AUTH_TIMEOUT="soon")
    assert "PASSEPARTOUT_AUTH_TIMEOUT must be a number of seconds" in str(caught.value)
    assert "Traceback" not in str(caught.value)


@pytest.mark.attack
def test_a_peer_that_never_reads_its_refusals_is_closed_at_the_deadline(
    server: ServerProcess
) -> None:
    """Its refusals fill the socket buffers and block the server's write: the deadline
    ends the write too, so no thread waits on it for good."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    request = frame([Symbol("methods"), 1]) * 1000
    started = time.monotonic()
    sock.setblocking(False)
    sent = 0
    try:
        while time.monotonic() - started < AUTH_TIMEOUT + 2:
            try:
                sent += sock.send(request)
            except BlockingIOError:  # both ways full: the server is stuck writing
                time.sleep(0.01)
            except OSError:  # closed by the server
                break
        sock.setblocking(True)
        assert _closed_by_server(sock, 5.0)
        elapsed = time.monotonic() - started
        print(f"\n{sent} bytes of requests, never read: closed after {elapsed:.2f} s")
        assert elapsed < AUTH_TIMEOUT + 1.5
    finally:
        sock.close()
    assert server.client().ok("ping") == "pong"


# -- the admission alone ------------------------------------------------------------------


class _Conn:
    """A stand-in connection: when the admission closed it; with ``ends``, its thread
    ends at once (it says it left), else it lingers."""

    def __init__(self, admission: Admission, ends: bool) -> None:
        self.admission, self.ends = admission, ends
        self.closed_at: float | None = None

    def close(self) -> None:
        self.closed_at = time.monotonic()
        if self.ends:
            self.admission.left(self)


def _admit(admission: Admission, count: int, *, ends: bool = True) -> list[_Conn]:
    conns = [_Conn(admission, ends) for _ in range(count)]
    for conn in conns:
        assert admission.admit(conn, conn.close)
    return conns


def test_over_the_cap_the_longest_waiting_is_closed() -> None:
    admission = Admission(cap=3, timeout=60)
    first, second, third, fourth = _admit(admission, 4)
    assert first.closed_at is not None
    assert [c.closed_at for c in (second, third, fourth)] == [None] * 3
    assert admission.waiting() == 3
    admission.passed(second)  # authenticated: out of the count, never closed by it
    _admit(admission, 2)
    assert second.closed_at is None and third.closed_at is not None


def test_a_waiting_connection_is_closed_at_its_deadline_not_after_its_token() -> None:
    admission = Admission(cap=4, timeout=0.2)
    started = time.monotonic()
    idle, honest = _admit(admission, 2)
    admission.passed(honest)
    deadline = time.monotonic() + 5
    while idle.closed_at is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert idle.closed_at is not None and 0.19 <= idle.closed_at - started < 1.0
    time.sleep(0.1)
    assert honest.closed_at is None


def test_newcomers_wait_for_closed_connections_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission_module, "CLOSING_WAIT", 0.05)
    admission = Admission(cap=2, timeout=60)
    lingering = _admit(admission, 4, ends=False)  # two closed, their threads not ended
    assert [c.closed_at is not None for c in lingering] == [True, True, False, False]
    late = _Conn(admission, ends=False)
    assert not admission.admit(late, late.close)  # no thread for it: closed by the caller
    assert lingering[2].closed_at is None  # nor does it cost a waiting one its place
    admission.left(lingering[0])
    assert admission.admit(late, late.close)
    assert lingering[2].closed_at is not None


def test_closings_are_logged_once_then_summed_up(caplog: pytest.LogCaptureFixture) -> None:
    admission = Admission(cap=1, timeout=60)
    with caplog.at_level(logging.WARNING, logger="passepartout.wire.admission"):
        _admit(admission, 101)
        admission.refused("a wrong token", ("127.0.0.1", 4242))
        assert len(caplog.records) == 1
        assert "too many connections waiting" in caplog.records[0].getMessage()
        admission.flush()
    assert len(caplog.records) == 2
    assert caplog.records[1].getMessage() == (
        "closed 100 connections before their token: 99 too many connections waiting for "
        "the token, 1 a wrong token")


@pytest.mark.parametrize("raw", ["soon", "0", "-1", "nan", "inf", "7200"])
def test_a_bad_auth_timeout_setting_names_the_variable(raw: str) -> None:
    with pytest.raises(ConfigError, match="PASSEPARTOUT_AUTH_TIMEOUT must be"):
        Admission.from_settings({"PASSEPARTOUT_AUTH_TIMEOUT": raw})
    assert Admission.from_settings({"PASSEPARTOUT_AUTH_TIMEOUT": " 2.5 "}).timeout == 2.5
    assert Admission.from_settings({}).timeout == DEFAULT_TIMEOUT
