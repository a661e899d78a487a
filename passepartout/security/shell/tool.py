"""The ``shell`` tool's executor: analyse, ask the person when needed, run sandboxed.

Deny runs nothing. Ask runs only when the approval function returns exactly ``True`` (an
exception or any other answer is a refusal). The network is opened only when the request
that was approved said the command needs it.  The sandbox hides the policy's secret
places and the caller's ``hidden`` ones (the agent's config and state), and keeps the
policy's protected places and the caller's ``protected`` ones (the agent's own files)
read-only, even inside the workspace; git's hardening is in every command's environment.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from passepartout.errors import PipelineError
from passepartout.security.sandbox import RunResult, SandboxUnavailable, run_sandboxed
from passepartout.security.shell import ShellPolicy, ShellVerdict, analyze

log = logging.getLogger(__name__)

Status = Literal["ran", "denied", "declined", "unavailable", "failed"]
DEFAULT_TIMEOUT = 60.0

@dataclass(frozen=True)
class ShellApprovalRequest:
    """What the person is asked: the exact command, why it needs asking, and network use."""

    tool: str
    action: str
    reasons: tuple[str, ...]
    network: bool

    def describe(self) -> str:
        net = " (needs the network)" if self.network else ""
        return f"{self.tool}: {self.action}{net} — {'; '.join(self.reasons)}"


Approve = Callable[[ShellApprovalRequest], bool]


@dataclass(frozen=True)
class ShellOutcome:
    """What happened to one proposed command, for the chat and the audit log."""

    cmd: str
    status: Status
    verdict: ShellVerdict
    asked: bool
    network: bool
    result: RunResult | None
    message: str

    @property
    def ran(self) -> bool:
        return self.status == "ran"


def execute_shell(
    cmd: str,
    *,
    policy: ShellPolicy,
    workspace: Path,
    approve: Approve,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    output_cap: int = 100_000,
    bwrap: str | None = None,
    hidden: Sequence[Path | str] = (),
    protected: Sequence[Path | str] = (),
    views: Callable[[], Sequence[tuple[str, str]]] | None = None,
) -> ShellOutcome:
    """Analyse ``cmd``, ask when the policy says so, and run it in the sandbox.

    ``views`` gives, once the command may run, the ``(copy, original)`` pairs bound
    over originals in the sandbox (private org files seen redacted).
    """
    if policy.workspace is None:
        policy = dataclasses.replace(policy, workspace=Path(workspace))
    verdict = analyze(cmd, policy)
    why = "; ".join(verdict.reasons)

    def outcome(
        status: Status,
        message: str,
        *,
        asked: bool,
        network: bool = False,
        result: RunResult | None = None,
    ) -> ShellOutcome:
        log.info("shell %s: %r (%s)", status, cmd, message)
        return ShellOutcome(cmd, status, verdict, asked, network, result, message)

    if verdict.decision == "deny":
        return outcome("denied", f"refused by the shell policy: {why}", asked=False)
    asked = verdict.decision == "ask"
    network = False
    if asked:
        request = ShellApprovalRequest("shell", cmd, tuple(verdict.reasons), verdict.network)
        try:
            answer = approve(request)
        except Exception as exc:  # a broken approver must never mean yes
            log.warning("approval for %r failed: %s", cmd, exc)
            return outcome("declined", f"approval failed ({exc}); not run", asked=True)
        if answer is not True:
            return outcome("declined", f"not approved; not run ({why})", asked=True)
        network = verdict.network
    try:
        covers = views() if views is not None else ()
        result = run_sandboxed(
            cmd,
            Path(workspace),
            timeout=timeout,
            allow_network=network,
            env=env,
            output_cap=output_cap,
            hidden=(*policy.secret_paths, *hidden),
            protected=(*policy.protected_paths, *protected),
            bwrap=bwrap,
            views=covers,
        )
    except (SandboxUnavailable, PipelineError) as exc:
        return outcome("unavailable", f"not run: {exc.message}", asked=asked)
    except (OSError, ValueError) as exc:
        return outcome("failed", f"not run: {exc}", asked=asked)
    return outcome("ran", _describe(result), asked=asked, network=network, result=result)


def _describe(result: RunResult) -> str:
    parts = [f"exit code {result.exit_code}"]
    if result.timed_out:
        parts.append("timed out")
    if result.truncated:
        parts.append("output truncated")
    return ", ".join(parts)
