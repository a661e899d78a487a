"""Run a shell command inside bubblewrap: workspace writable, everything else read-only.

The command reaches bash as one argv element (``bwrap ... -- timeout N bash -c CMD``), so
it is never re-quoted. It runs with no capability (root too), in its own user namespace
where the machine gives one (and may not make another), without the host's sockets,
credentials or writable protected places (:mod:`.sandbox_mounts`), with a minimal
environment plus git's hardening. Without bwrap nothing runs: :class:`SandboxUnavailable`
says why.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from passepartout.errors import PassepartoutError
from passepartout.security.sandbox.find import listening_sockets, other_homes
from passepartout.security.sandbox.mounts import mount_args
from passepartout.security.sandbox.scope import FAILED, FAILED_CODE, launcher_argv
from passepartout.security.sandbox.seccomp import program_fd
from passepartout.security.sensitive import CREDENTIALS, PROTECTED
from passepartout.security.shell.git_hardening import GIT_ENV

log = logging.getLogger(__name__)

MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"
FIX_HINT = "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap)"
# Variables that make bash or the dynamic loader run code before the command itself.
_FORBIDDEN_ENV = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PROMPT_COMMAND", "PS4")
_FORBIDDEN_ENV_PREFIXES = ("LD_", "BASH_FUNC_", "GIT_")
# Names that carry a credential or lead to a host service: never passed in.
_CREDENTIAL_ENV = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|SOCK|DBUS|DISPLAY|RUNTIME_DIR"
    r"|^EMACS|^SSH_|^GPG|^AWS_|^AZURE_|^GOOGLE_|^KUBE|^DOCKER_|^VAULT_",
    re.IGNORECASE,
)
_KILL_GRACE = 2.0
_SETUP_TRIES = 3
# The place a mount failed at, in bubblewrap's words ("Can't create file at /x: ...").
_NAMED_PLACE = re.compile(r"\b(?:at|for|on) (/[^:]*):")
P = ParamSpec("P")
R = TypeVar("R")
_sandbox_lock = threading.Lock()


def _one_at_a_time(run: Callable[P, R]) -> Callable[P, R]:
    """One sandboxed command at a time (see :func:`run_sandboxed`)."""

    @functools.wraps(run)
    def serialized(*args: P.args, **kwargs: P.kwargs) -> R:
        with _sandbox_lock:
            return run(*args, **kwargs)

    return serialized


# The key of an Emacs server listening on TCP (server-use-tcp): with it, and the network
# granted, a command could make the person's Emacs run code.
EMACS_SERVER_KEYS = ("~/.emacs.d/server", "~/.config/emacs/server")


class SandboxUnavailable(PassepartoutError):
    """bubblewrap is missing or cannot start; nothing ran."""

    kind = "sandbox-unavailable"


@dataclass(frozen=True)
class RunResult:
    """What the command did. ``truncated``: a stream passed the cap and the run was killed."""

    exit_code: int
    stdout: str
    stderr: str
    truncated: bool
    timed_out: bool


def find_bwrap(bwrap: str | None = None) -> str:
    """The bwrap executable to use, or raise :class:`SandboxUnavailable`."""
    if bwrap is not None:
        if os.path.isfile(bwrap) and os.access(bwrap, os.X_OK):
            return bwrap
        raise SandboxUnavailable(
            f"the configured bubblewrap binary {bwrap} does not exist or is not executable; "
            f"{FIX_HINT} or fix the path"
        )
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(
            f"bubblewrap (bwrap) is not on PATH, so shell commands cannot be sandboxed; {FIX_HINT}"
        )
    return found


@dataclass(frozen=True)
class Support:
    """What this machine's bubblewrap can do, found once per binary."""

    bwrap: str
    version: str
    userns: bool  # a user namespace of its own for each sandbox
    no_nested_userns: bool  # and no further one inside it (bubblewrap 0.8+)


@functools.cache
def support(bwrap: str) -> Support:
    """Try bwrap's user namespace options once; the sandbox uses the strongest that works."""
    version = _bwrap_version(bwrap)
    for flags in (["--unshare-user", "--disable-userns"], ["--unshare-user"]):
        probe = [bwrap, *flags, "--ro-bind", "/", "/", "--cap-drop", "ALL", "--", "true"]
        try:
            done = subprocess.run(probe, capture_output=True, timeout=10, env=_clean_env(None))
        except (OSError, subprocess.SubprocessError):
            break
        if done.returncode == 0:
            return Support(bwrap, version, True, "--disable-userns" in flags)
    return Support(bwrap, version, False, False)


def _bwrap_version(bwrap: str) -> str:
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip().removeprefix("bubblewrap ") or "unknown"


