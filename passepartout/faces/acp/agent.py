"""The ACP methods, each answered through the daemon's face.

The face is synchronous (one reader thread, calls that wait); the ACP connection is
asyncio.  Every face call runs in a worker thread; a turn's events are taken from its
queue on the loop, woken by the face's reader, so that the event loop never blocks and
a closing connection never waits on a blocked thread.  Notifications of the daemon
(cron and hook results, warnings) arrive on the reader thread and are handed to the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import uuid
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    StopReason,
    ToolCallStart,
    ToolCallUpdate,
)

from passepartout import __version__, workspace
from passepartout.errors import DaemonError, ProtocolError
from passepartout.faces.acp.permission import NO, OPTIONS, Answer, answer_of
from passepartout.faces.acp.updates import (
    PromptError,
    ToolTracker,
    Update,
    approval_call,
    history_updates,
    prompt_parts,
    session_info,
    usage_update,
)
from passepartout.faces.answered import local_mark
from passepartout.faces.face import Face, Turn
from passepartout.protocol import (
    Allow,
    ApprovalAsked,
    Chunk,
    Deny,
    Disconnected,
    Done,
    Event,
    Notice,
    ToolEvent,
    TurnError,
)

log = logging.getLogger(__name__)

POLL = 0.25  # the longest the loop waits for a turn's next event without a wake-up
LIST_MAX = 200  # sessions listed at most (most recent first)
EXTENSION = "passepartout"  # the name of this agent's extensions (``_passepartout/...``)
ISSUED = re.compile(r"acp-[0-9a-f]{12}")  # a session id :meth:`AcpAgent.new_session` gives


@dataclass
class _Running:
    turn: Turn
    cancelled: bool = False
    started: float = field(default_factory=time.monotonic)


@dataclass
class AcpAgent:
    """One ACP client's view of the daemon (see the module's docstring)."""

    face: Face
    conn: Client | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _running: dict[str, _Running] = field(default_factory=dict)
    _last_session: str | None = None
    context_max: int | None = None  # CONTEXT_MAX_TOKENS: the most a turn's context holds
    _held: list[Notice] = field(default_factory=list)  # notices kept for after a turn
    _issued: set[str] = field(default_factory=set)  # sessions created here
    _cwd: dict[str, str] = field(default_factory=dict)  # each session's working directory
    _extensions: bool = False  # the client reads ``_passepartout/notice``
    _tasks: set[asyncio.Future[None]] = field(default_factory=set)

    def on_connect(self, conn: Client) -> None:
        self.conn = conn
        self._loop = asyncio.get_running_loop()
        self.face.listen(self._on_face_event)

    # -- the session lifecycle ---------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        self._extensions = advertises_notices(client_capabilities)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                field_meta={EXTENSION: {"notice": True}},
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities())),
            agent_info=Implementation(name="passepartout", title="Passepartout",
                                      version=__version__))

    async def new_session(self, cwd: str, mcp_servers: Any = None,
                          **kwargs: Any) -> NewSessionResponse:
        session = f"acp-{uuid.uuid4().hex[:12]}"
        self._cwd[session] = _working_directory(cwd)
        self._issued.add(session)
        self._last_session = session
        return NewSessionResponse(session_id=session)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           **kwargs: Any) -> LoadSessionResponse:
        history = await self._known_history(session_id)
        self._cwd[session_id] = _working_directory(cwd)
        for update in history_updates(history):
            await self._update(session_id, update)
        self._last_session = session_id
        await self._flush_held(session_id)  # what came while no session was open
        return LoadSessionResponse()

    async def resume_session(self, session_id: str, cwd: str, mcp_servers: Any = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        await self._known_history(session_id)
        self._cwd[session_id] = _working_directory(cwd)
        self._last_session = session_id
        return ResumeSessionResponse()

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        found = await self._face(self.face.sessions)
        where = cwd if cwd and os.path.isabs(cwd) else os.getcwd()
        return ListSessionsResponse(sessions=[session_info(s, where) for s in found[:LIST_MAX]])

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None  # the daemon's token file is the authentication

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        return None

    # -- a turn --------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        try:
            parts = prompt_parts(prompt)
        except PromptError as err:  # refused here: the daemon's frame would not hold it
            raise RequestError.invalid_params({"message": str(err)}) from None
        if not parts.text.strip():
            raise RequestError.invalid_params({"message": "the prompt has no text"})
        if session_id in self._running:
            raise RequestError.invalid_request(
                {"message": f"a prompt is already running in session {session_id}"})
        self._last_session = session_id
        await self._flush_held(session_id)  # before the reply, not inside it
        context: dict[str, Any] = {"attachments": parts.attachments} if parts.attachments else {}
        if session_id in self._cwd:  # the session's directory is the turn's workspace
            context[workspace.META_KEY] = self._cwd[session_id]
        turn = await self._face(self.face.send, session_id, parts.text,
                                context=context or None)
        running = self._running[session_id] = _Running(turn)
        try:
            stop = await self._follow(session_id, running)
        finally:
            del self._running[session_id]
        self._spawn(self._after_turn(session_id))  # after the reply: the turn is not kept
        return PromptResponse(stop_reason=stop)

    async def _events(self, turn: Turn) -> AsyncIterator[Event]:
        """The turn's events as they come: the face's reader wakes the loop (no thread
        waits on the queue); a missed wake-up costs at most ``POLL``."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(ready.set)

        turn.on_event = wake
        while not turn.finished:
            ready.clear()
            event = turn.next(0)
            if event is not None:
                yield event
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ready.wait(), POLL)

    async def _follow(self, session_id: str, running: _Running) -> StopReason:
        tools = ToolTracker(prefix=running.turn.turn)
        async for event in self._events(running.turn):
            if isinstance(event, Chunk):
                await self._update(session_id, update_agent_message_text(event.text))
            elif isinstance(event, ToolEvent):
                update = tools.on_tool(event)
                if update is not None:
                    await self._update(session_id, update)
            elif isinstance(event, ApprovalAsked):
                await self._ask(session_id, event, tools)
            elif isinstance(event, TurnError):
                await self._update(session_id, update_agent_message_text(
                    f"\n[{event.kind}] {event.message}\n"))
            elif isinstance(event, Done):
                mark = local_mark(event, time.monotonic() - running.started)
                if mark is not None:
                    await self._update(session_id, update_agent_message_text(f"\n\n{mark}"))
                return "cancelled" if event.cancelled or running.cancelled else "end_turn"
            elif isinstance(event, Disconnected):
                break
        raise RequestError.internal_error({"message": "the daemon is gone: "
                                                      f"{self.face.closed_reason}"})

    async def _ask(self, session_id: str, event: ApprovalAsked, tools: ToolTracker | None) -> None:
        """``session/request_permission`` for one "ask" of the gates; its answer to the
        daemon (a failed or cancelled request is a no)."""
        call_id = tools.for_approval(event) if tools else f"approval-{event.approval_id[:8]}"
        fields = approval_call(call_id, event)
        answer: Answer = NO
        if self.conn is not None:
            try:
                if tools is not None:  # the call as proposed, shown before the question
                    await self._update(session_id, ToolCallStart(session_update="tool_call",
                                                                 **fields))
                response = await self.conn.request_permission(
                    session_id=session_id, options=OPTIONS, tool_call=ToolCallUpdate(**fields))
                answer = answer_of(response)
            except Exception as err:  # the client's failure is a no, never a yes
                log.warning("permission request failed: %s", err)
        try:
            reply = (Allow(always=answer.always) if answer.yes
                     else Deny(always=answer.always))
            await self._face(self.face.answer, event.approval_id, reply)
        except RequestError as err:
            log.warning("answering approval %s: %s", event.approval_id, err)
        if tools is not None:
            await self._update(session_id, tools.answered(call_id, answer.yes, answer.always))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        running = self._running.get(session_id)
        if running is None:
            return
        running.cancelled = True
        await self._face(running.turn.cancel)

    async def _after_turn(self, session_id: str) -> None:
        """The session's context and cost (the ledger's), and the notices held during the
        turn: sent once the turn has answered (a ledger query would delay every reply)."""
        try:
            usage = await self._face(self.face.usage, session_id)
            update = await asyncio.to_thread(usage_update, usage, self.context_max)
            if update is not None:
                await self._update(session_id, update)
        except Exception as err:  # a daemon or client gone away: no cost shown, no more
            log.info("no usage for %s: %s", session_id, err)
        await self._flush_held(session_id)

    # -- notifications -------------------------------------------------------------------

    def _on_face_event(self, event: Event) -> None:
        """On the face's reader thread: hand what concerns the client to the loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        if isinstance(event, Notice):
            loop.call_soon_threadsafe(self._notice, event)
        elif isinstance(event, ApprovalAsked):  # asked outside any turn of this face
            asyncio.run_coroutine_threadsafe(self._ask_unbound(event), loop)  # loop holds it

    def _notice(self, notice: Notice) -> None:
        self._spawn(self._notify(notice))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)  # kept until done (the loop holds tasks weakly)
        task.add_done_callback(self._tasks.discard)

    async def _notify(self, notice: Notice) -> None:
        """The notice as text in the open session (a standard update every client
        shows), and as ``_passepartout/notice`` to a client that said it reads it.
        Whether a turn runs is judged here, just before writing, not when the notice
        came: a turn begun meanwhile would get the text inside its reply.  With no
        session open yet, or a turn running, it waits for the next chance."""
        if self.conn is None:
            return
        session = self._last_session
        if session is None or session in self._running:
            self._held.append(notice)
            return
        await self._deliver(session, notice)

    async def _flush_held(self, session: str) -> None:
        held, self._held = self._held, []
        for notice in held:
            await self._deliver(session, notice)

    async def _deliver(self, session: str, notice: Notice) -> None:
        try:
            await self._update(session, update_agent_message_text(
                f"\n[{notice.level}] {notice.text}\n"))
            if self._extensions and self.conn is not None:
                await self.conn.ext_notification(EXTENSION + "/notice",
                                                 {"level": notice.level, "text": notice.text})
        except Exception as err:  # a client gone away misses a notice, nothing more
            log.info("notice not delivered: %s", err)

    async def _ask_unbound(self, event: ApprovalAsked) -> None:
        session = event.session or self._last_session
        if session is None:
            await self._face(self.face.answer, event.approval_id, Deny())
            return
        await self._ask(session, event, None)

    # -- helpers -------------------------------------------------------------------------

    async def _update(self, session_id: str, update: Update) -> None:
        if self.conn is not None:
            await self.conn.session_update(session_id=session_id, update=update)

    async def _face(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        """A face call in a worker thread; a daemon error is the request's error."""
        try:
            return await asyncio.to_thread(method, *args, **kwargs)
        except DaemonError as err:
            if err.kind == "too-large":  # the client's to fix; this face keeps working
                raise RequestError.invalid_params({"message": err.message}) from None
            raise RequestError.internal_error({"message": err.message, "kind": err.kind}) \
                from None

    async def _known_history(self, session_id: str) -> list[dict[str, Any]]:
        """The session's kept messages; none for a session this agent issued that has no
        turn yet (here or in an earlier process: the id says so), and an unknown
        session is "not found"."""
        history: list[dict[str, Any]] = await self._face(self.face.history, session_id)
        if history or session_id in self._issued or ISSUED.fullmatch(session_id):
            return history
        known = await self._face(self.face.sessions)
        if not any(str(s.get("id")) == session_id for s in known):
            raise RequestError.resource_not_found(session_id)
        return history


def advertises_notices(capabilities: Any) -> bool:
    """The client said in its capabilities that it reads ``_passepartout/notice``:
    ``{"_meta": {"passepartout": {"notice": true}}}`` (ACP's way to advertise an
    extension)."""
    meta = getattr(capabilities, "field_meta", None)
    ours = meta.get(EXTENSION) if isinstance(meta, dict) else None
    return isinstance(ours, dict) and ours.get("notice") is True


def _working_directory(cwd: Any) -> str:
    """A session's ``cwd`` (the spec: an absolute path) as the workspace of its turns;
    an invalid one is refused with the reason, before any turn."""
    try:
        return str(workspace.checked(cwd))
    except ProtocolError as err:
        raise RequestError.invalid_params({"message": f"cwd: {err.message}"}) from None
