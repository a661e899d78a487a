"""Run one skill file's own tests and print the outcome as one JSON line.

This runs inside the sandbox, in a scratch directory holding only a copy of the file:
``python -m passepartout.selfimprove.testrun FILE``.  The skill is loaded through the
real engine (vetting included) with a trust record of its own scratch state, so what is
tested is what would load; each ``test_*`` function of its ``:test`` blocks then runs in
a copy of its namespace, as the pytest plugin of :mod:`passepartout.testing.orgskills`
runs them.
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
    from passepartout.engine import Registry, SkillLoader
    from passepartout.engine.discovery import skill_name
    from passepartout.engine.literate import python_tests
    from passepartout.engine.pinned import sha256_of
    from passepartout.engine.trust import TrustStore
    from passepartout.errors import SkillError

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
        try:
            exec(compile(python_tests(path.read_text(encoding="utf-8")), str(path), "exec"),
                 namespace)
        except Exception as err:  # the test blocks themselves are broken
            return {"loaded": True, "error": f"the test blocks fail to run: {err!r}",
                    "tests": []}
        for key, value in namespace.items():
            if key.startswith("test_") and isinstance(value, types.FunctionType):
                tests.append(_one(key, value))
    return {"loaded": True, "error": None, "tests": tests}


def _one(name: str, fn: Any) -> dict[str, Any]:
    try:
        fn()
    except Exception:
        detail = traceback.format_exc(limit=3)[-OUTPUT_LIMIT:]
        return {"name": name, "passed": False, "detail": detail}
    return {"name": name, "passed": True, "detail": ""}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(json.dumps({"loaded": False, "error": "usage: testrun FILE", "tests": []}))
        return 2
    result = run(Path(argv[0]).resolve())
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