def build_argv(
    bwrap: str,
    cmd: str,
    workspace: Path,
    *,
    timeout: float,
    allow_network: bool,
    hidden: Sequence[Path | str] = (),
    protected: Sequence[Path | str] = (),
    status_fd: int | None = None,
    seccomp_fd: int | None = None,
    home: Path | None = None,
    sockets: Sequence[Path] = (),
    runtime_dir: str | None = None,
    userns: Support | None = None,
    views: Sequence[tuple[str, str]] = (),
    readable: Sequence[Path | str] = (),
) -> list[str]:
    """The full argument list; ``cmd`` is a single element, never re-quoted.

    Every credential place of :data:`CREDENTIALS` (in every home directory this process
    can enter) is hidden and every protected one of :data:`PROTECTED` read-only, with
    ``hidden`` and ``protected`` added to them.
    """
    ws = str(workspace)
    home = home or Path(os.path.expanduser("~"))
    argv = [bwrap]
    argv += mount_args(
        workspace,
        home=home,
        hidden=[*CREDENTIALS, *EMACS_SERVER_KEYS, *hidden],
        protected=[*PROTECTED, *protected],
        sockets=sockets,
        runtime_dir=runtime_dir,
        other_homes=other_homes(home),
        views=views,
        readable=readable,
    )
    argv += ["--chdir", ws]
    if userns is None or userns.userns:
        argv.append("--unshare-user")
    if userns is None or userns.no_nested_userns:
        argv.append("--disable-userns")
    argv += ["--cap-drop", "ALL"]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not allow_network:
        argv.append("--unshare-net")  # also cuts the host's abstract Unix sockets
    argv += ["--die-with-parent", "--new-session"]
    if status_fd is not None:
        argv += ["--json-status-fd", str(status_fd)]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    seconds = f"{max(timeout, 0.1):.3f}"
    argv.append("--")
    if allow_network:  # the host's abstract sockets are reachable: scope them out
        # The interpreter itself, not a venv link: a venv under /tmp is not in the sandbox.
        argv += launcher_argv(os.path.realpath(sys.executable))
    argv += ["timeout", "--kill-after=1", seconds, "bash", "-c", cmd]
    return argv


def _clean_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """PATH, HOME, LANG, git's hardening and ``env``; nothing of the agent's own."""
    extra = dict(env or {})
    for key in extra:
        if key in _FORBIDDEN_ENV or key.startswith(_FORBIDDEN_ENV_PREFIXES):
            raise ValueError(f"environment variable {key} is not allowed in the sandbox")
        if _CREDENTIAL_ENV.search(key):
            raise ValueError(
                f"environment variable {key} looks like a credential or a host service; "
                "it is not passed into the sandbox"
            )
    base = {"PATH": MINIMAL_PATH, "HOME": os.path.expanduser("~"), "LANG": "C.UTF-8"}
    return {**base, **extra, **GIT_ENV}


@_one_at_a_time
def run_sandboxed(
    cmd: str,
    workspace: Path,
    *,
    timeout: float,
    allow_network: bool = False,
    env: Mapping[str, str] | None = None,
    output_cap: int = 100_000,
    hidden: Sequence[Path | str] = (),
    protected: Sequence[Path | str] = (),
    bwrap: str | None = None,
    views: Sequence[tuple[str, str]] = (),
    readable: Sequence[Path | str] = (),
) -> RunResult:
    """Run ``cmd`` with ``bash -c`` in a bubblewrap sandbox rooted at ``workspace``.

    ``hidden`` and ``protected``: the caller's own places (the agent's config, state and
    skills) on top of :data:`CREDENTIALS` and :data:`PROTECTED`. A workspace that cannot
    be confined raises ``ValueError`` (:class:`WorkspaceRefused`); nothing runs.

    One command at a time: the mounts are planned from the workspace as it is, and a
    second command running meanwhile could swap a planned directory for a symlink.
    A place that vanished between the plan and bubblewrap's mounts (a host socket
    closed meanwhile) is planned again: nothing of the command had run.
    """
    for attempt in range(1, _SETUP_TRIES + 1):
        try:
            return _run_once(
                cmd, workspace, timeout=timeout, allow_network=allow_network, env=env,
                output_cap=output_cap, hidden=hidden, protected=protected, bwrap=bwrap,
                views=views, readable=readable,
            )
        except SandboxUnavailable as exc:
            if not exc.fields.get("vanished") or attempt == _SETUP_TRIES:
                raise
            log.debug("sandbox set-up tried again: %s", exc.message)
    raise AssertionError("unreachable")


