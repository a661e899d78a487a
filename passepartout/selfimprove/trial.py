"""A proposed skill's own tests, run in a scratch copy inside the sandbox.

The file is copied alone into a fresh directory, the sandbox's only writable place,
with no network, the agent's configuration and state hidden and every private org file
seen redacted (``views``), as for any shell command;
:mod:`passepartout.selfimprove.testrun` vets its tests, loads it through the engine
there and runs its ``:test`` blocks.  What comes back informs the person's decision; it
grants nothing (only the approval of the exact content writes and trusts it), and the
outcome is read only from the line marked with a word chosen here, so a test cannot
print a forged one.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import passepartout
from passepartout.errors import PassepartoutError
from passepartout.security.sandbox import run_sandboxed

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
              protected: Sequence[str] = (), timeout: float = TRIAL_TIMEOUT,
              views: Callable[[], Sequence[tuple[str, str]]] | None = None) -> Trial:
    """Copy ``content`` as ``file_name`` into a scratch directory and run its tests.

    ``views`` gives the ``(copy, original)`` pairs bound over originals in the sandbox
    (private org files seen redacted), as for the shell tool.
    """
    scratch = Path(tempfile.mkdtemp(prefix="passepartout-trial-"))
    try:
        target = scratch / file_name
        target.write_text(content, encoding="utf-8")
        code_root = str(Path(passepartout.__file__).resolve().parent.parent)
        mark = f"OUTCOME-{secrets.token_hex(16)} "
        cmd = (f"exec {shlex.quote(sys.executable)} -m passepartout.selfimprove.testrun "
               f"{shlex.quote(str(target))} {shlex.quote(mark)}")
        try:
            covers = views() if views is not None else ()
            result = run_sandboxed(
                cmd, scratch, timeout=timeout, hidden=hidden, protected=protected,
                env={"PYTHONPATH": code_root, "PYTHONDONTWRITEBYTECODE": "1"},
                readable=(code_root, os.path.realpath(sys.prefix),
                          os.path.realpath(sys.base_prefix)),
                views=covers)
        except (PassepartoutError, ValueError) as err:  # no sandbox, the scan not done
            return Trial(False, f"its tests could not run: {err}", ())
        if result.timed_out:
            return Trial(False, f"its tests did not finish within {timeout:g} s", ())
        return _parse(result.stdout, result.stderr, result.exit_code, mark)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _parse(stdout: str, stderr: str, code: int, mark: str) -> Trial:
    lines = [line[len(mark):] for line in stdout.splitlines() if line.startswith(mark)]
    try:
        raw = json.loads(lines[-1]) if len(lines) == 1 else None
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
