"""The registry of ready skills: who owns a signal, which gates run, which tools exist."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from passepartout.engine.skill import Skill
from passepartout.signals import Signal
from passepartout.tools import Tool

log = logging.getLogger(__name__)

ErrorReporter = Callable[[str, str, BaseException], None]


class Registry:
    """Ready skills by name; lookups are served from lists sorted once per change."""

    def __init__(self) -> None:
        self._skills: dict[str, Skill] = {}
        self._exports: dict[str, SimpleNamespace] = {}
        self._lock = threading.Lock()
        self._by_priority: tuple[Skill, ...] = ()
        self._gates: tuple[Skill, ...] = ()
        self.on_skill_error: ErrorReporter | None = None

    def add(self, skill: Skill) -> None:
        with self._lock:
            self._skills[skill.name] = skill
            self._resort()

    def remove(self, name: str) -> None:
        with self._lock:
            self._skills.pop(name, None)
            self._resort()

    def set_exports(self, skill_file: str, exports: dict[str, Any]) -> None:
        """The names a skill file exports (``<name>_...``), for the skills that need it."""
        self._exports[skill_file] = SimpleNamespace(**exports)

    def _resort(self) -> None:
        ordered = sorted(self._skills.values(), key=lambda s: (-s.priority, s.name))
        self._by_priority = tuple(ordered)
        self._gates = tuple(s for s in ordered if s.gate is not None)

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def names(self) -> list[str]:
        return sorted(self._skills)

    def exports(self, name: str) -> SimpleNamespace | None:
        return self._exports.get(name)

    @property
    def gates(self) -> tuple[Skill, ...]:
        """Skills with a gate, highest priority first."""
        return self._gates

    def all(self) -> tuple[Skill, ...]:
        return self._by_priority

    def triggered(self, signal: Signal) -> Skill | None:
        """The highest-priority skill that handles ``signal`` (has a prompt or a reflex)."""
        for skill in self._by_priority:
            if skill.trigger is None or (skill.prompt is None and skill.reflex is None):
                continue
            try:
                if skill.trigger(signal):
                    return skill
            except Exception as err:  # a broken trigger must not stop the others
                self._report(skill.name, "trigger", err)
        return None

    def augments(self, signal: Signal) -> list[str]:
        """The system-prompt additions of every skill, in priority order."""
        parts: list[str] = []
        for skill in self._by_priority:
            if skill.augment is None:
                continue
            try:
                text = skill.augment(signal)
            except Exception as err:
                self._report(skill.name, "augment", err)
                continue
            if text:
                parts.append(text)
        return parts

    def tools(self) -> list[Tool]:
        return [tool for skill in self._by_priority for tool in skill.tools]

    def _report(self, skill: str, stage: str, err: BaseException) -> None:
        log.error("skill %s failed in its %s: %s", skill, stage, err)
        if self.on_skill_error is not None:
            self.on_skill_error(skill, stage, err)
