"""An ACP client for the tests: the official SDK's client side, spawning
``passepartout acp`` in a daemon environment of :mod:`daemon_proc`, recording every
session update and answering permission requests from a script."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
)
from acp.stdio import spawn_agent_process
from acp_wire import check_wire, relay_command
from daemon_proc import Daemons
from wire_client import PYTHON, ROOT


@dataclass
class Peer:
    """What the client saw; ``answers`` are the option ids it picks, in order (none
    left: it cancels the request)."""

    answers: list[str] = field(default_factory=list)
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(
        default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)
    chunk_seen: asyncio.Event = field(default_factory=asyncio.Event)
    wire: Path | None = None  # the relay's record of the connection
    sent: list[dict[str, Any]] = field(default_factory=list)  # the agent's, once closed

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        if isinstance(update, AgentMessageChunk):
            self.chunk_seen.set()

    async def request_permission(self, session_id: str, tool_call: ToolCallUpdate,
                                 options: list[PermissionOption],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0)))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notices.append({"method": method, **params})

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def of(self, kind: str, session: str | None = None) -> list[Any]:
        return [u for s, u in self.updates
                if getattr(u, "session_update", None) == kind and session in (None, s)]

    async def wait_for(self, kind: str, session: str, timeout: float = 10.0) -> list[Any]:
        """The updates of ``kind`` once there is one (some follow the prompt's answer)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not (found := self.of(kind, session)):
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"no {kind} update within {timeout:g} s")
            await asyncio.sleep(0.01)
        return found

    def text(self, session: str | None = None, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(kind, session)
                       if isinstance(u.content, TextContentBlock))

    def clear(self) -> None:
        self.updates.clear()
        self.permissions.clear()


@contextlib.asynccontextmanager
async def acp_client(daemons: Daemons, peer: Peer, stderr: Path | None = None,
                     capabilities: ClientCapabilities | None = None,
                     ) -> AsyncIterator[ClientSideConnection]:
    """``passepartout acp`` spawned (through a relay that records its stdio) and
    initialized with ``capabilities``; closed (stdin shut) at the end, when every
    message the agent wrote must validate against ACP's schema (:mod:`acp_wire`)."""
    log = (stderr or daemons.tmp / "acp.stderr").open("ab")
    peer.wire = daemons.tmp / f"acp-wire-{uuid.uuid4().hex[:8]}.jsonl"
    command = relay_command(PYTHON, peer.wire, PYTHON, "-m", "passepartout", "acp")
    try:
        async with spawn_agent_process(
            peer, command[0], *command[1:], env=daemons.env, cwd=ROOT,
            transport_kwargs={"stderr": log, "shutdown_timeout": 10.0},
            use_unstable_protocol=True,
        ) as (conn, _process):
            await asyncio.wait_for(conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities), 60)
            yield conn
    finally:
        log.close()
    peer.sent = check_wire(peer.wire)


def prompt(text: str) -> list[TextContentBlock]:
    return [text_block(text)]
