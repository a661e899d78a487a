"""What each method a face may call does: the explicit method table of the EPC server.

The methods are the requests of :mod:`passepartout.protocol` (typed there once, for the
server and every client); this table says what each runs.  The transport
(:mod:`passepartout.server.epc`) reads frames, checks the token and decodes a call into
its request; it hands the method that request and the calling connection.  Every
method returns at once: a prompt goes to the session's lane, and the few that may take
time (reloading a skill, reading jobs or history) are marked ``slow`` and run off the
connection's thread.  The agent boots after the port line, so a method that needs it
either waits for it off-thread or queues its work until boot is done.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from passepartout import protocol, workspace
from passepartout.errors import PassepartoutError, ProtocolError
from passepartout.server.backlog import replay, waiting_flight_plans
from passepartout.server.focus import FOCUS_BODY_MAX, Focus, FocusHolder
from passepartout.server.peer import Peer, PeerChannel, emit
from passepartout.server.peer import leaves as _leaves
from passepartout.signals import Keyword, Signal, Symbol
from passepartout.turn import TurnContext

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.config import Config

log = logging.getLogger(__name__)

VERSION = "0.1.0"
BOOT_WAIT = 60.0  # how long a slow method waits for the agent to finish booting
_RESERVED_META = frozenset({"source", "session-id", "turn-id", "origin", "attached"})


class Refusal(PassepartoutError):
    """A call that is answered with a ``(KIND MESSAGE)`` error reply."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Bridge:
    """The server's state shared by every connection: the agent once booted, the
    peer channel (to every face) and the person's focus."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.channel = PeerChannel()
        self.focus = FocusHolder()
        self.agent: Agent | None = None
        self.boot_error: str | None = None
        self.ready = threading.Event()
        self._waiting: list[Callable[[Agent | None], None]] = []
        self._lock = threading.Lock()

    def attach(self, agent: Agent) -> None:
        """Boot is done: publish the services, run the work that waited for it."""
        agent.services.focus = self.focus
        agent.services.peer = self.channel
        agent.services.emacs_eval = self.channel.evaluation  # the emacs-eval tool's door
        agent.attach_faces(self.channel, protocol.FACES)  # a turn's source: its face
        from passepartout.security.approvals.standing import standing_grants

        self.channel.standing = standing_grants(agent.services)  # "always" answers
        self._finish(agent, None)

    def boot_failed(self, message: str) -> None:
        self._finish(None, message)

    def _finish(self, agent: Agent | None, error: str | None) -> None:
        with self._lock:
            self.agent, self.boot_error = agent, error
            waiting, self._waiting = self._waiting, []
            for work in waiting:  # in arrival order, before any later call runs
                _run_safely(work, agent)
            self.ready.set()
        self.channel.broadcast(protocol.StatusChanged(self.status()))

    def when_ready(self, work: Callable[[Agent | None], None]) -> None:
        """Run ``work`` now if boot is over, else as soon as it is (None: boot failed)."""
        with self._lock:
            if not self.ready.is_set():
                self._waiting.append(work)
                return
        _run_safely(work, self.agent)

    def wait_agent(self) -> Agent:
        if not self.ready.wait(BOOT_WAIT):
            raise Refusal("not-ready", "the agent is still starting; try again shortly")
        if self.agent is None:
            raise Refusal("boot-error", self.boot_error or "the agent failed to start")
        return self.agent

    def status(self) -> dict[str, Any]:
        agent = self.agent
        if agent is None:
            health = "unhealthy" if self.boot_error else "booting"
            problems = [self.boot_error] if self.boot_error else []
            info: dict[str, Any] = {"health": health, "problems": problems}
        else:
            info = agent.status()
        return {
            **info,
            **_model_info(self.config),
            "approvals-file": str(_approvals_file(self.config)),
            "presets-file": str(_presets_file(self.config)),
            "version": VERSION,
            "pid": os.getpid(),
            "ready": agent is not None,
            "connections": len(self.channel.peers()),
            "sessions": self.channel.sessions(),
            "pending-approvals": self.channel.pending_approvals(),
        }

    def welcome(self, peer: Peer) -> None:
        """A client that shows notices attached: what it missed while no such client
        was attached, then how many Flight Plans wait (see channels/backlog.py)."""
        notices, dropped = self.channel.face_attached(peer)
        approvals = _approvals_file(self.config)
        for level, text in replay(notices, dropped, waiting_flight_plans(approvals),
                                  approvals):
            emit(peer, protocol.Notice(level, text))

    def hello_info(self) -> dict[str, Any]:
        status = self.status()
        return {"version": VERSION, "health": status["health"], "problems": status["problems"],
                "session-dir": str(self.config.home), "ready": status["ready"],
                "pid": status["pid"]}


def _model_info(config: Config) -> dict[str, Any]:
    """The model a chat turn asks for by default, and its provider."""
    from passepartout.errors import ConfigError
    from passepartout.llm.models import LOCAL_MODEL, default_model

    try:
        model = default_model(config)
    except ConfigError:
        return {"model": None, "provider": None}
    provider = "local (offline)" if model == LOCAL_MODEL else (
        model.split("/", 1)[0] if "/" in model else "openai")
    return {"model": model, "provider": provider}


def _approvals_file(config: Config) -> Any:
    from passepartout.security.approvals.home import approvals_file

    return approvals_file(config.memex_dir, config.extra.get("PASSEPARTOUT_APPROVALS_FILE"))


def _presets_file(config: Config) -> Any:
    from passepartout.events.presets import presets_path

    return presets_path(config)


def _run_safely(work: Callable[[Agent | None], None], agent: Agent | None) -> None:
    try:
        work(agent)
    except Exception:  # one caller's failure must not stop the others' queued work
        log.exception("queued work failed")


# -- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """One entry of the table: the request it answers (see :mod:`passepartout.protocol`)
    and what it runs."""

    request: type[protocol.Request[Any]]
    run: Callable[[Bridge, Peer, Any], Any]  # (bridge, peer, the request) -> the reply
    slow: bool = False

    @property
    def name(self) -> str:
        return self.request.NAME

    @property
    def params(self) -> tuple[tuple[str, str], ...]:
        return self.request.params()

    def check(self, args: Any) -> protocol.Request[Any]:
        """The request of these arguments (a ``bad-arguments`` refusal when they do not
        fit it)."""
        request = protocol.decode_request(self.name, args)
        assert isinstance(request, self.request)
        return request


def _optional_string(fields: dict[str, Any], key: str) -> str | None:
    value = fields.get(key)
    if value is not None and not isinstance(value, str):
        raise Refusal("bad-arguments", f":{key} must be a string or nil")
    return None if value is None else str(value)


# -- the methods ------------------------------------------------------------------------


def _ping(bridge: Bridge, peer: Peer, request: protocol.Ping) -> Symbol:
    return Symbol("pong")


def _echo(bridge: Bridge, peer: Peer, request: protocol.Echo) -> Any:
    return request.value


def _chat_send(bridge: Bridge, peer: Peer, request: protocol.ChatSend) -> str:
    session, turn, text = request.session, request.turn, request.text
    context = request.context
    if not session or not turn:
        raise Refusal("bad-arguments", "chat-send: session-id and turn-id must not be empty")
    meta = {k: v for k, v in context.items() if k not in _RESERVED_META}
    from passepartout.server import attachments

    try:  # a preset's malformed field is refused here, before the turn starts
        items = attachments.read_items(meta.pop("attachments", None))
        turn_context = TurnContext.from_meta({**meta, "origin": Keyword("chat")})
        if turn_context.reflex:
            raise ProtocolError(":tier must be cognition or reasoning (a chat asks a model)")
        if turn_context.workspace is not None:  # the project the turn came from
            turn_context = dataclasses.replace(
                turn_context, workspace=str(workspace.checked(turn_context.workspace)))
    except ProtocolError as err:
        raise Refusal("bad-arguments", f"chat-send: {err.message}") from None
    # The turn's record carries its sender: its events go to this client.
    turn_context = dataclasses.replace(turn_context, state=bridge.channel.sent_by(session, peer))

    def submit(agent: Agent | None) -> None:
        if agent is None:
            emit(peer, protocol.TurnError(session, turn, "boot-error", bridge.boot_error or ""))
            emit(peer, protocol.Done(session, turn))
            return
        if items:  # read and filtered here: the person's parts, never Elisp's say-so
            try:
                parts = attachments.resolve(items, agent.services.get("security"))
            except PassepartoutError as err:
                emit(peer, protocol.TurnError(session, turn, "refused", err.message))
                emit(peer, protocol.Done(session, turn))
                return
            attached = attachments.section_text(parts)
            context = dataclasses.replace(turn_context, attached=attached or None)
        else:
            context = turn_context
        if _leaves(peer):
            _audit_request(agent, peer, session, turn, text, meta)
        agent.submit(text, session_id=session, source=peer.face, turn_id=turn, context=context)

    bridge.when_ready(submit)
    return turn


def _audit_request(agent: Agent, peer: Peer, session: str, turn: str, text: str,
                   meta: dict[str, Any]) -> None:
    """A request of a client program (the OpenAI-compatible endpoint) in the audit, with
    the name the client gave; what its turn then does is audited by the gates as usual."""
    from passepartout.loop import Action

    audit = getattr(agent.services.get("security"), "audit", None)
    if audit is None:
        return
    client = str(meta.get("client") or "a client program")
    meta["client"] = client
    action = Action("chat", f"{peer.face}-request", {"client": client, "turn": turn},
                    text=text[:2000])
    signal = Signal(payload={"sensor": Keyword("user-input")},
                    turn=TurnContext(face=peer.face, session_id=session, turn_id=turn,
                                     client=client))
    try:
        audit.note("allow", peer.face, f"a request by {client}", action, signal)
    except OSError as err:
        log.warning("the audit could not note a request by %s: %s", client, err)


def _chat_cancel(bridge: Bridge, peer: Peer, request: protocol.ChatCancel) -> bool:
    session, turn = request.session, request.turn
    bridge.when_ready(lambda agent: agent.cancel(session, turn or None) if agent else None)
    return True


def _approval_answer(bridge: Bridge, peer: Peer, request: protocol.AnswerApproval) -> bool:
    if not bridge.channel.answer(request.approval_id, request.answer):
        raise Refusal("expired", f"no approval {request.approval_id} is waiting "
                                 "(it was answered, timed out or withdrawn)")
    return True


def _org_edit(bridge: Bridge, peer: Peer, request: protocol.OrgEdit) -> bool:
    payload = {**request.plist, "sensor": Keyword("org-edit")}
    # The edit's questions (a new or changed job to approve) go to the client that saved.
    session = f"org-edit-{id(peer):x}"
    bridge.channel.bind(session, peer)
    signal = Signal(payload=payload, turn=TurnContext(face=peer.face, session_id=session))

    def inject(agent: Agent | None) -> None:
        if agent is not None:
            agent.stimuli.inject(signal)

    bridge.when_ready(inject)
    return True


def _focus(bridge: Bridge, peer: Peer, request: protocol.SetFocus) -> bool:
    fields = request.plist
    outline = fields.get("outline") or []
    if not isinstance(outline, list) or not all(isinstance(h, str) for h in outline):
        raise Refusal("bad-arguments", ":outline must be a list of strings")
    body = _optional_string(fields, "body")
    bridge.focus.set(Focus(file=_optional_string(fields, "file"),
                           id=_optional_string(fields, "id"),
                           heading=_optional_string(fields, "heading"),
                           outline=tuple(outline),
                           body=body[:FOCUS_BODY_MAX] if body else None))
    return True


def _context(bridge: Bridge, peer: Peer, request: protocol.Context) -> str:
    """What the next chat turn's context holds about the person's place in org (the
    related notes, which depend on the prompt, are not known yet)."""
    from passepartout.context import Focus as ContextFocus
    from passepartout.context import peripheral_sections
    from passepartout.security.privacy import private_tag

    agent = bridge.wait_agent()
    focus = ContextFocus.from_service(bridge.focus)
    if focus is None:
        return "No heading is in focus: the next turn carries no org context."
    from passepartout.security.outbound import outbound

    sections = peripheral_sections(agent.services.memory, focus, "", related=0,
                                   private_tag=private_tag(agent.services))
    try:  # as a remote model gets it
        return outbound("\n\n".join(s.text for s in sections)) or "No org context."
    except PassepartoutError as err:
        raise Refusal(err.kind, err.message) from None


def _attachments_preview(bridge: Bridge, peer: Peer,
                         request: protocol.PreviewAttachments) -> str:
    """What the given parts would add to a turn, read and filtered as a turn reads them."""
    from passepartout.server import attachments

    try:
        parts = attachments.resolve(attachments.read_items(request.attachments),
                                    bridge.wait_agent().services.get("security"))
    except PassepartoutError as err:
        raise Refusal(err.kind, err.message) from None
    if not parts:
        return "Nothing is attached."
    from passepartout.security.outbound import outbound

    # The same exit as the request: what is shown is what a remote model gets.
    try:
        return outbound(attachments.section_text(parts))
    except PassepartoutError as err:
        raise Refusal(err.kind, err.message) from None


def _rewrite_check(bridge: Bridge, peer: Peer, request: protocol.RewriteCheck) -> dict[str, Any]:
    """The gates' verdict on a rewrite the person accepted (passepartout.server.rewrite)."""
    from passepartout.server import rewrite

    try:
        proposal = rewrite.Rewrite.from_fields(request.plist)
    except ProtocolError as err:
        raise Refusal("bad-arguments", err.message) from None
    return rewrite.check(bridge.wait_agent(), proposal, peer.face)