def _run_once(
    cmd: str,
    workspace: Path,
    *,
    timeout: float,
    allow_network: bool,
    env: Mapping[str, str] | None,
    output_cap: int,
    hidden: Sequence[Path | str],
    protected: Sequence[Path | str],
    bwrap: str | None,
    views: Sequence[tuple[str, str]],
    readable: Sequence[Path | str],
) -> RunResult:
    if "\x00" in cmd:
        raise ValueError("the command contains a NUL byte")
    workspace = Path(workspace).resolve()
    if not workspace.is_dir():
        raise ValueError(f"workspace {workspace} is not a directory")
    exe = find_bwrap(bwrap)
    run_env = _clean_env(env)
    status_r, status_w = os.pipe()
    filter_fd = program_fd()
    kept = (status_w,) if filter_fd is None else (status_w, filter_fd)
    try:
        argv = build_argv(
            exe,
            cmd,
            workspace,
            timeout=timeout,
            allow_network=allow_network,
            hidden=hidden,
            protected=protected,
            status_fd=status_w,
            sockets=listening_sockets(),
            runtime_dir=os.environ.get("XDG_RUNTIME_DIR"),
            userns=support(exe),
            seccomp_fd=filter_fd,
            views=views,
            readable=readable,
        )
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=run_env,
            cwd=workspace,
            pass_fds=kept,
            start_new_session=True,
        )
    except BaseException as exc:
        os.close(status_r)
        for fd in kept:
            os.close(fd)
        if isinstance(exc, OSError):
            raise SandboxUnavailable(
                f"bubblewrap could not be started: {exc}; {FIX_HINT}"
            ) from exc
        raise
    for fd in kept:
        os.close(fd)
    started = time.monotonic()
    out, err, truncated, killed = _collect(proc, output_cap, deadline=started + timeout + 3)
    code = proc.wait()
    with os.fdopen(status_r, "rb") as handle:
        status = handle.read().decode("utf-8", "replace")
    text_err = err.decode("utf-8", "replace")
    if '"child-pid"' not in status or (
        not killed and '"exit-code"' not in status and text_err.startswith("bwrap: ")
    ):
        raise setup_failure(text_err, code)
    code = _child_exit_code(status, code)
    if code == FAILED_CODE and text_err.startswith(FAILED):
        raise SandboxUnavailable(text_err.strip().removeprefix(FAILED))
    elapsed = time.monotonic() - started
    timed_out = killed == "timeout" or (code in (124, 137) and elapsed >= timeout * 0.95)
    return RunResult(
        exit_code=code,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        truncated=truncated,
        timed_out=timed_out,
    )


_USERNS_HINT = (
    "check that unprivileged user namespaces are enabled "
    "(sysctl kernel.unprivileged_userns_clone=1, and on Ubuntu "
    "kernel.apparmor_restrict_unprivileged_userns=0)"
)


def setup_failure(stderr: str, code: int) -> SandboxUnavailable:
    """bubblewrap stopped before the command ran: the error names its real cause.

    The command never started, so nothing of it ran; ``fix`` says what to do, which is
    not always to install bubblewrap.
    """
    said = next(
        (line.removeprefix("bwrap: ").strip() for line in stderr.splitlines()
         if line.startswith("bwrap: ")),
        stderr.strip() or f"exit code {code}",
    )
    if "namespace" in said or "uid map" in said or "setting up uid" in said:
        fix = _USERNS_HINT
    elif said.startswith("Can't") and ("Permission denied" in said or "denied" in said):
        fix = (
            "a place the sandbox covers could not be reached; run `passepartout doctor` "
            "and report its sandbox lines"
        )
    else:
        fix = f"{_USERNS_HINT}, or update bubblewrap"
    named = _NAMED_PLACE.search(said)
    vanished = named is not None and not os.path.lexists(named.group(1))
    return SandboxUnavailable(f"bubblewrap could not set up the sandbox: {said}", fix=fix,
                              vanished=vanished)


def _child_exit_code(status: str, fallback: int) -> int:
    """The command's own exit code from bwrap's JSON status stream."""
    for line in status.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and "exit-code" in doc:
            return int(doc["exit-code"])
    return fallback


def _kill(proc: subprocess.Popen[bytes]) -> None:
    # bwrap leads its own process group; --die-with-parent and the pid namespace take
    # the sandboxed processes down with it.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _collect(
    proc: subprocess.Popen[bytes], cap: int, *, deadline: float
) -> tuple[bytes, bytes, bool, str]:
    """Read both streams incrementally; kill on passing ``cap`` or the hard deadline."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    sel = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        sel.register(stream, selectors.EVENT_READ)
    truncated, killed = False, ""
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill(proc)
                killed = "timeout"
                break
            for key, _ in sel.select(timeout=min(remaining, 0.5)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = bufs[key.fd]
                buf += chunk
                if len(buf) > cap:
                    del buf[cap:]
                    truncated = True
            if truncated and not killed:
                _kill(proc)
                killed = "cap"
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    if killed:
        try:
            proc.wait(timeout=_KILL_GRACE)
        except subprocess.TimeoutExpired:
            log.warning("sandboxed process %d did not exit after SIGKILL", proc.pid)
    return bytes(bufs[out_fd]), bytes(bufs[err_fd]), truncated, killed
