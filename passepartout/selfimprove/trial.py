"""A proposed skill's own tests, run in a scratch copy inside the sandbox.

The file is copied alone into a fresh directory, the sandbox's only writable place,
with no network and the agent's configuration and state hidden, as for any shell
command; :mod:`passepartout.selfimprove.testrun` loads it through the engine there and
runs its ``:test`` blocks.  What comes back informs the person's decision; it grants
nothing (the code under test could print whatever it likes: only the approval of the
exact content writes and trusts it).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import passepartout
from passepartout.security.sandbox import SandboxUnavailable, run_sandboxed

TRIAL_TIMEOUT = 60.0


@dataclass(frozen=True)
class TestOutcome:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class Trial:
    """What the scratch run found: whether the skill loaded, and each test's outcome."""

    loaded: bool
    error: str | None
    tests: tuple[TestOutcome, ...]

    @property
    def passed(self) -> bool:
        return self.loaded and self.error is None and all(t.passed for t in self.tests)

    def summary(self) -> str:
        if not self.loaded:
            return f"it does not load: {self.error}"
        if self.error:
            return self.error
        if not self.tests:
            return "it loads; it has no tests"
        failed = [t for t in self.tests if not t.passed]
        if not failed:
            return f"it loads and its {len(self.tests)} test(s) pass in a scratch copy"
        lines = [f"{len(failed)} of {len(self.tests)} test(s) fail in a scratch copy:"]
        lines += [f"- {t.name}: {t.detail.strip().splitlines()[-1] if t.detail else ''}"
                  for t in failed]
        return "\n".join(lines)


def run_trial(file_name: str, content: str, *, hidden: Sequence[str] = (),
              protected: Sequence[str] = (), timeout: float = TRIAL_TIMEOUT) -> Trial:
    """Copy ``content`` as ``file_name`` into a scratch directory and run its tests."""
    scratch = Path(tempfile.mkdtemp(prefix="passepartout-trial-"))
    try:
        target = scratch / file_name
        target.write_text(content, encoding="utf-8")
        code_root = str(Path(passepartout.__file__).resolve().parent.parent)
        cmd = (f"exec {shlex.quote(sys.executable)} -m passepartout.selfimprove.testrun "
               f"{shlex.quote(str(target))}")
        try:
            result = run_sandboxed(
                cmd, scratch, timeout=timeout, hidden=hidden, protected=protected,
                env={"PYTHONPATH": code_root, "PYTHONDONTWRITEBYTECODE": "1"},
                readable=(code_root, os.path.realpath(sys.prefix),
                          os.path.realpath(sys.base_prefix)))
        except (SandboxUnavailable, ValueError) as err:
            return Trial(False, f"its tests could not run: {err}", ())
        if result.timed_out:
            return Trial(False, f"its tests did not finish within {timeout:g} s", ())
        return _parse(result.stdout, result.stderr, result.exit_code)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _parse(stdout: str, stderr: str, code: int) -> Trial:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    try:
        raw = json.loads(lines[-1]) if lines else None
    except ValueError:
        raw = None
    if not isinstance(raw, dict):
        tail = (stderr.strip().splitlines() or [f"exit status {code}"])[-1]
        return Trial(False, f"its test run failed: {tail}", ())
    tests = tuple(
        TestOutcome(str(t.get("name", "?")), bool(t.get("passed")), str(t.get("detail", "")))
        for t in raw.get("tests") or [] if isinstance(t, dict))
    error = raw.get("error")
    return Trial(bool(raw.get("loaded")), str(error) if error else None, tests)
