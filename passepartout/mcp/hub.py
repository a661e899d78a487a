"""The MCP sessions of one agent, on one background event loop thread.

The agent is threaded (a lane per session) and the SDK is asyncio: each configured
server gets one task on this loop that connects, lists the tools, keeps the session
open and pings it; a lane's tool call is handed to the loop and waited for with the
server's timeout.  A server that cannot start, or dies (its process exits, a ping or a
call fails), is marked so, its tools leave the belt, and the status says why; the agent
goes on, and the server is started again after 1 s, 2 s, 4 s ... up to 5 minutes (the
wait starts over once a session has lasted a minute), its tools back on the belt when
it is.

Every stdio server runs in a process group of its own (the SDK starts it in a new
session); one that does not answer ``initialize`` and list its tools within
``start_timeout`` (the smaller of 20 s and the server's ``timeout``) is failed and its
group killed.  :meth:`McpHub.stop` cancels every session, so that each group is ended
(stdin closed, then SIGTERM, then SIGKILL to the whole group) even while a server is
still being waited for; a group whose session could not end it is killed after.

A listed tool is offered only when the person approved its exact card (``pins``,
:mod:`passepartout.mcp.pins`); the others are withheld, and those that wait for an
answer (new, or changed since approved) are handed to ``on_waiting`` to be asked.
:meth:`McpHub.reoffer` takes the pins again (after an answer) without a new listing.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passepartout.errors import PipelineError
from passepartout.mcp.config import ServerSpec
from passepartout.mcp.pins import Card, PinStore
from passepartout.mcp.tools import Offer, offer, result_text
from passepartout.text import one_line

log = logging.getLogger(__name__)

PING_EVERY = 10.0  # seconds between two listings of a session's tools
CONNECT_TIMEOUT = 20.0  # to start, answer initialize and list the tools
STOP_TIMEOUT = 10.0  # the SDK's own close: stdin, 2 s, SIGTERM, 2 s, SIGKILL
KILL_GRACE = 2.0  # between SIGTERM and SIGKILL to a group left behind
RETRY_FIRST = 1.0  # seconds before a failed or dead server is started again
RETRY_MAX = 300.0
HEALTHY = 60.0  # a session this long starts the waits between restarts over


@dataclass
class ServerState:
    """What the status says of one server."""

    spec: ServerSpec
    state: str = "starting"  # starting | ready | failed | died | stopped
    error: str = ""
    offers: list[Offer] = field(default_factory=list)
    listed: list[Any] = field(default_factory=list)  # the server's last tools/list
    client: Any = None
    starts: int = 0  # sessions opened so far
    retry_in: float | None = None  # seconds until the next start, after a failure

    def line(self) -> str:
        """One status line: ``weather: ready, 3 tools (1 withheld: ...)``."""
        if self.state == "ready":
            tools = [o for o in self.offers if o.tool is not None]
            withheld = [o for o in self.offers if o.tool is None and not o.waiting]
            waiting = [o for o in self.offers if o.waiting]
            text = f"{self.spec.name}: ready, {len(tools)} tool{'s' * (len(tools) != 1)}"
            if withheld:
                text += "; withheld: " + ", ".join(f"{o.remote} ({o.withheld})"
                                                   for o in withheld)
            if waiting:
                text += ("; waiting for your approval: "
                         + ", ".join(f"{o.remote}" + (" (changed)" if "changed" in str(
                             o.withheld) else "") for o in waiting)
                         + " (`passepartout mcp tools`)")
            return text
        text = f"{self.spec.name}: {self.state}" + (f" ({self.error})" if self.error else "")
        if self.retry_in is not None and self.state in ("failed", "died"):
            text += f"; next try in {self.retry_in:g} s"
        return text


class McpHub:
    """Connects the configured servers and calls their tools for the lanes."""

    def __init__(self, specs: tuple[ServerSpec, ...], *, log_dir: Path | None = None,
                 on_change: Callable[[], None] = lambda: None,
                 ping_every: float = PING_EVERY, retry_first: float | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT,
                 pins: PinStore | None = None,
                 on_waiting: Callable[[list[Card]], None] = lambda cards: None) -> None:
        self.states = {s.name: ServerState(s) for s in specs}
        self.connect_timeout = connect_timeout
        self.log_dir = log_dir
        self.on_change = on_change
        self.pins = pins
        self.on_waiting = on_waiting
        self._offering = threading.Lock()
        self.ping_every = ping_every
        self.retry_first = RETRY_FIRST if retry_first is None else retry_first
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="mcp-client", daemon=True)
        self._stopping: asyncio.Event | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._settled = threading.Event()
        self._stopped = False
        # The process groups of stdio servers whose session has not closed them yet.
        self._groups: set[int] = set()
        self._groups_lock = threading.Lock()

    # -- life cycle -------------------------------------------------------------------

    def start(self) -> McpHub:
        if not self._stopped:  # stopped before it started (the agent shut down booting)
            self._thread.start()
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._stopping = asyncio.Event()
        self._tasks = [self.loop.create_task(self._serve(s.spec))
                       for s in self.states.values()]
        self.loop.run_until_complete(self._first_settle())
        self.loop.run_until_complete(asyncio.gather(*self._tasks, return_exceptions=True))
        self.loop.close()

    async def _first_settle(self) -> None:
        while any(s.state == "starting" for s in self.states.values()) and not all(
                t.done() for t in self._tasks):
            await asyncio.sleep(0.02)
        self._settled.set()

    def wait_settled(self, timeout: float) -> bool:
        """Whether every server is past starting (ready or failed) within ``timeout``."""
        return self._settled.wait(timeout)

    def stop(self) -> None:
        """Close every session and end every server's process group."""
        self._stopped = True
        if self._thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.loop.call_soon_threadsafe(self._cancel_all)
            self._thread.join(STOP_TIMEOUT + 1)
            if self._thread.is_alive():
                log.warning("MCP sessions did not close within %g s", STOP_TIMEOUT)
        self._kill_left()

    def _cancel_all(self) -> None:
        """On the loop: stop, and cancel the sessions (one still waiting for a server to
        answer ``initialize`` too); each closes its server as it unwinds."""
        if self._stopping is not None:
            self._stopping.set()
        for task in self._tasks:
            task.cancel()

    def _kill_left(self) -> None:
        """SIGTERM, then SIGKILL, to each process group no session closed."""
        with self._groups_lock:
            groups, self._groups = set(self._groups), set()
        alive = {g for g in groups if _signal_group(g, signal.SIGTERM)}
        deadline = time.monotonic() + KILL_GRACE
        while alive and time.monotonic() < deadline:
            time.sleep(0.02)
            alive = {g for g in alive if _signal_group(g, 0)}
        for group in alive:
            log.warning("MCP server process group %d did not end on SIGTERM: killed", group)
            _signal_group(group, signal.SIGKILL)

    # -- one server -------------------------------------------------------------------

    async def _serve(self, spec: ServerSpec) -> None:
        """Sessions with the server, one after the other, until the hub stops."""
        state = self.states[spec.name]
        stopping = self._stopping
        assert stopping is not None
        wait = self.retry_first
        while True:
            began = self.loop.time()
            await self._session(spec, state)
            if state.state not in ("failed", "died") or stopping.is_set():
                return
            if self.loop.time() - began >= HEALTHY:
                wait = self.retry_first
            state.retry_in = wait
            try:
                await asyncio.wait_for(stopping.wait(), wait)
                return
            except TimeoutError:
                pass
            state.retry_in = None
            wait = min(wait * 2, RETRY_MAX)

    async def _session(self, spec: ServerSpec, state: ServerState) -> None:
        from mcp import Client

        errlog = self._errlog(spec)
        spawned: list[int] = []
        token = _SPAWNED.set((spawned, self._track))
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self.start_timeout(spec)):
                        client = await stack.enter_async_context(Client(
                            self._transport(spec, errlog), read_timeout_seconds=spec.timeout,
                            cache=None))
                        listed = await self._list_tools(client)
                except TimeoutError:
                    raise _NoAnswer(f"no answer to initialize within "
                                    f"{self.start_timeout(spec):g} s; its process group "
                                    "was killed") from None
                self._offer(state, listed)
                state.client, state.state, state.error = client, "ready", ""
                state.starts += 1
                log.info("MCP server %s: %d tools%s", spec.name, len(state.offers),
                         " (started again)" if state.starts > 1 else "")
                self.on_change()
                await self._keep(state, client)
            self._settle(state, "stopped", "")
        except asyncio.CancelledError:
            self._settle(state, "stopped", "")
            # A cancelled session was closed (the SDK's close is shielded); the loop stops.
        except BaseException as err:  # an ExceptionGroup from the SDK's task groups too
            if isinstance(err, KeyboardInterrupt | SystemExit):
                raise
            died = state.state == "ready"
            why = _reason(err) + _stderr_tail(errlog)
            log.warning("MCP server %s %s: %s", spec.name, "died" if died else "failed", why)
            self._settle(state, "died" if died else "failed", why)
        finally:
            _SPAWNED.reset(token)
            # Closed: the SDK ended the group (what it could not is killed at stop).
            self._untrack(spawned, only_gone=True)
            if errlog is not None:
                errlog.close()

    def start_timeout(self, spec: ServerSpec) -> float:
        """How long a server has to start, answer ``initialize`` and list its tools."""
        return min(self.connect_timeout, spec.timeout)

    def _track(self, pid: int) -> None:
        with self._groups_lock:
            self._groups.add(pid)

    def _untrack(self, pids: list[int], *, only_gone: bool) -> None:
        with self._groups_lock:
            for pid in pids:
                if not only_gone or not _signal_group(pid, 0):
                    self._groups.discard(pid)

    def _settle(self, state: ServerState, to: str, why: str) -> None:
        if state.state in ("failed", "died") and to == "stopped":
            return
        was_ready = state.state == "ready"
        state.client, state.state, state.error = None, to, why
        if was_ready:
            self.on_change()

    async def _keep(self, state: ServerState, client: Any) -> None:
        """Hold the session open; list the tools again now and then (the protocol of
        2026 has no ping): a server that died is noticed, a changed list is taken."""
        stopping = self._stopping
        assert stopping is not None
        while not stopping.is_set():
            try:
                await asyncio.wait_for(stopping.wait(), self.ping_every)
            except TimeoutError:
                listed = await asyncio.wait_for(self._list_tools(client), CONNECT_TIMEOUT)
                if self._offer(state, listed):
                    self.on_change()

    def _offer(self, state: ServerState, listed: list[Any]) -> bool:
        """Offer what ``listed`` holds as the pins now allow; whether that changed.
        The cards waiting for the person are handed to ``on_waiting``."""
        with self._offering:
            before = [o.key() for o in state.offers]
            offers = [offer(state.spec.name, t, self.call, self.pins) for t in listed]
            state.listed, state.offers = list(listed), offers
        waiting = [o.card for o in offers if o.waiting and o.card is not None]
        if self.pins is not None:
            try:
                self.pins.set_waiting(state.spec.name, waiting)
            except OSError as err:
                log.warning("cannot note the MCP tools waiting for approval: %s", err)
        if waiting:
            try:
                self.on_waiting(waiting)
            except Exception:  # asking is the asker's business; the offers stand
                log.exception("asking about the MCP tools of %s failed", state.spec.name)
        return before != [o.key() for o in offers]

    def reoffer(self) -> bool:
        """Take the pins again for every ready server (the person answered); whether
        the tools offered changed (``on_change`` is told then)."""
        changed = False
        for state in list(self.states.values()):
            if state.state == "ready" and self._offer(state, state.listed):
                changed = True
        if changed:
            self.on_change()
        return changed

    @staticmethod
    async def _list_tools(client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _page in range(50):
            page = await client.list_tools(cursor=cursor)
            tools += list(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _transport(self, spec: ServerSpec, errlog: Any) -> Any:
        _record_spawns()
        if spec.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = httpx2.AsyncClient(headers=spec.headers, timeout=spec.timeout)
            return streamable_http_client(spec.url, http_client=http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        assert spec.command is not None
        params = StdioServerParameters(command=spec.command, args=list(spec.args),
                                       env=spec.env or None, cwd=spec.cwd)
        return stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)

    def _errlog(self, spec: ServerSpec) -> Any:
        """Where a stdio server's stderr goes (the status quotes its last line)."""
        if spec.url or self.log_dir is None:
            return None
        try:
            self.log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            return open(self.log_dir / f"{spec.name}.stderr", "w+", encoding="utf-8")
        except OSError as err:
            log.warning("no stderr log for MCP server %s: %s", spec.name, err)
            return None

    # -- what the lanes and the status use ----------------------------------------------

    def tools(self) -> list[Any]:
        return [o.tool for s in self.states.values() if s.state == "ready"
                for o in s.offers if o.tool is not None]

    def lines(self) -> list[str]:
        return [s.line() for s in self.states.values()]

    def problems(self) -> list[str]:
        return [s.line() for s in self.states.values() if s.state in ("failed", "died")]

    def call(self, server: str, tool: str, args: dict[str, Any]) -> str:
        """Call ``tool`` of ``server`` from a lane; its text, or a PipelineError."""
        state = self.states.get(server)
        client = state.client if state is not None else None
        if state is None or client is None:
            why = state.line() if state is not None else f"{server}: not configured"
            raise PipelineError(f"the MCP server is not available: {why}")
        future = asyncio.run_coroutine_threadsafe(client.call_tool(tool, args), self.loop)
        try:
            result = future.result(state.spec.timeout + 1)
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.cancel()
            raise PipelineError(f"the MCP server {server} did not answer within "
                                f"{state.spec.timeout:g} s") from None
        except Exception as err:
            raise PipelineError(f"the MCP server {server} failed: {_reason(err)}") from None
        return result_text(result)


class _NoAnswer(Exception):
    """A server did not answer ``initialize`` in time (the message says so)."""


# Where the process spawned for a session is recorded: (its list, the hub's tracker).
_SPAWNED: contextvars.ContextVar[tuple[list[int], Callable[[int], None]] | None] = (
    contextvars.ContextVar("passepartout_mcp_spawned", default=None))


def _record_spawns() -> None:
    """Have the SDK's stdio transport tell the session which process it started (it
    starts it in a new session: its pid is its process group)."""
    try:
        from mcp.client import stdio
    except ImportError:
        return
    spawn = getattr(stdio, "_create_platform_compatible_process", None)
    if spawn is None or getattr(spawn, "_passepartout", False):
        return

    async def recorded(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        where = _SPAWNED.get()
        if where is not None:
            where[0].append(process.pid)
            where[1](process.pid)
        return process

    recorded._passepartout = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = recorded


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to a process group; whether it still has a member."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reason(err: BaseException) -> str:
    """The innermost message of an error (the SDK wraps them in groups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, _NoAnswer):
        return one_line(str(err), 300)
    text = str(err) or type(err).__name__
    return one_line(f"{type(err).__name__}: {text}" if str(err) else text, 300)


def _stderr_tail(errlog: Any) -> str:
    if errlog is None:
        return ""
    try:
        errlog.flush()
        errlog.seek(0)
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return f"; it said: {one_line(lines[-1], 200)}" if lines else ""
