"""A :CRON: job or :HOOK: prompt inside a private subtree never goes to a remote model:
the dispatcher marks it private (with a note in events.org) and the model layer runs
it on the local model or refuses it (PASSEPARTOUT_PRIVATE_JOBS)."""

from __future__ import annotations

from pathlib import Path

import pytest

from passepartout.config import Config
from passepartout.errors import ConfigError, PipelineError
from passepartout.events.orchestrator import Orchestrator
from passepartout.llm import models
from passepartout.llm.think import private_route
from passepartout.signals import Signal

PRIVATE = """#+TITLE: Life
* Health :@personal:
** Weekly review
:PROPERTIES:
:ID: review-1
:CRON: <2020-01-06 Mon 08:00 +1w>
:END:
Read my therapy notes.
* Work
** Standup
:PROPERTIES:
:ID: standup-1
:CRON: <2020-01-06 Mon 09:00 +1d>
:END:
Summarize yesterday.
*\tnot a heading: still in Work
** Journal hook
:PROPERTIES:
:ID: hook-1
:HOOK: on-edit
:TIER: cognition
:END:
"""


def config(tmp_path: Path, **env: str) -> Config:
    values = {"PASSEPARTOUT_HOME": str(tmp_path / "home"), "MEMEX_DIR": str(tmp_path),
              "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"), **env}
    return Config.from_mapping(values, config_dir=tmp_path / "config")


@pytest.mark.attack
def test_private_jobs_are_refused_on_a_remote_model_by_default(tmp_path: Path) -> None:
    route = models.Route("cognition", ("openai/gpt-4o-mini", "local/smollm2"))
    with pytest.raises(PipelineError, match="private subtree"):
        private_route(config(tmp_path), route)
    local_first = models.Route("cognition", ("local/smollm2", "openai/gpt-4o-mini"))
    assert private_route(config(tmp_path), local_first).models == ("local/smollm2",)


@pytest.mark.attack
def test_local_mode_runs_them_on_the_local_model_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = config(tmp_path, PASSEPARTOUT_PRIVATE_JOBS="local")
    remote = models.Route("reasoning", ("openai/gpt-4o", "anthropic/claude-haiku-4-5"))
    monkeypatch.setattr(models, "local_installed", lambda: True)
    assert private_route(cfg, remote).models == (models.LOCAL_MODEL,)
    monkeypatch.setattr(models, "local_installed", lambda: False)
    with pytest.raises(PipelineError, match="not installed"):
        private_route(cfg, remote)
    with pytest.raises(ConfigError):
        private_route(config(tmp_path, PASSEPARTOUT_PRIVATE_JOBS="always"), remote)


def test_the_orchestrator_marks_private_nodes_and_notes_it(tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "life.org").write_text(PRIVATE)
    injected: list[Signal] = []
    orch = Orchestrator(home=tmp_path / "home", memex_dir=tmp_path,
                        inject=lambda s: injected.append(s) or True)
    try:
        orch.bootstrap()
        assert orch.is_private("review-1")
        assert not orch.is_private("standup-1") and not orch.is_private("hook-1")
        started = orch.on_heartbeat()
        assert sorted(started) == ["review-1", "standup-1"]
        marked = {str(s.turn.heading): s.turn.private for s in injected}
        assert marked == {"review-1": True, "standup-1": False}
        log = (tmp_path / "home" / "events.org").read_text()
        assert "review-1 is in a private subtree" in log
        assert "standup-1 is in a private subtree" not in log
    finally:
        orch.stop()
