"""The skill engine: discovery, ordering, vetting, namespaces, timeouts, hot reload."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from agents import boot_agent

from passepartout.engine import Registry, SkillLoader, Status, require
from passepartout.engine.discovery import discover, topological_order
from passepartout.errors import BootError
from passepartout.loop import Loop
from passepartout.loop.events import Reply
from passepartout.signals import Keyword, Signal
from passepartout.testing.skilltrust import trust_skills


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def py_skill(name: str, reply: str = "hi", depends: tuple[str, ...] = (), extra: str = "") -> str:
    return f"""
from passepartout.api import Action, defskill
DEPENDS_ON = {list(depends)!r}
{extra}
def {name}_answer(signal):
    return Action("chat", text={reply!r})
defskill({name!r}, trigger=lambda s: s.sensor == "user-input", reflex={name}_answer)
"""


def user_input(text: str = "hello") -> Signal:
    return Signal(payload={"sensor": Keyword("user-input"), "text": text})


def load(directory: Path, **kwargs: object) -> tuple[Registry, SkillLoader]:
    """Load ``directory``'s skills, each trusted by the person as it is now."""
    store = trust_skills(directory.parent / f"{directory.name}-state", directory)
    registry = Registry()
    loader = SkillLoader(registry, [directory], trust=store, **kwargs)  # type: ignore[arg-type]
    loader.load_all()
    return registry, loader


def test_dependencies_load_first_by_name_and_by_org_id(tmp_path: Path) -> None:
    write(tmp_path, "alpha.py", py_skill("alpha", depends=("id:beta-id",)))
    write(
        tmp_path,
        "beta.org",
        """\
        #+DEPENDS_ON: gamma
        :PROPERTIES:
        :ID: beta-id
        :END:
        #+begin_src python
        x = 1
        #+end_src
        """,
    )
    write(tmp_path, "gamma.py", py_skill("gamma"))
    order, blocked = topological_order(discover([tmp_path]))
    assert [e.name for e in order] == ["gamma", "beta", "alpha"]
    assert blocked == {}


def test_a_cycle_is_reported_by_name(tmp_path: Path) -> None:
    write(tmp_path, "a.py", py_skill("a", depends=("b",)))
    write(tmp_path, "b.py", py_skill("b", depends=("a",)))
    write(tmp_path, "c.py", py_skill("c"))
    _, loader = load(tmp_path)
    for name in ("a", "b"):
        assert loader.catalog[name].status is Status.BLOCKED
        assert "a -> b -> a" in (loader.catalog[name].error or "")
    assert loader.catalog["c"].status is Status.READY


def test_a_missing_dependency_blocks_with_its_name(tmp_path: Path) -> None:
    write(tmp_path, "a.py", py_skill("a", depends=("nowhere",)))
    _, loader = load(tmp_path)
    assert loader.catalog["a"].status is Status.BLOCKED
    assert "nowhere" in (loader.catalog["a"].error or "")


def test_an_org_skill_with_a_syntax_error_fails_and_the_others_load(tmp_path: Path) -> None:
    write(
        tmp_path,
        "broken.org",
        """\
        * Code
        #+begin_src python
        def broken(:
            pass
        #+end_src
        """,
    )
    write(tmp_path, "fine.py", py_skill("fine"))
    registry, loader = load(tmp_path)
    entry = loader.catalog["broken"]
    assert entry.status is Status.FAILED
    assert "syntax error at line 3" in (entry.error or "")  # the org file's own line
    assert registry.get("fine") is not None


def test_tangle_no_blocks_are_skipped(tmp_path: Path) -> None:
    write(
        tmp_path,
        "doc.org",
        """\
        #+begin_src python :tangle no
        this is not python
        #+end_src
        #+begin_src python
        doc_value = 42
        #+end_src
        """,
    )
    registry, loader = load(tmp_path)
    assert loader.catalog["doc"].status is Status.READY
    assert require(registry, "doc").doc_value == 42


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("import subprocess\nsubprocess.run(['true'])", "line 1: import of subprocess is not"),
        ("import os\nos.system('true')", "import of os is not allowed"),
        ("from os import system", "import of os is not allowed"),
        ("eval('1')", "line 1: eval is not allowed"),
        ("import importlib", "import of importlib is not allowed"),
        ("import ctypes", "import of ctypes is not allowed"),
        ("import socket", "import of socket is not allowed"),
        ("getattr(__import__('os'), 'sys' + 'tem')", "getattr is not allowed"),
        ("x = ().__class__.__subclasses__()", "access to .__subclasses__ is not allowed"),
    ],
)
def test_vetting_blocks_restricted_calls_with_the_reason(
    tmp_path: Path, code: str, reason: str
) -> None:
    write(tmp_path, "sneaky.py", code + "\n")
    _, loader = load(tmp_path)
    entry = loader.catalog["sneaky"]
    assert entry.status is Status.BLOCKED
    assert reason in (entry.error or "")


