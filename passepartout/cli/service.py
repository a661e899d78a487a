"""``passepartout service install|uninstall|show``: the daemon as a user service.

On Linux a systemd user unit (``~/.config/systemd/user/passepartout.cli.service``:
``passepartout daemon``, restarted on failure, started with the session); on macOS a
launchd agent (``~/Library/LaunchAgents/org.passepartout.cli.daemon.plist``, kept alive
unless it exits cleanly).  The settings that say where the agent's files are
(``PASSEPARTOUT_HOME``, ``PASSEPARTOUT_CONFIG_DIR``, ``MEMEX_DIR``...) are carried
into the service as they are set when it is installed; everything else comes from
the config directory's ``.env``, as for every other command.  Nothing is enabled or
started here: the command says how.
"""

from __future__ import annotations

import argparse
import os
import plistlib
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from passepartout.errors import PassepartoutError
from passepartout.fsutil import atomic_write

UNIT_NAME = "passepartout.cli.service"
AGENT_LABEL = "org.passepartout.cli.daemon"
# Where the agent's files are: what a service started outside the shell would not know.
CARRIED = ("PASSEPARTOUT_HOME", "PASSEPARTOUT_CONFIG_DIR", "MEMEX_DIR", "MEMEX_SCAN_DIRS",
           "SKILLS_DIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME")


class ServiceError(PassepartoutError):
    kind = "service-error"


@dataclass(frozen=True)
class Service:
    """One kind of service file: where it goes, what it holds, how to start it."""

    kind: str  # systemd | launchd
    path: Path
    text: str
    enable: str
    disable: str


def command() -> list[str]:
    """What the service runs: this interpreter, so the same installation."""
    return [sys.executable, "-m", "passepartout", "daemon"]


def carried(environ: Mapping[str, str]) -> dict[str, str]:
    return {k: environ[k] for k in CARRIED if environ.get(k)}


def systemd_unit(argv: list[str], env: Mapping[str, str]) -> str:
    lines = [
        "[Unit]",
        "Description=Passepartout, a personal agent for Emacs and org-mode",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_word(a, command=True) for a in argv),
        *(f"Environment={_systemd_word(f'{k}={v}')}" for k, v in env.items()),
        "Restart=on-failure",
        "RestartSec=5",
        # The daemon bounds its own shutdown (memory saved) to about 30 s.
        "TimeoutStopSec=45",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def _systemd_word(word: str, *, command: bool = False) -> str:
    """One word of a unit's command line (``command``) or Environment=, quoted as systemd
    reads it: ``%`` starts a specifier everywhere, ``$`` a variable in commands only."""
    if any(c in word for c in "\n\r\0"):
        raise ServiceError(f"{word!r} cannot go in a unit file (a line break or NUL)")
    word = word.replace("%", "%%")
    if command:
        word = word.replace("$", "$$")
    if word and not any(c in word for c in ' \t"\'\\;'):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def launchd_plist(argv: list[str], env: Mapping[str, str], log: Path) -> str:
    plist: dict[str, object] = {
        "Label": AGENT_LABEL,
        "ProgramArguments": argv,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restarted after a crash, not a stop
        "ProcessType": "Background",
        "StandardErrorPath": str(log),
    }
    if env:
        plist["EnvironmentVariables"] = dict(env)
    return plistlib.dumps(plist).decode("utf-8")


def service_for(kind: str, environ: Mapping[str, str]) -> Service:
    home = Path(environ.get("HOME") or Path.home())
    env = carried(environ)
    if kind == "launchd":
        path = home / "Library" / "LaunchAgents" / f"{AGENT_LABEL}.plist"
        log = home / "Library" / "Logs" / "passepartout-daemon.log"
        return Service(kind, path, launchd_plist(command(), env, log),
                       enable=f"launchctl bootstrap gui/{os.getuid()} {path}",
                       disable=f"launchctl bootout gui/{os.getuid()}/{AGENT_LABEL}")
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    path = config / "systemd" / "user" / UNIT_NAME
    return Service(kind, path, systemd_unit(command(), env),
                   enable="systemctl --user daemon-reload && "
                          "systemctl --user enable --now passepartout",
                   disable="systemctl --user disable --now passepartout")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "install or remove the daemon as a user service (systemd, launchd)"
    parser.add_argument("action", choices=("install", "uninstall", "show"),
                        help="write the service file, remove it, or print what it holds")
    default = "launchd" if sys.platform == "darwin" else "systemd"
    parser.add_argument("--kind", choices=("systemd", "launchd"), default=default,
                        help=f"the service manager (default here: {default})")
    parser.add_argument("--force", action="store_true",
                        help="replace a service file that differs from what would be written")


def run(args: argparse.Namespace) -> int:
    service = service_for(args.kind, os.environ)
    if args.action == "show":
        print(f"# {service.path}\n{service.text}", end="")
        return 0
    if args.action == "uninstall":
        return _uninstall(service)
    if service.path.exists() and not args.force:
        current = service.path.read_text(encoding="utf-8", errors="replace")
        if current == service.text:
            print(f"passepartout service: {service.path} is installed already.\n"
                  f"Enable and start it with: {service.enable}")
            return 0
        raise ServiceError(f"{service.path} exists and differs from what would be written; "
                           "`passepartout service show` prints the new one, --force "
                           "replaces it")
    atomic_write(service.path, service.text, mode=0o644)
    print(f"passepartout service: wrote {service.path}\n"
          f"Enable and start it with: {service.enable}\n"
          "`passepartout status` then shows it running.")
    return 0


def _uninstall(service: Service) -> int:
    if not service.path.exists():
        print(f"passepartout service: nothing to remove ({service.path} does not exist)")
        return 0
    wants = service.path.parent / "default.target.wants" / UNIT_NAME
    if service.kind == "systemd" and wants.is_symlink() and shutil.which("systemctl"):
        # Enabled: disable it first, so no dangling link starts nothing at login.
        done = subprocess.run(["systemctl", "--user", "disable", "--now", UNIT_NAME],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ServiceError(f"systemctl --user disable failed: {done.stderr.strip()}; "
                               f"run `{service.disable}`, then uninstall again")
    service.path.unlink()
    print(f"passepartout service: removed {service.path}\n"
          f"If it still runs, stop it with: {service.disable} (or passepartout stop)")
    return 0