def _usage(bridge: Bridge, peer: Peer, request: protocol.Usage) -> dict[str, Any]:
    """Tokens and cost of a session and of today, from the ledger."""
    llm = bridge.wait_agent().services.llm
    ledger = getattr(llm, "ledger", None)
    if ledger is None:
        from passepartout.llm.ledger import Ledger

        ledger = Ledger.in_home(bridge.config.home)
    return ledger.usage(request.session or None)


def _models(bridge: Bridge, peer: Peer, request: protocol.Models) -> dict[str, Any]:
    """The models the configuration names, for Emacs's picker: the default, each tier's,
    the fallbacks and the local one, then those of an Ollama or llama.cpp server on
    this machine (``servers``); ``all`` lists them once each, default first."""
    from passepartout.errors import ConfigError
    from passepartout.llm.localserver import detect, offered
    from passepartout.llm.models import LOCAL_MODEL, default_model

    config = bridge.config
    try:
        default: str | None = default_model(config)
    except ConfigError:
        default = None
    fallbacks = list(config.fallback_models)
    tiers = {"cognition": config.model_cognition or default,
             "reasoning": config.model_reasoning or default}
    servers = offered(detect())
    every = [default, tiers["cognition"], tiers["reasoning"], *fallbacks, LOCAL_MODEL, *servers]
    return {"default": default, "cognition": tiers["cognition"],
            "reasoning": tiers["reasoning"], "fallbacks": fallbacks or None,
            "local": LOCAL_MODEL, "servers": servers or None,
            "all": list(dict.fromkeys(m for m in every if m))}


