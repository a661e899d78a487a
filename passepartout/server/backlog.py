"""What happened while no client was attached, shown to the next one that attaches.

The daemon runs cron jobs and hooks whether or not a face is attached; their notices
(the same ones an attached Emacs shows at once) are kept here, the last
:data:`BACKLOG_SIZE` of them, and replayed in order to the first client whose ``hello``
asks for them, followed by one summary line that also counts the Flight Plans waiting
in the approvals file.

Why notices kept in memory rather than a summary read from ``events.org``: the backlog
holds exactly what no client has seen, worded as it would have been shown, and costs
no parsing of a file that grows for ever; ``events.org`` still has every entry (older
ones, and those of a daemon that was restarted meanwhile).  Flight Plans are read from
their file at each attach instead: they are state that outlives any daemon, and they
wait whether or not a client saw them being written.
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

BACKLOG_SIZE = 50


@dataclass(frozen=True)
class Notice:
    """One notice no client saw: when, how loud, what."""

    at: dt.datetime
    level: str
    text: str


@dataclass
class Backlog:
    """A bounded queue of notices; ``dropped`` counts those that fell off its front."""

    size: int = BACKLOG_SIZE
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now().astimezone()
    notices: collections.deque[Notice] = field(default_factory=collections.deque)
    dropped: int = 0

    def record(self, level: str, text: str) -> None:
        self.notices.append(Notice(self.clock(), level, text))
        while len(self.notices) > self.size:
            self.notices.popleft()
            self.dropped += 1

    def take(self) -> tuple[list[Notice], int]:
        """The notices kept and the count dropped; the backlog is empty afterwards."""
        taken, dropped = list(self.notices), self.dropped
        self.notices.clear()
        self.dropped = 0
        return taken, dropped


def waiting_flight_plans(approvals_file: Path) -> int:
    """How many Flight Plans of the approvals file wait for the person's answer."""
    from passepartout.security.approvals import PENDING, parse

    try:
        text = approvals_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    except (OSError, UnicodeDecodeError) as err:
        log.warning("cannot read %s: %s", approvals_file, err)
        return 0
    return sum(1 for plan in parse(text).plans if plan.state == PENDING)


def replay(notices: list[Notice], dropped: int, plans: int,
           approvals_file: Path) -> list[tuple[str, str]]:
    """The (level, text) notices to send a client that attaches: each kept notice,
    marked with its time, then one summary line (none when there is nothing to say)."""
    lines = [(n.level, f"[{n.at:%H:%M} while no client was attached] {n.text}")
             for n in notices]
    parts = []
    if notices or dropped:
        shown = f"{len(notices)} notice{'s' if len(notices) != 1 else ''} (replayed"
        parts.append(shown + (f"; {dropped} earlier ones are only in events.org)" if dropped
                              else "; events.org has them too)"))
    if plans:
        parts.append(f"{plans} Flight Plan{'s' if plans != 1 else ''} "
                     f"wait{'s' if plans == 1 else ''} in {approvals_file}")
    if parts:
        lines.append(("info", "While no client was attached: " + "; ".join(parts)))
    return lines
