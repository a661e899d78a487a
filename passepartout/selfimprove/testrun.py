"""Run one skill file's own tests and print the outcome as one JSON line.

This runs inside the sandbox, in a scratch directory holding only a copy of the file:
``python -m passepartout.selfimprove.testrun FILE MARK``.  The ``:test`` blocks are
vetted with the skill's code first (the same rules: a test is code that runs), then the
skill is loaded through the real engine (vetting included) with a trust record of its
own scratch state, so what is tested is what would load; each ``test_*`` function of
its ``:test`` blocks then runs in a copy of its namespace with the same confined
builtins, as the pytest plugin of :mod:`passepartout.testing.orgskills` runs them.

The outcome is the one line that starts with ``MARK`` (a random word the trial chose):
a test may print, but cannot forge the outcome.
"""

from __future__ import annotations

import json
import sys
import traceback
import types
from pathlib import Path
from typing import Any

OUTPUT_LIMIT = 2000


def run(path: Path) -> dict[str, Any]:
    from passepartout.engine import Registry, SkillLoader, vetting
    from passepartout.engine.confine import skill_builtins
    from passepartout.engine.discovery import skill_name
    from passepartout.engine.literate import python_code, python_tests
    from passepartout.engine.pinned import sha256_of
    from passepartout.engine.trust import TrustStore
    from passepartout.errors import SkillError

    tests_source = ""
    if path.suffix == ".org":
        try:
            text = path.read_text(encoding="utf-8")
            tests_source = python_tests(text)
            findings = vetting.vet(python_code(text), str(path), tests=tests_source)
        except SyntaxError as err:
            return {"loaded": False, "error": f"syntax error at line {err.lineno}: {err.msg}",
                    "tests": []}
        except ValueError as err:
            return {"loaded": False, "error": f"malformed org file: {err}", "tests": []}
        if findings:
            return {"loaded": False, "tests": [],
                    "error": "the vetting refuses it: " + "; ".join(map(str, findings))}
    name = skill_name(path)
    state = path.parent / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    trust = TrustStore(state)
    trust.trust(name, sha256_of(path.read_bytes()), path)
    loader = SkillLoader(Registry(), [path.parent], trust=trust)
    try:
        loaded = loader.load_module(path, name)
    except SkillError as err:
        return {"loaded": False, "error": err.message, "tests": []}
    tests: list[dict[str, Any]] = []
    if path.suffix == ".org":
        namespace = dict(vars(loaded.module))
        namespace["__builtins__"] = skill_builtins()  # as the skill's own code has
        try:
            exec(compile(tests_source, str(path), "exec", dont_inherit=True), namespace)
        except BaseException as err:  # the test blocks themselves are broken
            return {"loaded": True, "error": f"the test blocks fail to run: {err!r}",
                    "tests": []}
        for key, value in list(namespace.items()):
            if key.startswith("test_") and isinstance(value, types.FunctionType):
                tests.append(_one(key, value))
    return {"loaded": True, "error": None, "tests": tests}


def _one(name: str, fn: Any) -> dict[str, Any]:
    try:
        fn()
    except BaseException:  # SystemExit too: a test does not end the run
        detail = traceback.format_exc(limit=3)[-OUTPUT_LIMIT:]
        return {"name": name, "passed": False, "detail": detail}
    return {"name": name, "passed": True, "detail": ""}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(json.dumps({"loaded": False, "error": "usage: testrun FILE MARK", "tests": []}))
        return 2
    result = run(Path(argv[0]).resolve())
    print(argv[1] + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
