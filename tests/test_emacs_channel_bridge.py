"""The bridge in process: a real agent with a scripted think behind a real BridgeServer.

Covers what needs the agent's insides: work that arrives before boot, a failed boot,
the focus holder, org-edit signals, and the jobs and history services.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from wire_client import WireClient
from wire_scripted_server import scripted_think

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.context import Focus as ContextFocus
from passepartout.engine.loader import SHIPPED_SKILLS_DIR
from passepartout.server.epc import BridgeServer
from passepartout.server.focus import Focus
from passepartout.server.methods import Bridge
from passepartout.signals import Keyword, Signal
from passepartout.testing.skilltrust import trust_skills

TOKEN = "in-process-token"


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    """The mandatory gates and the test chat skill, without the model layer's chat skill."""
    folder = tmp_path / "skills"
    folder.mkdir()
    for name in ("policy.py", "dispatcher.py"):
        (folder / name).write_text((SHIPPED_SKILLS_DIR / name).read_text())
    wirechat = Path(__file__).parent / "wire_skills" / "wirechat.py"
    (folder / "wirechat.py").write_text(wirechat.read_text())
    trust_skills(tmp_path / "home", folder / "wirechat.py")  # as the person would
    return folder


@pytest.fixture
def bridge(config: Config) -> Bridge:
    return Bridge(config)


@pytest.fixture
def server(bridge: Bridge) -> Iterator[BridgeServer]:
    srv = BridgeServer(bridge, TOKEN)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    bridge.channel.stop()
    srv.stop()
    if bridge.agent is not None:
        bridge.agent.shutdown()


def make_agent(config: Config, skill_dir: Path) -> Agent:
    agent = Agent(config, think=scripted_think, skill_dirs=[skill_dir])
    return agent.boot()


def connect(server: BridgeServer) -> WireClient:
    client = WireClient(server.port)
    kind, _ = client.hello(TOKEN)
    assert kind == "return"
    return client


def _plist(value: list) -> dict:
    return {str(k): v for k, v in zip(value[::2], value[1::2], strict=True)}


def test_prompts_sent_during_boot_run_in_order_after_it(
    config: Config, skill_dir: Path, bridge: Bridge, server: BridgeServer
) -> None:
    client = connect(server)
    assert _plist(client.ok("status"))["health"] == "booting"
    assert client.ok("chat-send", "s", "t1", "reply: first", None) == "t1"
    assert client.ok("chat-send", "s", "t2", "reply: second", None) == "t2"
    bridge.attach(make_agent(config, skill_dir))
    status = _plist(client.wait_callback("passepartout--on-status")[0])
    assert status["ready"] is True and status["health"] == "healthy"
    assert client.wait_callback("passepartout--on-chunk", a1="t1")[2] == "first"
    assert client.wait_callback("passepartout--on-chunk", a1="t2")[2] == "second"
    client.wait_callback("passepartout--on-done", a1="t2")
    client.close()


def test_a_failed_boot_is_said_and_the_server_stays_up(
    bridge: Bridge, server: BridgeServer
) -> None:
    client = connect(server)
    client.ok("chat-send", "s", "t1", "hello", None)
    bridge.boot_failed("cannot start safely: mandatory skill 'policy' was not found")
    _, _, kind, message = client.wait_callback("passepartout--on-error", a1="t1")
    assert kind == "boot-error" and "policy" in message
    client.wait_callback("passepartout--on-done", a1="t1")
    status = _plist(client.ok("status"))
    assert status["health"] == "unhealthy" and "policy" in status["problems"][0]
    kind, err = client.request("skills-reload", "policy")
    assert (kind, err[0]) == ("return-error", "boot-error")
    assert _plist(client.hello(TOKEN)[1])["health"] == "unhealthy"
    client.close()


