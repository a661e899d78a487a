"""A real agent with the hooks skill, against the fake model, and what the shipped hook
tests look at: events.org, the heading's file, memory's snapshots, the notifications."""

from __future__ import annotations

from pathlib import Path

from agents import boot_agent, skill_folder, wait_for

from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.loop.actions import ApprovalRequest
from passepartout.loop.events import Event, Notice
from passepartout.signals import Signal
from passepartout.testing.jobapproval import approve_jobs, approve_text

SKILLS = ("policy.py", "dispatcher.py", "events.py", "chat.py", "memory.py", "hooks.py")


class Client:
    """An attached client: it records what it is told and answers no approval."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []

    def send(self, signal: Signal, event: Event) -> None:
        if isinstance(event, Notice):
            self.notes.append((event.level, event.text))

    def approve(self, request: ApprovalRequest) -> bool:
        return False


def make_agent(tmp_path: Path, env: dict[str, str], files: dict[str, str],
               **settings: str) -> Agent:
    """An agent over a memex holding ``files`` (paths under MEMEX_DIR)."""
    memex = Path(env["MEMEX_DIR"])
    for name, text in files.items():
        (memex / name).parent.mkdir(parents=True, exist_ok=True)
        (memex / name).write_text(text, encoding="utf-8")
    approve_jobs(env["PASSEPARTOUT_HOME"], memex)  # as the person would
    env = {**env, "PASSEPARTOUT_MODEL": "openai/gpt-4o",
           "PASSEPARTOUT_MODEL_COGNITION": "openai/gpt-4o-mini",
           "PASSEPARTOUT_STREAM": "0", "PASSEPARTOUT_EMBEDDINGS": "off", **settings}
    config = Config.from_mapping(env, config_dir=Path(env["PASSEPARTOUT_CONFIG_DIR"]))
    agent = boot_agent(config, skills=skill_folder(tmp_path / "skills", SKILLS), model=True)
    assert agent.status()["skills"]["hooks"] == "ready", agent.status()
    orchestrator = agent.services["orchestrator"]
    assert orchestrator.ready.wait(10)
    assert agent.registry.exports("memory").memory_SERVICE.imported.wait(10)
    wait_for(lambda: orchestrator.watching)
    return agent


def events_text(env: dict[str, str]) -> str:
    path = Path(env["PASSEPARTOUT_HOME"]) / "events.org"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def audit_text(env: dict[str, str]) -> str:
    path = Path(env["PASSEPARTOUT_HOME"]) / "audit.org"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def edit(path: Path, old: str, new: str, env: dict[str, str] | None = None) -> None:
    """An edit on disk, as another editor makes it (with ``env``, one the person
    approved: its headings are approved before it is written)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    after = text.replace(old, new, 1)
    if env is not None:
        approve_text(env["PASSEPARTOUT_HOME"], env["MEMEX_DIR"], path, after)
    path.write_text(after, encoding="utf-8")
