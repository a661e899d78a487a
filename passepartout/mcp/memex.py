"""The memex as other agents see it through ``passepartout mcp``: the face's work inside
the agent (the daemon), behind one bridge method.

Reads: ``search`` (the memory store, by words and by meaning), ``read`` (a node by
``id:``, a file's outline, or one heading's subtree), ``agenda`` (SCHEDULED and
DEADLINE lines, and the ``:CRON:`` jobs due that day).  Nothing of an ``@personal``
subtree is returned: private nodes are left out, files are redacted as the file tools
redact them, and every answer passes the same boundary as a model request (the vault's
mask and the private index's filter).  Every read is written to ``audit.org`` with the
client's name.

The face serves the memex only: every file a client names (``read``'s target,
``set-todo``'s file) goes through one resolver (:meth:`MemexFace.org_file`): a relative
path is taken in the memex, symlinks are resolved, then the real place must lie in the
memex and pass the attachment boundary
(:func:`passepartout.server.attachments.place_refusal`), which refuses the agent's
own state, configuration, approvals and skills even where they lie inside the memex;
notes, nodes and agenda lines of those places are left out of searches too.

Writes: ``capture``, ``schedule`` and ``set-todo`` are proposals of the agent's own
tools (``org-capture``, ``schedule``, ``org-set-todo``) and pass every gate.  High
impact, they are asked of the person: in the face they have attached to the daemon
(Emacs, the terminal), else as a Flight Plan in the approvals file (the reply says
which, and the write is applied when it is approved).  The skill takes a memory
snapshot before any of them runs (:func:`snapshot_first`).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passepartout.errors import PassepartoutError, PipelineError
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnContext

log = logging.getLogger(__name__)

ORIGIN = "mcp"
CALL_PREFIX = "mcp-face-"
READS = ("search", "read", "agenda")
WRITES = {"capture": "org-capture", "schedule": "schedule", "set-todo": "org-set-todo"}
MAX_RESULTS = 20
MAX_TEXT = 40_000
MEMORY_WAIT = 120.0  # a cold daemon opens memory and imports the memex's text meanwhile


class FaceError(PassepartoutError):
    """A request the face answers with an error (a bad argument, a refusal)."""

    kind = "memex-error"


def client_name(raw: Any) -> str:
    """The client's name as the audit shows it (one short line)."""
    from passepartout.org.escape import org_line

    return org_line(str(raw or "an MCP client"), 60) or "an MCP client"


