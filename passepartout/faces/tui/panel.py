"""The side panel's facts, read from the daemon: the next cron jobs, the Flight Plans
waiting in the approvals file, and what the session and today cost."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passepartout.faces.face import Face
from passepartout.security.approvals import PENDING, parse

log = logging.getLogger(__name__)

JOBS_SHOWN = 5
PLANS_SHOWN = 5


@dataclass(frozen=True)
class Panel:
    jobs: tuple[str, ...] = ()
    plans: tuple[str, ...] = ()
    cost: str = ""
    model: str = ""


def read_panel(face: Face, session: str) -> Panel:
    """What the panel shows now (each call is one round trip to the daemon)."""
    status = face.status()
    jobs = face.jobs() if status.get("ready") else []
    due = sorted((j for j in jobs if j.get("next-run")), key=lambda j: str(j["next-run"]))
    return Panel(
        jobs=tuple(f"{j['next-run']}  {j.get('heading') or '?'}" for j in due[:JOBS_SHOWN]),
        plans=waiting_plans(status.get("approvals-file")),
        cost=_cost(face.usage(session)),
        model=str(status.get("model") or ""),
    )


def waiting_plans(path: Any) -> tuple[str, ...]:
    """The titles of the Flight Plans that wait for the person (read-only)."""
    if not path:
        return ()
    try:
        text = Path(str(path)).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as err:
        log.debug("approvals file unreadable: %s", err)
        return (f"(cannot read {path})",)
    waiting = [p for p in parse(text).plans if p.state == PENDING]
    shown = [f"{p.id}: {p.title}" for p in waiting[:PLANS_SHOWN]]
    if len(waiting) > PLANS_SHOWN:
        shown.append(f"... and {len(waiting) - PLANS_SHOWN} more")
    return tuple(shown)


def _cost(usage: dict[str, Any]) -> str:
    lines = []
    for label, key in (("session", "session"), ("today", "today")):
        part = usage.get(key)
        if isinstance(part, dict):
            tokens = int(part.get("tokens-in") or 0) + int(part.get("tokens-out") or 0)
            cost = float(part.get("cost") or 0.0)
            lines.append(f"{label}: {int(part.get('calls') or 0)} calls, {tokens} tokens, "
                         f"${cost:.4f}")
    return "\n".join(lines)
