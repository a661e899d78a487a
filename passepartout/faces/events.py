"""The events a face of the daemon receives: one small frozen dataclass per callback
of the wire contract (the ``ON_*`` names of :mod:`passepartout.server.peer`), and
:func:`parse_event`, which makes one of a callback's name and arguments."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.server.peer import (
    ON_APPROVAL,
    ON_CHUNK,
    ON_DONE,
    ON_ERROR,
    ON_NOTIFY,
    ON_ORG_EDIT,
    ON_STATUS,
    ON_TOOL,
)
from passepartout.wire.client import as_dict

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Chunk:
    """A piece of the reply's text, in order."""

    session: str
    turn: str
    text: str


@dataclass(frozen=True)
class ToolEvent:
    """A tool call proposed (``tool``), its result (``tool-result``) or a refusal
    (``denied``, with ``reason``)."""

    session: str
    turn: str
    event: str
    name: str
    args: dict[str, Any] | None = None
    ok: bool | None = None
    output: str | None = None
    reason: str | None = None
    call_id: str | None = None


@dataclass(frozen=True)
class ApprovalAsked:
    """The gates ask the person; answer with :meth:`Face.answer` and ``approval_id``.
    ``turn`` is None for an approval no chat turn of this face asked."""

    approval_id: str
    session: str | None
    turn: str | None
    description: str
    info: dict[str, Any]

    @property
    def tool(self) -> str | None:
        value = self.info.get("tool")
        return str(value) if value else None


@dataclass(frozen=True)
class TurnError:
    session: str
    turn: str
    kind: str
    message: str


@dataclass(frozen=True)
class Done:
    """The turn is over (its last event)."""

    session: str
    turn: str
    cancelled: bool = False


@dataclass(frozen=True)
class Notice:
    """A notification for every attached client (a cron result, a warning)."""

    level: str
    text: str


@dataclass(frozen=True)
class StatusChanged:
    info: dict[str, Any]


@dataclass(frozen=True)
class OrgEdited:
    """An org tool edited a file (Emacs refreshes a buffer visiting it)."""

    args: tuple[Any, ...]


@dataclass(frozen=True)
class Disconnected:
    """The connection is gone (the daemon stopped, or the face was closed)."""

    reason: str


Event = (Chunk | ToolEvent | ApprovalAsked | TurnError | Done | Notice | StatusChanged
         | OrgEdited | Disconnected)
Listener = Callable[[Event], None]


def parse_event(method: str, args: list[Any]) -> Event | None:
    """The typed event of one callback; None for a callback this face does not know."""
    try:
        return _parse(method, list(args) + [None] * 5)
    except (ProtocolError, TypeError, ValueError, IndexError) as err:
        log.warning("callback %s with unexpected arguments dropped: %s", method, err)
        return None


def _parse(method: str, a: list[Any]) -> Event | None:
    if method == ON_CHUNK:
        return Chunk(str(a[0]), str(a[1]), str(a[2] or ""))
    if method == ON_TOOL:
        info = as_dict(a[2])
        output = info.get("output")
        return ToolEvent(str(a[0]), str(a[1]), str(info.get("event") or "tool"),
                         str(info.get("name") or ""), _plist(info.get("args")),
                         bool(info["ok"]) if "ok" in info else None,
                         None if output is None else str(output),
                         None if info.get("reason") is None else str(info["reason"]),
                         None if info.get("call-id") is None else str(info["call-id"]))
    if method == ON_APPROVAL:
        info = _plist(a[4]) or {}
        if "args" in info:
            info["args"] = _plist(info["args"]) or {}
        return ApprovalAsked(str(a[0]), _opt(a[1]), _opt(a[2]), str(a[3] or ""), info)
    if method == ON_ERROR:
        return TurnError(str(a[0]), str(a[1]), str(a[2] or "error"), str(a[3] or ""))
    if method == ON_DONE:
        return Done(str(a[0]), str(a[1]), bool(as_dict(a[2]).get("cancelled")))
    if method == ON_NOTIFY:
        return Notice(str(a[0] or "info"), str(a[1] or ""))
    if method == ON_STATUS:
        return StatusChanged(as_dict(a[0]))
    if method == ON_ORG_EDIT:
        return OrgEdited(tuple(x for x in a if x is not None))
    return None


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _plist(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    return as_dict(value) if isinstance(value, list) else None
