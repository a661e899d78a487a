"""A boot that fails after the agent is built (while it is handed to the server) is a
boot error the server says, not a server that says "booting" for ever."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_agent import make_config

from passepartout.server import methods
from passepartout.server.methods import Bridge
from passepartout.server.serve import boot_agent


def test_a_failure_while_handing_the_agent_over_is_a_boot_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = make_config(tmp_path)
    bridge = Bridge(config)

    def broken(self: Bridge, agent: object) -> None:
        raise ModuleNotFoundError("No module named 'passepartout.nowhere'")

    monkeypatch.setattr(methods.Bridge, "attach", broken)
    boot_agent(config, bridge, think=lambda thought: None)  # type: ignore[arg-type,return-value]
    assert bridge.ready.is_set()  # waiting faces are answered, not left waiting
    assert bridge.agent is None
    assert bridge.boot_error is not None and "passepartout.nowhere" in bridge.boot_error