def _status(bridge: Bridge, peer: Peer, request: protocol.Status) -> dict[str, Any]:
    return bridge.status()


def _jobs(bridge: Bridge, peer: Peer, request: protocol.Jobs) -> Any:
    orchestrator = bridge.wait_agent().services.orchestrator
    return list(orchestrator.jobs()) if orchestrator is not None else None


def _job_problems(bridge: Bridge, peer: Peer, request: protocol.JobProblems) -> Any:
    orchestrator = bridge.wait_agent().services.orchestrator
    return orchestrator.job_problems() or None if orchestrator is not None else None


def _held_jobs(bridge: Bridge, peer: Peer, request: protocol.HeldJobs) -> Any:
    orchestrator = bridge.wait_agent().services.orchestrator
    return orchestrator.held_jobs() or None if orchestrator is not None else None


def _job_answer(bridge: Bridge, node_id: str, allow: bool,
                digest: str | None = None) -> dict[str, Any]:
    orchestrator = bridge.wait_agent().services.orchestrator
    if orchestrator is None:
        raise Refusal("unavailable", "the events skill is not loaded: no jobs run")
    try:
        held = orchestrator.allow(node_id, digest) if allow else orchestrator.deny(node_id)
    except ValueError as err:
        raise Refusal("bad-arguments", str(err)) from None
    return {"id": held.node.id, "what": held.what}


