"""passepartout doctor speaks in its check lines only: booting the skills to check them
logs no warning of another agent holding the automation lock, and no failed memex
import raced by the shutdown."""

from __future__ import annotations

import fcntl
import logging
from pathlib import Path

import pytest

from passepartout.cli.doctor import check_skills
from passepartout.config import Config


def test_checking_the_skills_beside_a_running_agent_logs_nothing(
    config: Config, env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    memex = Path(env["MEMEX_DIR"])
    for n in range(30):
        (memex / "projects" / f"n{n}.org").write_text(f"* Note {n}\nText {n}.\n")
    # The daemon holds the automation lock.
    with open(Path(env["PASSEPARTOUT_HOME"]) / "automation.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with caplog.at_level(logging.INFO):
            checks = check_skills(config)
    assert [c.name for c in checks if not c.ok] == []
    assert "skill memory" in [c.name for c in checks]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert not logging.root.manager.disable  # logging is back as it was
