"""Starting ``passepartout daemon`` in a subprocess for the daemon suites: every file of
it (state, config, memex, runtime directory) in a scratch place of the test's own."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from agents import wait_for
from wire_client import PYTHON, ROOT, server_env


@dataclass
class Daemons:
    """The environment of one person's daemon, and the daemons started in it."""

    tmp: Path
    env: dict[str, str]
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return Path(self.env["PASSEPARTOUT_HOME"])

    @property
    def memex(self) -> Path:
        return Path(self.env["MEMEX_DIR"])

    @property
    def rundir(self) -> Path:
        return Path(self.env["XDG_RUNTIME_DIR"]) / "passepartout"

    def start(self, *, ahead: int = 0, wait: bool = True,
              **extra: str) -> subprocess.Popen[str]:
        """``passepartout daemon``; ``ahead`` seconds moves its clock (libfaketime, loaded
        into the daemon itself: a ``faketime`` wrapper would outlive a SIGKILL to it)."""
        if ahead:
            extra = {"LD_PRELOAD": libfaketime(), "FAKETIME": f"+{ahead}",
                     # The wall clock only: timed waits keep the real monotonic clock.
                     "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                     "PYTHONPATH": f"{self.sleep_shim()}:{self.env['PYTHONPATH']}", **extra}
        n = len(self.started)
        proc = subprocess.Popen(
            [PYTHON, "-m", "passepartout", "daemon"], cwd=ROOT,
            env={**self.env, **extra}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=(self.tmp / f"daemon{n}.stderr").open("wb"), text=True)
        self.started.append(proc)
        if wait:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("passepartout daemon: pid"), (line, self.log(n))
        return proc

    def sleep_shim(self) -> Path:
        """libfaketime 0.9.10 fails Python's time.sleep (an absolute clock_nanosleep on
        the monotonic clock it does not fake: EINVAL); this sleeps in select instead."""
        shim = self.tmp / "faketime-shim"
        shim.mkdir(exist_ok=True)
        (shim / "sitecustomize.py").write_text(
            "import select\nimport time\n\n"
            "time.sleep = lambda seconds: select.select([], [], [], max(0.0, seconds))\n")
        return shim

    def log(self, n: int = -1) -> str:
        n = n if n >= 0 else len(self.started) - 1
        return (self.tmp / f"daemon{n}.stderr").read_text(errors="replace")

    def cli(self, *args: str, timeout: float = 60.0,
            tty_input: str | None = None) -> subprocess.CompletedProcess[str]:
        """A command; with ``tty_input`` its standard input is a terminal that types it
        (its output then comes as stdout, stderr joined)."""
        command = [PYTHON, "-m", "passepartout", *args]
        if tty_input is None:
            return subprocess.run(command, cwd=ROOT, env=self.env, capture_output=True,
                                  text=True, timeout=timeout)
        master, slave = os.openpty()
        try:
            proc = subprocess.Popen(command, cwd=ROOT, env=self.env, stdin=slave,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True)
            os.write(master, tty_input.encode())
            out, _ = proc.communicate(timeout=timeout)
            return subprocess.CompletedProcess(command, proc.returncode, out, "")
        finally:
            os.close(master)
            os.close(slave)

    def write_approved(self, path: Path, text: str, encoding: str = "utf-8") -> None:
        """Write an org file whose jobs and hooks the person has allowed (sealed first)."""
        from passepartout.testing.jobapproval import approve_text

        approve_text(self.home, self.memex, path, text)
        path.write_text(text, encoding=encoding)

    def wait_ready(self, timeout: float = 30.0) -> str:
        """``passepartout status`` once the agent has booted."""
        return wait_for(lambda: (lambda out: out if "still starting" not in out else None)(
            self.cli("status").stdout), timeout, "the daemon's agent to boot")

    def close(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
            proc.wait(20)
            if proc.stdout is not None:
                proc.stdout.close()


def libfaketime() -> str:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    if not found:
        pytest.fail("libfaketime is missing: `make deps` installs faketime")
    return found[0]


def scratch_daemons(tmp_path: Path) -> Iterator[Daemons]:
    """For a fixture: the environment of a daemon, every daemon killed at the end."""
    # A Unix socket's path must stay short (108 bytes): the runtime directory is in /tmp.
    for name in ("config", "memex/projects", "memex/system"):
        (tmp_path / name).mkdir(parents=True)
    runtime = Path(tempfile.mkdtemp(prefix="ppd-", dir="/tmp"))  # made 0700
    env = server_env(tmp_path, XDG_RUNTIME_DIR=str(runtime), PASSEPARTOUT_STREAM="0")
    env.update(HOME=str(tmp_path), HEARTBEAT_INTERVAL="0.5")
    running = Daemons(tmp_path, env)
    try:
        yield running
    finally:
        running.close()
        shutil.rmtree(runtime, ignore_errors=True)
