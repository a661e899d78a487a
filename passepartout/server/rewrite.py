"""A rewrite the person accepted in Emacs, judged by the gates before Emacs applies it.

The model proposed a replacement for a region; the person saw it as a diff and
accepted it (perhaps edited).  Before the buffer changes, the change goes back to the
server as the proposal it amounts to: for a buffer visiting a file, ``write-file`` of
the file's new text (what saving the buffer writes), for any other buffer a reply.
Every gate sees it as it sees any proposal, and the verdict is audited.  A deny (a
protected place such as ``policy.toml`` or a shell start-up file, a policy rule, an
unknown secret) refuses the change; an ask is answered by the accept itself (the
person saw the exact change).  A region holding ``@personal`` text is refused: the
model saw it withheld, so its rewrite would drop what it never saw; Emacs asks that
much first (``:probe t``), so such a region is refused before anything is sent.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.loop.actions import Action
from passepartout.org.private import MARKER
from passepartout.server.attachments import TEXT_MAX, private_lines
from passepartout.signals import Keyword, Signal
from passepartout.turn import TurnContext

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rewrite:
    """The region ``start``..``end`` of ``before`` (a buffer's whole text) replaced by
    ``new``; ``file`` is the file the buffer visits, if any."""

    buffer: str
    before: str
    start: int
    end: int
    new: str
    file: str | None = None
    probe: bool = False
    """Only ask whether the region may be rewritten at all, before anything is sent."""

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Rewrite:
        def text(key: str, optional: bool = False) -> str | None:
            value = fields.get(key)
            if optional and value in (None, []):
                return None
            if not isinstance(value, str):
                raise ProtocolError(f"rewrite-check: :{key} must be a string")
            if len(value) > TEXT_MAX:
                raise ProtocolError(f"rewrite-check: :{key} is over {TEXT_MAX} characters")
            return value

        def offset(key: str) -> int:
            value = fields.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProtocolError(f"rewrite-check: :{key} must be a character offset")
            return value

        before = text("before") or ""
        start, end = offset("start"), offset("end")
        if not start <= end <= len(before):
            raise ProtocolError("rewrite-check: the region is not inside the buffer's text")
        return cls(text("buffer") or "", before, start, end, text("new") or "",
                   text("file", optional=True), fields.get("probe") is True)

    def after(self) -> str:
        return self.before[:self.start] + self.new + self.before[self.end:]

    def action(self) -> Action:
        call = "rewrite-" + uuid.uuid4().hex[:12]
        if self.file:
            return Action("tool", "write-file", {"path": self.file, "content": self.after()},
                          call_id=call)
        return Action("chat", "reply", text=self.new, call_id=call)


def check(agent: Any, rewrite: Rewrite, face: str) -> dict[str, Any]:
    """The gates' verdict on ``rewrite``, which the client of ``face`` sent: ``allowed``
    and the ``reason``."""
    sec = agent.services.get("security")
    tag = getattr(sec, "private_tag", None)
    if sec is None or tag is None:
        return {"allowed": False, "reason": "the security layer is not loaded"}
    action = rewrite.action()
    signal = Signal(payload={"sensor": Keyword("rewrite")},
                    turn=TurnContext(face=face, origin="rewrite"))
    first = rewrite.before.count("\n", 0, rewrite.start)
    last = rewrite.before.count("\n", 0, rewrite.end)
    if rewrite.end > rewrite.start and rewrite.before[rewrite.end - 1] == "\n":
        last -= 1  # the region ends at a line's start: that line is not in it
    if any(private_lines(rewrite.before, tag)[first:last + 1]):
        why = (f"the region holds {tag} text, which the model never saw; "
               "rewriting it would lose that text")
        sec.audit.note("deny", "rewrite", why, action, signal)
        return {"allowed": False, "reason": why}
    if rewrite.probe:  # asked before the model sees the region: nothing to judge yet
        return {"allowed": True, "reason": "no private text in the region"}
    if MARKER in rewrite.new and MARKER not in rewrite.before[rewrite.start:rewrite.end]:
        why = f"the proposal holds {MARKER}, where the model saw private text"
        sec.audit.note("deny", "rewrite", why, action, signal)
        return {"allowed": False, "reason": why}
    result = agent.loop.gates.evaluate(action, signal)
    reasons = "; ".join(result.reasons) or result.decision
    if result.decision == "deny":
        return {"allowed": False, "reason": reasons}
    if result.decision == "ask":
        sec.audit.note("allow", "person", "accepted in Emacs as a diff of the region",
                       action, signal)
    return {"allowed": True, "reason": reasons}
