"""Plugging the security layer into a running agent (called by ``skills/policy.py``).

:func:`install` builds the :class:`~passepartout.security.guard.Security` of the agent
once (a reload of the skill finds it in ``agent.services["security"]``) and wires:
the process-wide vault and log masking, the audit hook of the gate pipeline, the
approver (the person's channel or a Flight Plan), masking of everything the loop
emits and of tool results fed back to the model.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from passepartout.loop.events import Event, Notice, map_values
from passepartout.security.approvals import ApprovalBook
from passepartout.security.audit import AuditLog
from passepartout.security.flightplan import ApprovalRecords, FlightPlanRunner
from passepartout.security.guard import Places, Security, default_approvals_file
from passepartout.security.privacy import DEFAULT_TAG
from passepartout.security.vault import Vault, install_log_masking, set_vault
from passepartout.signals import Signal

log = logging.getLogger(__name__)

SERVICE = "security"


def build(agent: Any) -> Security:
    """The security layer for ``agent``'s configuration (nothing wired yet)."""
    config = agent.config
    extra = dict(config.extra)
    vault = Vault.from_config_dir(config.config_dir, {**os.environ, **extra})
    home = Path(config.home)
    approvals = default_approvals_file(
        Path(config.memex_dir), home, extra.get("PASSEPARTOUT_APPROVALS_FILE")
    )
    workspace = Path(extra.get("PASSEPARTOUT_WORKSPACE") or os.getcwd()).expanduser()
    places = Places(
        home=home,
        config_dir=Path(config.config_dir),
        memex_dir=Path(config.memex_dir),
        skill_dirs=tuple(Path(d) for d in agent.loader.dirs),
        workspace=workspace,
        approvals_file=approvals,
    )
    max_bytes = int(extra.get("PASSEPARTOUT_AUDIT_MAX_BYTES") or 1_000_000)
    return Security(
        places=places,
        vault=vault,
        audit=AuditLog(home / "audit.org", max_bytes=max_bytes, mask=vault.mask),
        book=ApprovalBook(approvals, home / "flightplans.json", mask=vault.mask),
        tool_lookup=agent.tool,
        private_tag=extra.get("PASSEPARTOUT_PRIVATE_TAG") or DEFAULT_TAG,
    )


def install(agent: Any) -> Security:
    """Build (once) and wire the security layer into ``agent``'s loop."""
    existing = agent.services.get(SERVICE)
    if isinstance(existing, Security):
        return existing
    sec = build(agent)
    set_vault(sec.vault)
    install_log_masking()
    loop = agent.loop
    loop.gates.audit = sec.on_verdict
    records = ApprovalRecords(
        book=sec.book, audit=sec.audit, clearances=sec.clearances,
        emit=lambda signal, event: loop.emit(signal, event),  # the masked one, as it is then
    )
    agent.approvals.background = records.flight_plan
    agent.approvals.on_answer = records.answered
    _mask_emits(loop, sec)
    _mask_tool_feedback(loop, sec)
    agent.on_shutdown(sec.audit.close)
    agent.services[SERVICE] = sec
    agent.services["vault"] = sec.vault
    log.info(
        "security: audit %s, approvals %s, %d secrets in the vault",
        sec.audit.path, sec.book.path, len(sec.vault.names()),
    )
    return sec


def flight_plan_runner(agent: Any, sec: Security) -> FlightPlanRunner:
    """The heartbeat's Flight Plan runner for ``agent``."""

    def actuate(action: Any, signal: Signal) -> Signal | None:
        actuator = agent.loop.actuators.get(action.target)
        if actuator is None:
            raise RuntimeError(f"no actuator for {action.target!r}")
        result: Signal | None = actuator(action, signal)
        return result

    return FlightPlanRunner(
        book=sec.book,
        evaluate=agent.loop.gates.evaluate,
        actuate=actuate,
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


def _mask_emits(loop: Any, sec: Security) -> None:
    """Everything the loop shows the person is masked (streamed text, errors, refusals)."""
    original = loop.emit
    if getattr(original, "masks_secrets", False):
        return

    def emit(signal: Signal, event: Event) -> None:
        original(signal, map_values(event, sec.vault.mask_value))

    emit.masks_secrets = True  # type: ignore[attr-defined]
    loop.emit = emit


def _mask_tool_feedback(loop: Any, sec: Security) -> None:
    """A tool's output goes back to the model masked, whichever tool it was."""
    original = loop.actuators.get("tool")
    if original is None or getattr(original, "masks_secrets", False):
        return

    def actuator(action: Any, signal: Signal) -> Signal | None:
        feedback: Signal | None = original(action, signal)
        if feedback is None:
            return None
        return Signal(
            type=feedback.type,
            payload=sec.vault.mask_value(feedback.payload),
            meta=feedback.meta,
            depth=feedback.depth,
        )

    actuator.masks_secrets = True  # type: ignore[attr-defined]
    loop.register_actuator("tool", actuator)