def _job_allow(bridge: Bridge, peer: Peer, request: protocol.JobAllow) -> dict[str, Any]:
    """The person approves a held heading (only if its content hash is still ``digest``,
    what they were shown)."""
    return _job_answer(bridge, request.node_id, True, request.digest or None)


def _job_deny(bridge: Bridge, peer: Peer, request: protocol.JobDeny) -> dict[str, Any]:
    return _job_answer(bridge, request.node_id, False)


def _skills_reload(bridge: Bridge, peer: Peer, request: protocol.ReloadSkill) -> dict[str, Any]:
    agent = bridge.wait_agent()
    entry = agent.loader.reload(request.name)
    agent.check_health()
    return {"name": entry.name, "status": str(entry.status), "error": entry.error}


def _session_history(bridge: Bridge, peer: Peer, request: protocol.SessionHistory) -> Any:
    sessions = bridge.wait_agent().services.sessions
    return sessions.history(request.session) if sessions is not None else None


def _sessions(bridge: Bridge, peer: Peer, request: protocol.Sessions) -> Any:
    from passepartout.views import sessions

    return sessions(bridge.config.home) or None


def _memex(bridge: Bridge, peer: Peer, request: protocol.Memex) -> str:
    """One request of an MCP client of ``passepartout mcp`` (see passepartout.mcp.memex)."""
    face = bridge.wait_agent().services.get("mcp-memex")
    if face is None:
        raise Refusal("unavailable", "the mcp skill is not loaded")
    try:
        return str(face.handle(request.client, request.operation, request.arguments))
    except PassepartoutError as err:
        raise Refusal(err.kind, err.message) from None


