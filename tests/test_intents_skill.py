"""The intents skill's own pieces: an intent call's result is the reply; nothing is read
without an agent.  (Intents through a whole agent: tests/test_local_tools.py.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from passepartout.signals import Keyword, Signal

SKILL = Path(__file__).parents[1] / "skills" / "intents.py"


def _skill() -> ModuleType:
    spec = importlib.util.spec_from_file_location("intents_skill_under_test", SKILL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_intent_call_result_is_the_reply() -> None:
    skill = _skill()
    results = [{"call-id": skill.INTENT_CALL + "1", "tool": "agenda", "ok": True,
                "output": "x"}]
    signal = Signal(payload={"sensor": Keyword("tool-output"), "results": results})
    assert skill.intents_result(signal) == "x"
    model_call = [{"call-id": "call_1", "tool": "agenda", "ok": True, "output": "x"}]
    other = Signal(payload={"sensor": Keyword("tool-output"), "results": model_call})
    assert skill.intents_result(other) is None


def test_without_an_agent_no_intent_is_read() -> None:
    skill = _skill()
    signal = Signal(payload={"sensor": Keyword("user-input"), "text": "note: buy milk"})
    assert skill.intents_read(signal) is None