def test_focus_is_published_for_context_assembly(
    config: Config, skill_dir: Path, bridge: Bridge, server: BridgeServer
) -> None:
    agent = make_agent(config, skill_dir)
    bridge.attach(agent)
    client = connect(server)
    assert client.ok("focus", [Keyword("file"), "/memex/p.org", Keyword("id"), "abc",
                               Keyword("heading"), "Plan the trip",
                               Keyword("outline"), ["Projects", "Trip"]]) is True
    focus = agent.services["focus"].get()
    assert isinstance(focus, Focus)
    assert (focus.file, focus.id, focus.heading, focus.outline) == (
        "/memex/p.org", "abc", "Plan the trip", ("Projects", "Trip"))
    seen = ContextFocus.from_service(agent.services["focus"])  # as context assembly reads it
    assert seen is not None and (seen.id, seen.outline) == ("abc", "Projects / Trip")
    kind, err = client.request("focus", [Keyword("heading"), 3])
    assert (kind, err[0]) == ("return-error", "bad-arguments")
    assert agent.services["focus"].get() == focus  # a bad call changes nothing
    client.close()


def test_org_edit_becomes_a_signal_for_the_orchestrator(
    config: Config, skill_dir: Path, bridge: Bridge, server: BridgeServer,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent(config, skill_dir)
    seen: list[Signal] = []
    monkeypatch.setattr(agent.stimuli, "inject", lambda signal: seen.append(signal) or True)
    bridge.attach(agent)
    client = connect(server)
    assert client.ok("org-edit", [Keyword("file"), "/memex/p.org", Keyword("id"), "abc",
                                  Keyword("sensor"), Keyword("forged"),
                                  Keyword("properties"), [Keyword("CRON"), "daily"]]) is True
    (signal,) = seen
    assert signal.type == "event" and signal.sensor == "org-edit"
    assert signal.payload["file"] == "/memex/p.org"
    assert signal.payload["properties"] == [Keyword("CRON"), "daily"]
    # From Emacs, bound to the connection that saved it (a held job is asked there).
    assert signal.meta["source"] == Keyword("emacs")
    assert set(signal.meta) == {"source", "session-id"}
    assert str(signal.meta["session-id"]).startswith("org-edit-")
    client.close()


@dataclass
class FakeJob:
    name: str
    heading: str
    next_run: str | None


class FakeOrchestrator:
    def jobs(self) -> list[Any]:
        return [FakeJob("backup", "id-1", "2026-01-01 09:00"), {"name": "digest", "ok": True}]


class FakeSessions:
    def history(self, session: str) -> list[dict[str, Any]]:
        return [{"role": "user", "text": f"hello from {session}"},
                {"role": "assistant", "text": "hi"}]


def test_jobs_and_history_come_from_the_services(
    config: Config, skill_dir: Path, bridge: Bridge, server: BridgeServer
) -> None:
    agent = make_agent(config, skill_dir)
    bridge.attach(agent)
    client = connect(server)
    assert client.ok("jobs") is None  # no orchestrator
    assert client.ok("session-history", "s") is None  # no sessions service
    agent.services["orchestrator"] = FakeOrchestrator()
    agent.services["sessions"] = FakeSessions()
    jobs = [_plist(j) for j in client.ok("jobs")]
    assert jobs == [{"name": "backup", "heading": "id-1", "next_run": "2026-01-01 09:00"},
                    {"name": "digest", "ok": True}]
    history = [_plist(m) for m in client.ok("session-history", "s")]
    assert history == [{"role": "user", "text": "hello from s"},
                       {"role": "assistant", "text": "hi"}]
    client.close()


def test_a_failing_service_is_an_internal_error_not_a_traceback(
    config: Config, skill_dir: Path, bridge: Bridge, server: BridgeServer
) -> None:
    class Broken:
        def jobs(self) -> list[Any]:
            raise RuntimeError("secret /path/in/repr")

    agent = make_agent(config, skill_dir)
    agent.services["orchestrator"] = Broken()
    bridge.attach(agent)
    client = connect(server)
    kind, err = client.request("jobs")
    assert kind == "return-error"
    assert err == ["internal-error", "jobs failed; see the server log"]
    assert client.ok("ping") == "pong"
    client.close()
