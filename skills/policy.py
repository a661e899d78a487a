"""The policy gate (mandatory): what the agent may touch at all.

Every proposal passes here.  Replies are allowed; a tool call must name a known tool
with the arguments it declares; ``shell`` lines are judged on their parsed form (the
shell policy); file tools may not reach the agent's own configuration, skills, state,
approvals, secrets, ``.git/hooks`` or a shell's start-up files, however the path is
spelled; then the rules of ``<config>/policy.toml`` and the grants of the approvals
file apply (deny beats ask beats allow; a rule never lifts a built-in refusal).

Loading this skill also installs the rest of the security layer: the vault and log
masking, the org audit log of every verdict, and the approver (the person's channel,
or a Flight Plan for background work).
"""

from __future__ import annotations

from passepartout.api import Action, Signal, Verdict, defskill, host
from passepartout.security.guard import Security
from passepartout.security.install import install

DEPENDS_ON: list[str] = []

HOST = host()

policy_SECURITY: Security | None = None  # installed when the engine starts the skill


def policy_start() -> None:
    global policy_SECURITY
    assert HOST is not None
    policy_SECURITY = install(HOST.agent)


def policy_gate(action: Action, signal: Signal) -> Verdict:
    if policy_SECURITY is None:
        return Verdict.deny("the security layer is not installed")
    return policy_SECURITY.policy_verdict(action, signal)


defskill("policy", priority=100, gate=policy_gate, start=policy_start if HOST else None)
