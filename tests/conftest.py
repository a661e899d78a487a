"""Shared fixtures: an isolated configuration, and the fake model server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Helper modules with asserts of their own, imported by the suites (llm_agent is also a
# plugin of some): rewritten like test modules, so that their asserts explain failures.
pytest.register_assert_rewrite("llm_agent", "fakellm", "wire_client")

from fakellm import fake_llm  # noqa: E402,F401  (the fixture, shared by every suite)

from passepartout.config import Config  # noqa: E402

# litellm must never fetch its cost map from the network in tests.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A minimal environment whose state, config and memex live in ``tmp_path``."""
    for name in ("home", "config", "memex/projects", "memex/system"):
        (tmp_path / name).mkdir(parents=True)
    return {
        "PASSEPARTOUT_HOME": str(tmp_path / "home"),
        "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
        "MEMEX_DIR": str(tmp_path / "memex"),
        "HEARTBEAT_INTERVAL": "3600",
    }


@pytest.fixture
def config(env: dict[str, str]) -> Config:
    return Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))
