"""The audit log: every gate verdict, as an org file a person can read.

One heading per decision under the state directory (``audit.org``), newest last, with
the deciding gate, every gate's verdict and reason, the action's hash and its exact
text.  Everything written is masked by the vault first.  The file rotates by size
(``audit.1.org`` ... ``audit.<keep>.org``).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from passepartout.loop.actions import Action, Verdict
from passepartout.loop.gates import GateResult
from passepartout.org.drawer import entry_properties
from passepartout.org.escape import drawer, org_json, org_line, src_block, timestamp
from passepartout.org.heading import heading_line
from passepartout.security import vault
from passepartout.signals import Signal
from passepartout.turn import TurnContext

log = logging.getLogger(__name__)

HEADER = "#+TITLE: Passepartout audit log\n#+STARTUP: overview\n\n"
MAX_ACTION_CHARS = 4_000
RECHECK_SECONDS = 1.0  # how stale the open file may be after a move or a delete


@dataclass(frozen=True)
class AuditEntry:
    """One decision as read back from the log."""

    decision: str
    gate: str
    title: str
    properties: dict[str, str]
    body: str


class AuditLog:
    """Appends decisions to ``path``; thread-safe; rotates past ``max_bytes``.

    The file stays open between entries: opening it for each one cost about a
    millisecond here (the whole loop ran 1,300 signals a second).  Whether ``path`` is
    still the open file (not moved, rotated or deleted by someone else) is checked
    before each refusal and at most a second after any other entry."""

    def __init__(
        self,
        path: Path,
        *,
        max_bytes: int = 1_000_000,
        keep: int = 5,
        mask: Callable[[str], str] = vault.mask,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.keep = keep
        self.mask = mask
        self._lock = threading.Lock()
        self._handle: BinaryIO | None = None
        self._size = 0  # of the open file
        self._checked = 0.0  # monotonic time the open file was last known to be ``path``

    # -- writing ------------------------------------------------------------------------

    def record(self, action: Action, signal: Signal, result: GateResult) -> None:
        """The gate pipeline's audit hook: one entry per evaluated action."""
        deciding = next((v for v in result.verdicts if v.decision == result.decision), None)
        self.note(
            result.decision,
            deciding.gate if deciding else "none",
            "; ".join(result.reasons) or "no gate objected",
            action,
            signal,
            verdicts=result.verdicts,
        )

    def note(
        self,
        decision: str,
        gate: str,
        reason: str,
        action: Action,
        signal: Signal | None = None,
        *,
        verdicts: Iterable[Verdict] = (),
    ) -> None:
        """Write one entry (also used for approvals given, refused, and flight plans)."""
        text = self.mask(action.canonical())
        if len(text) > MAX_ACTION_CHARS:
            text = text[:MAX_ACTION_CHARS] + f" ... [{len(text) - MAX_ACTION_CHARS} more chars]"
        else:
            text = org_json(json.loads(text), indent=1)
        turn = signal.turn if signal is not None else TurnContext()
        props = {
            "TIME": timestamp(),
            "DECISION": decision,
            "GATE": gate,
            "REASON": self.mask(reason),
            "HASH": action.digest(),
            "SOURCE": turn.face or "",
            "SESSION": turn.session_id or "",
            "ORIGIN": turn.origin or "",
            # the program that asked, as it named itself (an HTTP client of the endpoint)
            "CLIENT": org_line(turn.client or "", 80),
        }
        # Every piece goes through org.escape: a tool argument holding a line break of any
        # kind (U+2028 too) must not start a heading of its own in this file.
        lines = [heading_line(1, org_line(self.mask(action.describe())),
                              org_line(decision.upper(), 20)) + "\n"]
        lines.append(drawer({k: v for k, v in props.items() if v}))
        for v in verdicts:
            verdict = f"{v.gate} ({v.decision}): {self.mask(v.reason)}"
            lines.append(f"- {org_line(verdict, 300)}\n")
        lines.append(src_block(text))
        self._append("".join(lines), durable=decision != "allow")

    def _append(self, entry: str, *, durable: bool) -> None:
        data = entry.encode("utf-8")
        with self._lock:
            handle = self._file(recheck=durable)
            if self._size + len(data) > self.max_bytes:
                self._close()
                self._rotate()
                handle = self._file(recheck=False)
            handle.write(data)
            handle.flush()
            self._size += len(data)
            if durable:  # a refusal must survive a crash; an allow may be lost
                os.fsync(handle.fileno())

    def _file(self, *, recheck: bool) -> BinaryIO:
        """The open audit file, opened again when ``path`` is no longer it."""
        now = time.monotonic()
        if self._handle is not None and (recheck or now - self._checked > RECHECK_SECONDS):
            self._checked = now
            try:
                same = os.stat(self.path).st_ino == os.fstat(self._handle.fileno()).st_ino
            except OSError:
                same = False
            if not same:
                self._close()
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = open(self.path, "ab")  # noqa: SIM115 (kept open across entries)
            self._size = os.fstat(handle.fileno()).st_size
            if self._size == 0:
                handle.write(HEADER.encode("utf-8"))
                self._size = len(HEADER.encode("utf-8"))
            self._handle, self._checked = handle, now
        return self._handle

    def _close(self) -> None:
        if self._handle is not None:
            try:
                self._handle.close()
            except OSError as err:
                log.warning("closing the audit log %s: %s", self.path, err)
            self._handle = None

    def close(self) -> None:
        """Close the file (a later entry opens it again)."""
        with self._lock:
            self._close()

    def _rotate(self) -> None:
        stem, suffix = self.path.stem, self.path.suffix
        for i in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{stem}.{i}{suffix}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{stem}.{i + 1}{suffix}"))
        if self.keep > 0:
            os.replace(self.path, self.path.with_name(f"{stem}.1{suffix}"))
        else:
            self.path.unlink()

    # -- reading ------------------------------------------------------------------------

    def entries(self) -> list[AuditEntry]:
        """The entries of the current file, oldest first."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return parse_entries(text)


def parse_entries(text: str) -> list[AuditEntry]:
    entries: list[AuditEntry] = []
    for chunk in ("\n" + text).split("\n* ")[1:]:
        head, _, body = chunk.partition("\n")
        decision, _, title = head.partition(" ")
        _planning, props, _rest = entry_properties(body.splitlines())
        entries.append(AuditEntry(decision.lower(), props.get("GATE", ""), title, props, body))
    return entries