def test_a_blocked_skill_never_ran(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write(tmp_path, "sneaky.py", f"import subprocess\nopen({str(marker)!r}, 'w').close()\n")
    load(tmp_path)
    assert not marker.exists()


def test_each_skill_has_its_own_namespace_and_exports_only_prefixed_names(tmp_path: Path) -> None:
    write(tmp_path, "one.py", py_skill("one", extra="helper = 1\none_value = 1"))
    write(tmp_path, "two.py", py_skill("two", extra="helper = 2\ntwo_value = 2"))
    registry, _ = load(tmp_path)
    assert sys.modules["passepartout.skills.one"].helper == 1
    assert sys.modules["passepartout.skills.two"].helper == 2
    exports = vars(require(registry, "one"))
    assert "one_value" in exports and "helper" not in exports
    assert sys.modules["passepartout.skills.one"].__all__ == ["one_answer", "one_value"]


def test_a_slow_skill_times_out(tmp_path: Path) -> None:
    write(tmp_path, "slow.py", "import time\ntime.sleep(5)\n")
    write(tmp_path, "fast.py", py_skill("fast"))
    _, loader = load(tmp_path, timeout=0.3)
    assert loader.catalog["slow"].status is Status.FAILED
    assert "within 0.3 s" in (loader.catalog["slow"].error or "")
    assert loader.catalog["fast"].status is Status.READY


def test_a_skill_that_raises_while_loading_fails_with_its_error(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", "raise RuntimeError('no config')\n")
    _, loader = load(tmp_path)
    assert loader.catalog["bad"].status is Status.FAILED
    assert "raised RuntimeError while loading: no config" in (loader.catalog["bad"].error or "")


def test_mandatory_skills_stop_the_boot(tmp_path: Path) -> None:
    write(tmp_path, "bad.py", "raise RuntimeError('broken')\n")
    with pytest.raises(BootError, match="mandatory skill 'guard' was not found"):
        load(tmp_path, mandatory=["guard"])
    with pytest.raises(BootError, match="mandatory skill 'bad' is failed"):
        load(tmp_path, mandatory=["bad"])


def test_hot_reload_changes_behaviour_and_a_broken_version_leaves_the_old(tmp_path: Path) -> None:
    path = write(tmp_path, "greet.py", py_skill("greet", reply="hello"))
    registry, loader = load(tmp_path)
    loop = Loop(registry)
    replies: list[str] = []
    loop.emit = lambda s, event: (
        replies.append(event.text) if isinstance(event, Reply) else None
    )

    loop.process(user_input())
    path.write_text(py_skill("greet", reply="bonjour"), encoding="utf-8")
    changed = loader.reload("greet")  # changed content waits for the person: old one serves
    assert changed.status is Status.READY
    assert "waiting for your approval" in (changed.error or "")
    loop.process(user_input())
    trust_skills(tmp_path.parent / f"{tmp_path.name}-state", path)
    assert loader.reload("greet").status is Status.READY
    loop.process(user_input())
    path.write_text("def greet_answer(:\n", encoding="utf-8")
    entry = loader.reload("greet")
    loop.process(user_input())

    assert replies == ["hello", "hello", "bonjour", "bonjour"]
    assert entry.status is Status.READY
    assert "previous version still serving" in (entry.error or "")


def test_shipped_skills_load_like_a_users(tmp_path: Path, config) -> None:  # type: ignore[no-untyped-def]
    agent = boot_agent(config)
    try:
        statuses = {e.name: e.status for e in agent.loader.report()}
        assert statuses["policy"] is Status.READY
        assert statuses["dispatcher"] is Status.READY
        assert statuses["reflexes"] is Status.READY
    finally:
        agent.shutdown()