def _mcp_servers(bridge: Bridge, peer: Peer, request: protocol.McpServers) -> Any:
    """A status line for each MCP server of mcp.json (the mcp skill's)."""
    service = bridge.wait_agent().services.get("mcp")
    return list(service.lines()) or None if service is not None else None


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(protocol.Ping, _ping),
        Method(protocol.Echo, _echo),
        Method(protocol.ChatSend, _chat_send),
        Method(protocol.ChatCancel, _chat_cancel),
        Method(protocol.AnswerApproval, _approval_answer),
        Method(protocol.OrgEdit, _org_edit),
        Method(protocol.SetFocus, _focus),
        Method(protocol.Status, _status),
        Method(protocol.Models, _models),
        Method(protocol.Jobs, _jobs, slow=True),
        Method(protocol.JobProblems, _job_problems, slow=True),
        Method(protocol.HeldJobs, _held_jobs, slow=True),
        Method(protocol.JobAllow, _job_allow, slow=True),
        Method(protocol.JobDeny, _job_deny, slow=True),
        Method(protocol.ReloadSkill, _skills_reload, slow=True),
        Method(protocol.SessionHistory, _session_history, slow=True),
        Method(protocol.Sessions, _sessions, slow=True),
        Method(protocol.Context, _context, slow=True),
        Method(protocol.Usage, _usage, slow=True),
        Method(protocol.RewriteCheck, _rewrite_check, slow=True),
        Method(protocol.PreviewAttachments, _attachments_preview, slow=True),
        Method(protocol.Memex, _memex, slow=True),
        Method(protocol.McpServers, _mcp_servers, slow=True),
    )
}
