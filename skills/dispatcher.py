"""The dispatcher gate (mandatory): high-impact actions need a person's yes.

Evaluating code (``eval`` in the agent, ``emacs-eval`` in the person's Emacs), writing
files, the tools listed under ``[dispatcher] ask`` in ``policy.toml`` and any tool that
declares itself high-impact are asked of the person (in Emacs, in the terminal, or as
a Flight Plan in the approvals file for background work), unless a rule or a scoped
grant allows exactly that; nobody answering is a no.
"""

from __future__ import annotations

from passepartout.api import Action, Signal, Verdict, defskill, host
from passepartout.security.guard import Security
from passepartout.security.install import install

DEPENDS_ON = ["policy"]

HOST = host()

dispatcher_SECURITY: Security | None = None  # installed when the engine starts the skill


def dispatcher_start() -> None:
    global dispatcher_SECURITY
    assert HOST is not None
    dispatcher_SECURITY = install(HOST.agent)


def dispatcher_gate(action: Action, signal: Signal) -> Verdict:
    if dispatcher_SECURITY is None:
        return Verdict.deny("the security layer is not installed")
    return dispatcher_SECURITY.dispatcher_verdict(action, signal)


defskill("dispatcher", priority=90, depends_on=["policy"], gate=dispatcher_gate,
         start=dispatcher_start if HOST else None)
