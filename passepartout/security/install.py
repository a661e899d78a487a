"""Plugging the security layer into a running agent (called by ``skills/policy.py``).

:func:`install` builds the :class:`~passepartout.security.guard.Security` of the agent
once (a reload of the skill finds it in ``agent.services["security"]``) and attaches
it to the loop's hooks (:mod:`passepartout.loop.hooks`): the audit of every gate
decision, Flight Plans for approvals nobody can answer now and the audit of every
answer, masking of everything the loop shows and of tool results fed back to the
model; and the process-wide vault and log masking.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from passepartout.loop.events import Event, Notice, map_values
from passepartout.loop.hooks import (
    APPROVAL_ANSWERED,
    BACKGROUND_APPROVAL,
    GATE_AUDIT,
    SHOWN_EVENT,
    TOOL_FEEDBACK,
)
from passepartout.security import logs
from passepartout.security.approvals import ApprovalBook
from passepartout.security.approvals import home as approvals_home
from passepartout.security.approvals.flightplan import ApprovalRecords, FlightPlanRunner
from passepartout.security.audit import AuditLog
from passepartout.security.guard import Places, Security
from passepartout.security.privacy import DEFAULT_TAG
from passepartout.security.vault import Vault, set_vault
from passepartout.signals import Signal

log = logging.getLogger(__name__)

OWNER = "policy"  # the skill that installs the layer (its hooks are under its name)


def build(agent: Any) -> Security:
    """The security layer for ``agent``'s configuration (nothing wired yet)."""
    config = agent.config
    extra = dict(config.extra)
    vault = Vault.from_config_dir(config.config_dir, {**os.environ, **extra})
    home = Path(config.home)
    approvals, merged = approvals_home.settle(
        Path(config.memex_dir), home, extra.get("PASSEPARTOUT_APPROVALS_FILE")
    )
    # Never the directory the process started in: a turn names its own workspace
    # (passepartout/workspace.py); this is the one of turns that name none.
    workspace = Path(extra.get("PASSEPARTOUT_WORKSPACE") or Path.home()).expanduser()
    places = Places(
        home=home,
        config_dir=Path(config.config_dir),
        memex_dir=Path(config.memex_dir),
        skill_dirs=tuple(Path(d) for d in agent.loader.dirs),
        default_workspace=workspace,
        approvals_file=approvals,
    )
    max_bytes = int(extra.get("PASSEPARTOUT_AUDIT_MAX_BYTES") or 1_000_000)
    book = ApprovalBook(approvals, home / "flightplans.json", mask=vault.mask)
    if merged:
        book.trust.alarms.report(
            f"{merged} approvals of an earlier version merged into {approvals}",
            f"They were in {home / approvals_home.FILENAME}, kept beside it as "
            "approvals.org.merged-*; from now on the approvals live in one file.",
        )
    return Security(
        places=places,
        vault=vault,
        audit=AuditLog(home / "audit.org", max_bytes=max_bytes, mask=vault.mask),
        book=book,
        tool_lookup=agent.tool,
        private_tag=extra.get("PASSEPARTOUT_PRIVATE_TAG") or DEFAULT_TAG,
    )


def install(agent: Any) -> Security:
    """Build (once: a reload finds it) and attach the security layer to ``agent``'s
    hooks (again on each call: attaching replaces what this owner had attached)."""
    existing = agent.services.security
    sec = existing if isinstance(existing, Security) else build(agent)
    hooks = agent.hooks
    hooks.attach(GATE_AUDIT, sec.on_verdict, owner=OWNER)
    records = ApprovalRecords(book=sec.book, audit=sec.audit, clearances=sec.clearances,
                              emit=agent.loop.emit)
    hooks.attach(BACKGROUND_APPROVAL, records.flight_plan, owner=OWNER)
    hooks.attach(APPROVAL_ANSWERED, records.answered, owner=OWNER)

    def masked_event(event: Event) -> Event:
        return map_values(event, sec.vault.mask_value)

    def masked_feedback(feedback: Signal) -> Signal:
        return Signal(type=feedback.type, payload=sec.vault.mask_value(feedback.payload),
                      turn=feedback.turn, depth=feedback.depth)

    # Everything the loop shows the person is masked (streamed text, errors, refusals),
    # and a tool's output goes back to the model masked, whichever tool it was.
    hooks.attach(SHOWN_EVENT, masked_event, owner=OWNER)
    hooks.attach(TOOL_FEEDBACK, masked_feedback, owner=OWNER)
    if existing is sec:
        return sec
    set_vault(sec.vault)
    logs.install()
    agent.on_shutdown(sec.audit.close)
    agent.services.security = sec
    agent.services.vault = sec.vault
    log.info(
        "security: audit %s, approvals %s, %d secrets in the vault",
        sec.audit.path, sec.book.path, len(sec.vault.names()),
    )
    return sec


def flight_plan_runner(agent: Any, sec: Security) -> FlightPlanRunner:
    """The heartbeat's Flight Plan runner for ``agent``."""

    return FlightPlanRunner(
        book=sec.book,
        evaluate=agent.loop.gates.evaluate,
        actuate=agent.loop.actuate,  # its feedback masked, as every actuator's
        clearances=sec.clearances,
        audit=sec.audit,
        inject=agent.stimuli.inject,
        mask=sec.vault.mask,
        notify=lambda text: _notify_person(agent, text),
    )


def _notify_person(agent: Any, text: str) -> None:
    """A notice in the person's Emacs when it is connected (the log has it anyway)."""
    log.info("%s", text)
    agent.notify(Notice(text))
