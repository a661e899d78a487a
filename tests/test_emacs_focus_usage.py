"""What Emacs sees of the context and the cost: the focus with its body, a background
job's own heading, the ``context`` and ``usage`` methods, headings named by title and
file in ``passepartout cost``, and ``doctor``'s real check of the provider."""

from __future__ import annotations

import argparse
import io
import socket
from pathlib import Path
from typing import ClassVar

import pytest
from fakellm import FakeLLM

from passepartout import protocol
from passepartout.cli import doctor
from passepartout.config import Config
from passepartout.context import Focus, focus_for, peripheral_sections
from passepartout.events.jobs import Tier, derive_id
from passepartout.events.registry import NodeRegistry
from passepartout.events.scan import scan_file
from passepartout.llm import cost_cli
from passepartout.llm.heading_names import heading_names
from passepartout.llm.ledger import Call, Ledger
from passepartout.loop.events import Done, Event, Notice, Reply
from passepartout.server.focus import Focus as HeldFocus
from passepartout.server.focus import FocusHolder
from passepartout.server.methods import METHODS, Bridge
from passepartout.services import Services
from passepartout.signals import Keyword, Signal

BODY = "Book the train to Lyon before Friday.\nAsk Marie about the hotel."


def _focus_text(focus: Focus | None) -> str:
    return "\n".join(s.text for s in peripheral_sections(None, focus, "", related=0))


def test_a_heading_without_id_is_sent_with_its_body() -> None:
    holder = FocusHolder()
    holder.set(HeldFocus(file="/m/trip.org", heading="Plan the trip", outline=("Projects",),
                         body=BODY))
    text = _focus_text(Focus.from_service(holder))
    assert "Plan the trip" in text and "Under: Projects" in text
    assert "Book the train to Lyon" in text and "Ask Marie" in text


def test_the_body_is_bounded() -> None:
    focus = Focus.from_service({"heading": "Long", "body": "x" * 50_000})
    assert focus is not None and focus.body is not None and len(focus.body) == 4000


def test_a_heading_in_a_private_subtree_is_withheld(tmp_path: Path) -> None:
    org = tmp_path / "life.org"
    org.write_text("* Health :@personal:\n** Doctor visit\nThe diagnosis is secret.\n")
    focus = Focus(file=str(org), heading="Doctor visit", outline="Health",
                  body="The diagnosis is secret.")
    text = _focus_text(focus)
    assert "private heading (not shown)" in text and "diagnosis" not in text


class _Orchestrator:
    def __init__(self, registry: object) -> None:
        self.registry = registry


def test_a_background_job_has_its_own_heading_never_the_persons_point(
        tmp_path: Path) -> None:
    org = tmp_path / "jobs.org"
    org.write_text("* Routines\n** Water the plants\n:PROPERTIES:\n"
                   ":CRON: <2026-01-01 Thu 08:00 +1d>\n:END:\nCheck the soil.\n")
    scan = scan_file(org)
    node = scan.nodes[0]
    registry = NodeRegistry()
    registry.replace_file(scan)
    person = FocusHolder()
    person.set(HeldFocus(heading="My diary", body="What the person is writing."))
    services = {"focus": person, "orchestrator": _Orchestrator(registry)}
    cron = Signal(payload={"sensor": Keyword("user-input"), "text": "Water"},
                  meta={"origin": Keyword("cron"), "heading": node.id,
                        "session-id": f"cron:{node.id}"})
    focus = focus_for(cron, services)
    assert focus is not None and focus.heading == "Water the plants"
    assert focus.outline == "Routines" and focus.file == str(org)
    assert "diary" not in _focus_text(focus)
    chat = Signal(payload={"sensor": Keyword("user-input"), "text": "hi"},
                  meta={"origin": Keyword("chat"), "session-id": "s1"})
    assert (focus_for(chat, services) or Focus()).heading == "My diary"
    heartbeat = Signal(payload={"sensor": Keyword("heartbeat")}, meta={})
    assert focus_for(heartbeat, services) is None


