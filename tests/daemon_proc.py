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

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Return once the daemon's agent has booted. The test asks the daemon itself
        over its socket: a ``passepartout status`` process per look would take the
        processor from the boot it waits for."""
        from passepartout.errors import DaemonError
        from passepartout.wire.client import as_dict, connect

        def booted() -> bool:
            if self.started and self.started[-1].poll() is not None:
                raise AssertionError(f"the daemon exited while starting: {self.log()}")
            try:
                client = connect(self.home, timeout=5.0, environ=self.env)
                if client is None:  # not listening yet
                    return False
                with client:
                    return bool(as_dict(client.call("status")).get("ready"))
            except DaemonError:  # starting: its files or socket not all there yet
                return False

        wait_for(booted, timeout, "the daemon's agent to boot", interval=0.1)

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


def model_env(base_url: str) -> dict[str, str]:
    """The settings pointing a daemon's model layer at a fake server."""
    return {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url,
            "OPENAI_API_BASE": base_url, "PASSEPARTOUT_MODEL": "openai/gpt-4o",
            "PASSEPARTOUT_MODEL_COGNITION": "openai/gpt-4o-mini"}


def daemons_under(root: str) -> list[int]:
    """The ``passepartout daemon`` processes whose state directory is under ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if b"passepartout" not in b" ".join(args) or b"daemon" not in args:
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        homes = [v.split(b"=", 1)[1].decode(errors="replace") for v in environ
                 if v.startswith(b"PASSEPARTOUT_HOME=")]
        if homes and homes[0].startswith(root):
            found.append(int(entry.name))
    return found


def scratch_daemons(tmp_path: Path, model_url: str | None = None) -> Iterator[Daemons]:
    """The environment of a daemon (its model the fake server at ``model_url`` when
    given); at the end every daemon started in it is killed, and one a client started
    (``passepartout chat``, ``acp``) is told to stop."""
    # A Unix socket's path must stay short (108 bytes): the runtime directory is in /tmp.
    for name in ("config", "memex/projects", "memex/system"):
        (tmp_path / name).mkdir(parents=True)
    runtime = Path(tempfile.mkdtemp(prefix="ppd-", dir="/tmp"))  # made 0700
    env = server_env(tmp_path, XDG_RUNTIME_DIR=str(runtime), PASSEPARTOUT_STREAM="0")
    env.update(HOME=str(tmp_path), HEARTBEAT_INTERVAL="0.5")
    if model_url is not None:
        env.update(model_env(model_url))
    running = Daemons(tmp_path, env)
    try:
        yield running
    finally:
        running.close()
        if daemons_under(str(tmp_path)):  # started by a client, not by the test
            running.cli("stop")
        shutil.rmtree(runtime, ignore_errors=True)