class MemexFace:
    """What ``passepartout mcp`` asks of the agent, one method per operation."""

    def __init__(self, agent: Any) -> None:
        from passepartout.security.install import install

        self.agent = agent
        self.sec = install(agent)

    # -- the one entry ------------------------------------------------------------------

    def handle(self, client: str, operation: str, args: dict[str, Any]) -> str:
        client = client_name(client)
        if operation in READS:
            text = self._read(client, operation, args)
            return self._boundary(text)
        if operation in WRITES:
            return self._boundary(self._write(client, operation, args))
        raise FaceError(f"unknown operation {operation!r}")

    def _signal(self, client: str) -> Signal:
        return Signal(payload={"sensor": Keyword("mcp-request")},
                      turn=TurnContext(face=ORIGIN, origin=ORIGIN, session_id=f"mcp:{client}",
                                       client=client))

    def _boundary(self, text: str) -> str:
        """The same exit as a model request: secrets masked, private text withheld."""
        from passepartout.security.privacy.index import withhold_value

        masked = self.sec.vault.mask(text[:MAX_TEXT])
        return str(withhold_value(masked))

    @property
    def _tag(self) -> str:
        from passepartout.security.privacy import private_tag

        return private_tag(self.agent.services)

    @property
    def _memex(self) -> Path:
        return Path(self.agent.config.memex_dir).expanduser()

    # -- reads --------------------------------------------------------------------------

    def _read(self, client: str, operation: str, args: dict[str, Any]) -> str:
        action = Action("tool", f"memex-{operation}", dict(args))
        try:
            if operation == "search":
                text = self.search(str(args.get("query") or ""), _limit(args.get("limit")))
            elif operation == "read":
                text = self.read(str(args.get("target") or ""))
            else:
                text = self.agenda(str(args.get("day") or "today"))
        except (FaceError, PipelineError, ValueError) as err:
            message = getattr(err, "message", None) or str(err)
            self.sec.audit.note("deny", "mcp", f"read by {client} failed: {message}", action,
                                self._signal(client))
            raise FaceError(message) from None
        self.sec.audit.note("allow", "mcp", f"read by {client}", action, self._signal(client))
        return text

    def search(self, query: str, limit: int) -> str:
        from passepartout.security.privacy import node_is_private

        if not query.strip():
            raise FaceError("search needs a query")
        store = self._memory()
        tag = self._tag
        hits = [h for h in store.search(query, limit * 2)
                if self._served(h.file) and not node_is_private(store, h.id, tag)][:limit]
        if not hits:
            return "no matching notes"
        return "\n".join(f"- {h.title} (id:{h.id}, {h.file or 'no file'}, {h.method})"
                         + (f"\n  {h.snippet}" if h.snippet else "") for h in hits)

    def _memory(self) -> Any:
        """The memory store once it is open and the memex's text imported: a cold
        daemon's first request waits for them (bounded), so that a client is never
        told there is nothing while memory is still being filled."""
        skill = self.agent.services.get("memory-skill")
        imported = getattr(skill, "imported", None)
        if imported is not None and not imported.wait(MEMORY_WAIT):
            raise FaceError(f"memory is still importing the memex after {MEMORY_WAIT:g} s; "
                            "try again shortly")
        store = self.agent.services.get("memory")
        if store is None:
            raise FaceError("memory is not available in this agent"
                            + (f": {skill.error}" if getattr(skill, "error", None) else ""))
        return store

    def read(self, target: str) -> str:
        """``id:X`` (a memory node), ``FILE`` (its outline) or ``FILE::HEADING`` (one
        subtree, the heading named by ``:ID:`` or outline path)."""
        target = target.strip()
        if not target:
            raise FaceError("read needs a target: id:ID, a file, or FILE::Heading/Path")
        if target.startswith("id:") and "::" not in target:
            return self._node(target[3:])
        file, _, heading = target.partition("::")
        path = self.org_file(file)
        from passepartout.org.outline import OrgEditError, Outline
        from passepartout.security.privacy import redact_file_text

        try:
            raw = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            raise FaceError(f"{file}: cannot be read ({err.strerror})") from None
        text = redact_file_text(path, raw, self._tag)
        outline = Outline(text)
        if not heading:
            rel = path.relative_to(self._memex.resolve())
            lines = [f"{'*' * h.level} {h.keyword + ' ' if h.keyword else ''}{h.title}"
                     for h in outline.headings]
            return f"{rel}\n" + ("\n".join(lines) if lines else "(no headings)")
        try:
            found = outline.find(heading)
        except OrgEditError as err:
            raise FaceError(str(err)) from None
        return "".join(outline.lines[found.line: outline.subtree_end(found)])

    def _node(self, node_id: str) -> str:
        from passepartout.security.privacy import node_is_private

        store = self._memory()
        node = store.get(node_id)
        if node is None or not self._served(getattr(node, "file", None)) or \
                node_is_private(store, node_id, self._tag):
            raise FaceError(f"no node id:{node_id}")
        body = str(getattr(node, "body", "") or "")
        children = [c for c in store.children(node_id)
                    if not node_is_private(store, c.id, self._tag)] if hasattr(
                        store, "children") else []
        kids = "".join(f"\n- {c.title} (id:{c.id})" for c in children
                       if self._served(getattr(c, "file", None)))
        return f"{node.title}\n{body}".rstrip() + kids

    def org_file(self, raw: str) -> Path:
        """The real org file a client names, in the memex (a relative path is taken
        there; symlinks resolved, then judged): nothing outside it, nothing of the
        agent's own inside it."""
        from passepartout.server.attachments import place_refusal

        root = self._memex.resolve()
        if not isinstance(raw, str) or not raw.strip():
            raise FaceError("a file of the memex is needed")
        path, reason = place_refusal(raw, self.sec, base=root)
        if path is None or not path.is_relative_to(root):
            raise FaceError(f"{raw}: not a file of the memex")
        if reason is not None:
            raise FaceError(f"{raw}: refused: {reason}")
        if path.suffix not in (".org", ".org_archive") or not path.is_file():
            raise FaceError(f"{raw}: no such org file in the memex")
        return path

    def _served(self, file: Any) -> bool:
        """Whether a note of ``file`` (relative to the memex, as memory keeps it) may be
        shown to a client: none of the agent's own places."""
        from passepartout.server.attachments import own_place

        if not file:
            return True
        spelled = os.path.join(self._memex, os.path.expanduser(str(file)))
        try:
            places = {Path(os.path.abspath(spelled)), Path(os.path.realpath(spelled))}
        except (OSError, ValueError):
            return False
        return all(own_place(place, self.sec) is None for place in places)

    def agenda(self, day: str) -> str:
        from passepartout.events.agenda import agenda_text

        text = agenda_text(self._memex, day, tag=self._tag, skip=lambda p: not self._served(p))
        jobs = self._due_jobs(day)
        return text + ("\n\nCron jobs due:\n" + "\n".join(jobs) if jobs else "")

    def _due_jobs(self, day: str) -> list[str]:
        orchestrator = self.agent.services.get("orchestrator")
        if orchestrator is None:
            return []
        key = day.strip().lower()
        today = dt.date.today()
        first = today + dt.timedelta(days=1) if key == "tomorrow" else (
            dt.date.fromisoformat(key) if key not in ("", "today", "week", "this week")
            else today)
        last = first + dt.timedelta(days=6) if key in ("week", "this week") else first
        lines = []
        for job in orchestrator.jobs():
            nxt = job.get("next-run")
            if not nxt or not first <= dt.datetime.fromisoformat(nxt).date() <= last:
                continue
            if orchestrator.is_private(str(job.get("id")), self._tag) or \
                    not self._served(job.get("file")):
                continue
            file = Path(str(job.get("file") or ""))
            shown = file.relative_to(self._memex) if file.is_relative_to(self._memex) else file
            lines.append(f"- {nxt[11:16]} {job.get('heading')} ({shown})")
        return lines

    # -- writes -------------------------------------------------------------------------

    def _write(self, client: str, operation: str, args: dict[str, Any]) -> str:
        tool_name = WRITES[operation]
        tool = self.agent.tool(tool_name)
        if tool is None:
            raise FaceError(f"{operation} is not available: the {tool_name} tool is not loaded")
        if operation == "set-todo":  # the one resolver: in the memex, nothing of ours
            args = {**args, "file": str(self.org_file(str(args.get("file") or "")))}
        try:
            checked = tool.validate(args)
        except PipelineError as err:
            raise FaceError(err.message) from None
        given = {k: v for k, v in checked.items() if k in args}
        self._dry_run(tool_name, checked)
        action = Action("tool", tool_name, given, call_id=CALL_PREFIX + uuid.uuid4().hex[:12])
        signal = self._signal(client)
        result = self.agent.loop.gates.evaluate(action, signal)
        decision, why = result.decision, result.reasons
        if decision == "deny":
            return f"refused: {'; '.join(why) or decision}"
        if decision == "allow" and not self._granted(action):
            # a tool the model may call unasked (schedule) is still the person's to
            # allow when another agent asks for it; a rule or grant of theirs counts
            decision, why = "ask", (*why, f"{tool_name} was asked for by {client} over MCP")
        if decision == "ask":
            answer = self._ask_on_face(action, why, client)
            if answer is None:
                return self._pending(action, why, signal)
            if not answer:
                return f"not approved: the person declined {action.describe()} in their face"
        return self._run(action, signal)

    def _granted(self, action: Action) -> bool:
        """Whether a rule of policy.toml or a grant of the person allows this action."""
        match = self.sec.policy().decide(self.sec.examine(action)[0])
        return match is not None and match.decision == "allow"

    def _dry_run(self, tool_name: str, args: dict[str, Any]) -> None:
        """An org edit that cannot apply (no such file or heading) is an error now, not a
        Flight Plan; one that touches a private subtree is not the client's to make."""
        from passepartout.org.outline import OrgEditError

        exports = self.agent.registry.exports("orgtools")
        service = getattr(exports, "orgtools_SERVICE", None) if exports is not None else None
        if service is None or not tool_name.startswith("org-"):
            return
        try:
            plan = service.plan(tool_name, args)
        except (OrgEditError, PipelineError, KeyError, ValueError) as err:
            raise FaceError(getattr(err, "message", None) or str(err)) from None
        if plan.private:
            raise FaceError("refused: that heading is not available over MCP")

    def _ask_on_face(self, action: Action, reasons: tuple[str, ...],
                     client: str) -> bool | None:
        """The person's answer in the face they attached to the agent (the last one to
        attach); None when none is attached."""
        peer = self.agent.services.peer
        faces = getattr(peer, "faces", None)  # the attached clients a person looks at
        peers = [p for p in faces() if not p.closed] if callable(faces) else []
        if peer is None or not peers or self.agent.loop.approver is None:
            return None
        session = f"mcp:{client}"
        peer.bind(session, peers[-1])  # the question goes to that face
        request = ApprovalRequest(action, (f"asked by {client} over MCP", *reasons),
                                  self._signal(client))
        return self.agent.loop.approver(request) is True

    def _pending(self, action: Action, reasons: tuple[str, ...], signal: Signal) -> str:
        request = ApprovalRequest(action, reasons, signal)
        plan = self.sec.book.propose(request)
        why = f"waiting for approval in {self.sec.book.path} (Flight Plan {plan.id})"
        self.sec.audit.note("ask", "flightplan", why, action, signal)
        return (f"pending: {action.describe()} waits for the person's approval (Flight Plan "
                f"{plan.id} in their approvals file); it is applied once they approve it")

    def _run(self, action: Action, signal: Signal) -> str:
        # Through the loop: the snapshot first, and the output masked as every tool's.
        feedback = self.agent.loop.actuate(action, signal)
        results = feedback.payload.get("results") if feedback is not None else None
        if not results:
            return "done"
        first = results[0]
        output = str(first.get("output") or "done")
        return output if first.get("ok") else f"failed: {output}"


def snapshot_first(agent: Any) -> Callable[[Action, Signal], None]:
    """The loop's BEFORE_ACTION hook: a memory snapshot before each write a face asked
    for (its signal's origin is ``mcp``), whether it runs now or from a Flight Plan."""

    def before(action: Action, signal: Signal) -> None:
        if (action.target == "tool" and signal.turn.origin == ORIGIN
                and action.name in WRITES.values()):
            store = agent.services.memory
            if store is not None:
                try:
                    store.snapshot(f"before {action.name} from MCP")
                except Exception as err:  # no snapshot, no write
                    raise PipelineError(f"no memory snapshot could be taken: {err}") from None

    return before


def _limit(raw: Any) -> int:
    try:
        value = int(raw) if raw is not None else 8
    except (TypeError, ValueError):
        raise FaceError("limit must be a whole number") from None
    return max(1, min(MAX_RESULTS, value))