def test_usage_sums_the_session_and_today(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.record(Call("openai/m", "openai", 100, 10, cost=0.5, session="s1"))
    ledger.record(Call("openai/m", "openai", 50, 5, cost=0.25, session="s2"))
    ledger.record(Call("openai/m", "openai", 7, 1, cost=9.0, session="s1", ts=86400.0))
    usage = ledger.usage("s1")
    assert usage["session"] == {"calls": 2, "tokens-in": 107, "tokens-out": 11, "cost": 9.5}
    assert usage["today"] == {"calls": 2, "tokens-in": 150, "tokens-out": 15, "cost": 0.75}
    assert set(ledger.usage(None)) == {"today"}
    ledger.close()


def test_the_bridge_answers_usage_and_context(config: Config) -> None:
    bridge = Bridge(config)

    class _Agent:
        services: ClassVar[Services] = Services()

        def status(self) -> dict[str, object]:
            return {"health": "healthy", "problems": []}

    bridge.agent = _Agent()  # type: ignore[assignment]
    bridge.ready.set()
    Ledger.in_home(config.home).record(Call("openai/m", "openai", 3, 2, cost=0.01,
                                            session="s9"))
    usage = METHODS["usage"].run(bridge, None, METHODS["usage"].check(["s9"]))
    assert usage["session"]["tokens-in"] == 3 and usage["today"]["calls"] == 1
    show = METHODS["context"]
    assert "No heading is in focus" in show.run(bridge, None, protocol.Context())
    METHODS["focus"].run(bridge, None, METHODS["focus"].check(
        [[Keyword("heading"), "Plan the trip", Keyword("body"), BODY]]))
    assert "Ask Marie about the hotel" in show.run(bridge, None, protocol.Context())
    with pytest.raises(Exception, match="body"):
        METHODS["focus"].run(bridge, None, METHODS["focus"].check(
            [[Keyword("heading"), "x", Keyword("body"), 3]]))
    status = bridge.status()
    assert "model" in status and "provider" in status
    assert str(status["approvals-file"]).endswith("approvals.org")
    assert status["presets-file"] == str(config.config_dir / "presets.org")


def test_cost_names_headings_by_title_and_file(config: Config, env: dict[str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    memex = Path(env["MEMEX_DIR"])
    org = memex / "projects" / "garden.org"
    org.write_text("* Garden\n** Water the plants\n:PROPERTIES:\n"
                   ":CRON: <2026-01-01 Thu 08:00 +1d>\n:END:\n"
                   "* Reading\n:PROPERTIES:\n:ID: read-42\n:END:\n")
    job_id = derive_id(org.resolve(), ["Garden", "Water the plants"])
    names = heading_names([job_id, "read-42", "gone"], [memex])
    assert names[job_id].startswith("Water the plants (") and "garden.org" in names[job_id]
    assert names["read-42"].startswith("Reading (") and "gone" not in names
    ledger = Ledger.in_home(config.home)
    ledger.record(Call("openai/m", "openai", 3, 2, cost=0.01, heading=job_id, origin="cron"))
    ledger.close()
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = io.StringIO()
    assert cost_cli.run(argparse.Namespace(by="heading", limit=20), out=out) == 0
    assert "Water the plants (" in out.getvalue() and job_id not in out.getvalue()


# -- doctor: the provider, for real (the fake server, a closed port; no network) ------

def _config(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], **extra: str) -> Config:
    for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL",
                 "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "PASSEPARTOUT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for key, value in {**env, **extra}.items():
        monkeypatch.setenv(key, value)
    return Config.from_mapping({**env, **extra}, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))


def test_doctor_reaches_the_endpoint(fake_llm: FakeLLM, env: dict[str, str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fake_llm.reply("ok")
    config = _config(monkeypatch, env, PASSEPARTOUT_MODEL="openai/fake-model",
                     OPENAI_API_KEY="sk-test", OPENAI_API_BASE=fake_llm.base_url)
    checks = doctor.check_provider(config)
    assert [c.ok for c in checks] == [True, True], [c.line() for c in checks]
    assert "answered" in checks[1].detail and fake_llm.request_count == 1
    assert fake_llm.last_request.body["max_tokens"] == 1


def test_doctor_says_an_unreachable_endpoint_fails_and_why(
        env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = _config(monkeypatch, env, PASSEPARTOUT_MODEL="openai/fake-model",
                     OPENAI_API_KEY="sk-test", OPENAI_API_BASE=f"http://127.0.0.1:{port}/v1")
    checks = doctor.check_provider(config)
    assert checks[0].ok and not checks[1].ok
    assert "did not answer" in checks[1].detail and "onnect" in checks[1].detail
    assert "[FAIL] provider endpoint" in checks[1].line()


def test_doctor_says_a_missing_key_by_name(env: dict[str, str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    config = _config(monkeypatch, env, PASSEPARTOUT_MODEL="anthropic/claude-haiku-4-5")
    (check,) = doctor.check_provider(config)
    assert not check.ok and "ANTHROPIC_API_KEY" in check.detail
    assert "ANTHROPIC_API_KEY" in check.fix


def test_doctor_with_the_local_model_says_so(env: dict[str, str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("passepartout.llm.models.local_installed", lambda: True)
    (check,) = doctor.check_provider(_config(monkeypatch, env))
    assert check.ok and "local model" in check.detail and "offline" in check.detail


def test_a_job_notice_names_its_heading_by_title_and_file(tmp_path: Path) -> None:
    from passepartout.events.orchestrator import Orchestrator

    memex = tmp_path / "memex"
    (memex / "projects").mkdir(parents=True)
    org = memex / "projects" / "garden.org"
    org.write_text("* Garden\n** Water the plants\n:PROPERTIES:\n"
                   ":CRON: <2026-01-01 Thu 08:00 +1d>\n:END:\nHow wet is the soil?\n"
                   "** Weekly review\n:PROPERTIES:\n:ID: review-7\n"
                   ":CRON: <2026-01-01 Thu 09:00 +1w>\n:END:\nReview.\n")
    injected: list[Signal] = []
    orch = Orchestrator(home=tmp_path / "home", memex_dir=memex,
                        inject=lambda s: injected.append(s) or True)
    orch.bootstrap()
    derived = derive_id(org.resolve(), ["Garden", "Water the plants"])
    assert orch.heading_name(derived) == f"'Water the plants' ({org.resolve()})"
    assert orch.heading_name("review-7").endswith("garden.org) review-7")
    orch.dispatcher.run_prompt(derived, "How wet is the soil?", Tier.COGNITION, "cron",
                               str(org))
    signal = injected[-1]
    orch.channel.send(signal, Reply("Dry."))
    orch.channel.send(signal, Done(False))
    log = orch.events.path.read_text()
    assert "'Water the plants' (" in log and "garden.org): done" in log
    assert f"{derived}: done" not in log


def test_an_approved_flight_plan_that_ran_says_so(tmp_path: Path) -> None:
    from security_agent import Script, call, make_agent

    agent, _ = make_agent(
        tmp_path, Script([[call("write-file", path="report.txt", content="made by cron\n")]]))
    said: list[tuple[str, str]] = []

    class _Emacs:
        def send(self, signal: Signal, event: Event) -> None:
            if isinstance(event, Notice):
                said.append((event.level, event.text))

        def approve(self, request: object) -> bool:
            return False

    agent.attach_faces(_Emacs())
    agent.services["flightplans"].inject = lambda signal: None
    agent.loop.process(Signal(
        payload={"sensor": Keyword("user-input"), "text": "nightly job"},
        meta={"source": Keyword("cron"), "session-id": "job-1", "origin": Keyword("cron")}))
    approvals = tmp_path / "memex" / "system" / "approvals.org"
    approvals.write_text(approvals.read_text().replace("* TODO ", "* APPROVED ", 1))
    agent.loop.process(Signal(payload={"sensor": Keyword("heartbeat"), "unix-time": 1},
                              meta={"source": Keyword("heartbeat")}))
    assert (tmp_path / "work" / "report.txt").exists()
    ((level, text),) = said
    assert level == "info" and text.startswith("Flight Plan ") and " ran: write-file(" in text
    assert f"marked DONE in {approvals}" in text
