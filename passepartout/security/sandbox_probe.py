"""What the sandbox can do on this machine, found by running a command in it.

For ``passepartout doctor``: bubblewrap and its version, the user namespace, and a
probe command that reads its own capabilities, tries to remount ``/`` writable, looks
for every host Unix socket (and one it made itself in its workspace) and asks for the
host's session keyring.
"""

from __future__ import annotations

import os
import platform
import shlex
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from passepartout.security.sandbox import (
    FIX_HINT,
    SandboxUnavailable,
    find_bwrap,
    run_sandboxed,
    support,
)
from passepartout.security.sandbox.find import listening_sockets
from passepartout.security.sandbox.scope import SCOPE_ABI, landlock_abi
from passepartout.security.sandbox.seccomp import ARCHES, refused_calls

_SCRIPT = """\
grep '^CapEff:' /proc/self/status
mount -o remount,rw / 2>/dev/null && echo REMOUNTED
touch /etc/.passepartout-probe 2>/dev/null && rm -f /etc/.passepartout-probe && echo WROTE
for s in {sockets}; do [ -S "$s" ] && echo "SOCKET $s"; done
{keyctl}
true
"""
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING): the host's session keyring.
_KEYCTL = (
    "{python} -I -S -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); "
    "r = l.syscall({nr}, 0, -3, 0); print(\"KEYCTL\", r, ctypes.get_errno())'"
)


@dataclass(frozen=True)
class Finding:
    """One line of the report: ``ok`` False means a command would not be contained."""

    name: str
    ok: bool
    detail: str
    fix: str = ""


def probe(bwrap: str | None = None) -> list[Finding]:
    """Each property of the sandbox, tried for real."""
    try:
        exe = find_bwrap(bwrap)
    except SandboxUnavailable as exc:
        return [Finding("sandbox", False, exc.message, FIX_HINT)]
    found = support(exe)
    who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    report = [Finding("sandbox", True, f"bubblewrap {found.version} ({exe})")]
    if found.userns:
        nested = ", no nested one" if found.no_nested_userns else ""
        detail = f"one per command{nested} (run as {who})"
        report.append(Finding("sandbox user namespace", True, detail))
    else:
        report.append(
            Finding(
                "sandbox user namespace",
                True,
                f"not available to {who}: commands run in the host's (their "
                "capabilities are dropped all the same)",
            )
        )
    return report + _run_probe(exe)


def _run_probe(exe: str) -> list[Finding]:
    with tempfile.TemporaryDirectory(prefix="passepartout-probe-") as tmp:
        ws = Path(tmp)
        own = ws / "probe.sock"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(str(own))
            listener.listen(1)
            sockets = [own, *listening_sockets()]
            cmd = _SCRIPT.format(
                sockets=" ".join(shlex.quote(str(s)) for s in sockets), keyctl=_keyctl_probe()
            )
            try:
                result = run_sandboxed(cmd, ws, timeout=20, bwrap=exe)
            except SandboxUnavailable as exc:
                fix = exc.fields.get("fix", FIX_HINT)
                return [Finding("sandbox probe", False, f"no command can run: {exc.message}", fix)]
            except (OSError, ValueError) as exc:
                return [Finding("sandbox probe", False, f"no command can run: {exc}", FIX_HINT)]
    return _judge(result.stdout, result.exit_code, result.stderr, len(sockets))


def _keyctl_probe() -> str:
    arch = ARCHES.get(platform.machine())
    if arch is None or not sys.executable:
        return ""
    return _KEYCTL.format(python=shlex.quote(sys.executable), nr=arch.refused["keyctl"])


def _syscalls(lines: list[str]) -> Finding:
    refused = refused_calls()
    if not refused:
        detail = f"no seccomp filter for {platform.machine()}: the kernel keyrings are shared"
        return Finding("sandbox system calls", True, detail)
    probe = next((line.split() for line in lines if line.startswith("KEYCTL ")), None)
    held = probe is None or probe[1] == "-1"
    detail = f"refused: {', '.join(refused)}" + ("" if probe else " (not probed)")
    if not held:
        detail = "the host's session keyring was reachable inside the sandbox"
    return Finding(
        "sandbox system calls", held, detail, "update bubblewrap (--seccomp is needed)"
    )


def _judge(out: str, code: int, err: str, checked: int) -> list[Finding]:
    lines = out.splitlines()
    if code != 0 or not lines or not lines[0].startswith("CapEff:"):
        detail = f"the probe command failed (exit code {code}): {err.strip()[:300]}"
        return [Finding("sandbox probe", False, detail, FIX_HINT)]
    caps = lines[0].split()[-1]
    findings = [
        Finding(
            "sandbox capabilities",
            int(caps, 16) == 0,
            f"CapEff {caps} inside" + (" (none)" if int(caps, 16) == 0 else ""),
            "bubblewrap did not drop the capabilities: update bubblewrap (0.8 or newer)",
        )
    ]
    writes = [w for w in ("REMOUNTED", "WROTE") if w in lines]
    findings.append(
        Finding(
            "sandbox filesystem",
            not writes,
            "read-only outside the workspace (remount and write refused)"
            if not writes
            else f"the probe could change the host's files ({', '.join(writes)})",
            "do not run passepartout until the sandbox holds",
        )
    )
    seen = [line.split(" ", 1)[1] for line in lines if line.startswith("SOCKET ")]
    abstract = (
        "abstract sockets cut (own network; a command granted the network is Landlock-scoped)"
        if landlock_abi() >= SCOPE_ABI
        else "abstract sockets cut unless a command is granted the network "
        "(this kernel cannot scope them: Landlock ABI 6, Linux 6.12+)"
    )
    findings.append(
        Finding(
            "sandbox sockets",
            not seen,
            f"none of {checked} host Unix sockets reachable; {abstract}"
            if not seen
            else f"host sockets reachable inside: {', '.join(seen[:5])}",
            "report this: these sockets must be masked",
        )
    )
    findings.append(_syscalls(lines))
    return findings


def sandbox_check(bwrap: str | None = None) -> tuple[bool, str]:
    """Can a command run contained here? (the probe's findings in one line)."""
    findings = probe(bwrap)
    failed = [f for f in findings if not f.ok]
    if failed:
        return False, "; ".join(f"{f.name}: {f.detail}" for f in failed)
    return True, findings[0].detail
