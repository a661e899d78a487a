"""What a person's skill runs with: builtins without the reflective ones, and an import
that admits only the vetting's allowlist.

The vetting scan already refuses all of this in the source; this is the second wall,
for whatever the scan did not foresee: the skill's module never holds ``open``,
``getattr``, ``eval`` or the real ``__import__``, so reaching them needs an object the
allowlist never hands out.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from passepartout.engine.vetting import (
    ALLOWED_MODULES,
    API_MODULE,
    DENIED_BUILTINS,
    _module_attr_problem,
)


def guarded_import(
    name: str,
    globals: Mapping[str, Any] | None = None,
    locals: Mapping[str, Any] | None = None,
    fromlist: Sequence[str] | None = (),
    level: int = 0,
) -> ModuleType:
    """``__import__`` for a skill: the allowlist, absolute, names checked."""
    names = list(fromlist or ())
    if level:
        raise ImportError("relative imports are not allowed in a skill")
    if name == API_MODULE:
        public = set(getattr(importlib.import_module(API_MODULE), "__all__", ()))
        if not names or not set(names) <= public:
            raise ImportError(f"import only the public names of {API_MODULE}")
    elif name not in ALLOWED_MODULES:
        raise ImportError(f"import of {name} is not allowed in a skill")
    for item in names:
        problem = _module_attr_problem(name, item) if name != "__future__" else None
        if problem:
            raise ImportError(problem)
    return builtins.__import__(name, None, None, tuple(names), 0)


def skill_builtins() -> dict[str, Any]:
    """The builtins a person's skill module sees."""
    safe = {
        k: v
        for k, v in vars(builtins).items()
        if not k.startswith("_") and k not in DENIED_BUILTINS
    }
    safe["__build_class__"] = builtins.__build_class__  # class statements
    safe["__import__"] = guarded_import
    return safe
