"""The policy gate (mandatory): what the agent may touch at all.

Every proposal passes here.  Replies are allowed; a tool call must name a known tool;
``shell`` commands are judged on their parsed form (the shell policy); file tools may
not reach the agent's own configuration, skills, state or a shell's start-up files.
"""

from __future__ import annotations

import os
from pathlib import Path

from passepartout.api import Action, Signal, Verdict, defskill, host

DEPENDS_ON: list[str] = []

AGENT = host()

policy_SHELL_RC = (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".bash_login")


def policy_protected_roots() -> list[Path]:
    """Directories no tool may write into (the agent's own configuration and state)."""
    if AGENT is None:
        return []
    config = AGENT.config
    roots = [config.config_dir, config.home, *AGENT.loader.dirs]
    return [Path(os.path.realpath(r)) for r in roots]


def policy_path_verdict(raw: str, *, writing: bool) -> Verdict:
    """Resolve ``raw`` (symlinks, ``..``) and judge it."""
    if not raw or "\x00" in raw:
        return Verdict.deny("an empty path or one with a NUL byte")
    resolved = Path(os.path.realpath(os.path.expanduser(raw)))
    if not writing:
        return Verdict.allow("reading")
    if resolved.name in policy_SHELL_RC or ".git/hooks" in resolved.as_posix():
        return Verdict.deny(f"{resolved} is a protected file")
    for root in policy_protected_roots():
        if resolved == root or root in resolved.parents:
            return Verdict.deny(f"{resolved} is inside the agent's own files ({root})")
    return Verdict.allow("an ordinary path")


def policy_gate(action: Action, signal: Signal) -> Verdict:
    if action.target in ("chat", "system"):
        return Verdict.allow("a reply")
    if action.target != "tool":
        return Verdict.ask(f"an action for {action.target!r}")
    if AGENT is not None and AGENT.tool(action.name) is None:
        return Verdict.deny(f"there is no tool named {action.name!r}")
    if action.name == "shell":
        from passepartout.security.shell import ShellPolicy, analyze

        verdict = analyze(str(action.args.get("cmd", "")), ShellPolicy())
        reason = "; ".join(verdict.reasons) or "plain allowlisted commands"
        return Verdict(verdict.decision, reason)
    for key in ("path", "file"):
        if key in action.args:
            return policy_path_verdict(
                str(action.args[key]), writing=action.name in ("write-file", "edit-file")
            )
    return Verdict.allow("no rule applies")


defskill("policy", priority=100, gate=policy_gate)
