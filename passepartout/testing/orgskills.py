"""A pytest plugin: the ``:test`` source blocks of literate ``.org`` skills are tests.

Each org skill is loaded through the real skill engine (vetting included); its test
blocks then run in a copy of the skill's namespace, so they see its private helpers.
Every ``test_*`` function they define is one pytest item, reported at its org line.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from passepartout.engine import Registry, SkillLoader
from passepartout.engine.discovery import skill_name
from passepartout.engine.literate import python_tests


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.Collector | None:
    if file_path.suffix == ".org" and file_path.parent.name == "skills":
        text = file_path.read_text(encoding="utf-8")
        if ":test" in text:
            return OrgSkillFile.from_parent(parent, path=file_path)
    return None


class OrgSkillFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        name = skill_name(self.path)
        loader = SkillLoader(Registry(), [self.path.parent])
        loaded = loader.load_module(self.path, name)
        namespace = dict(vars(loaded.module))
        source = python_tests(self.path.read_text(encoding="utf-8"))
        exec(compile(source, str(self.path), "exec"), namespace)
        for key, value in namespace.items():
            if key.startswith("test_") and isinstance(value, types.FunctionType):
                yield OrgSkillTest.from_parent(self, name=key, fn=value)


class OrgSkillTest(pytest.Item):
    def __init__(self, *, fn: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fn = fn

    def runtest(self) -> None:
        self.fn()

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.fn.__code__.co_firstlineno - 1, f"{self.path.name}::{self.name}"
