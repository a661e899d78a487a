"""The one way the suites build an in-process agent, and the one way they wait.

``boot_agent`` makes an agent from a configuration with the skills a suite chooses
(shipped files copied into a folder of the test's own, or every shipped skill), an
optional scripted ``think`` instead of a model, the model layer against whatever the
environment points it at, and a channel that records what it is shown. The helper
modules (llm_agent, security_agent, background_agent, hooks_agent) only say which
skills and settings their suites need.

``wait_for`` polls a condition until it holds or a time limit passes: a test waits on
what it means to see, never for a fixed time.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from passepartout import llm
from passepartout.agent import Agent
from passepartout.config import Config
from passepartout.engine.loader import SHIPPED_SKILLS_DIR
from passepartout.loop.actions import Action, Thought
from passepartout.testing.skilltrust import trust_skills

T = TypeVar("T")


def wait_for(probe: Callable[[], T], timeout: float = 15.0, what: str = "",
             interval: float = 0.02) -> T:
    """The first true value ``probe`` returns; fails, naming ``what`` (or the probe),
    after ``timeout`` seconds without one."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or probe}")
        time.sleep(interval)


def skill_folder(folder: Path, shipped: Iterable[str], *, home: Path | str | None = None,
                 own: dict[str, str] | None = None) -> Path:
    """``folder`` holding copies of the ``shipped`` skill files and the test's ``own``
    skills (file name -> source), these sealed as trusted in ``home`` as the person would.
    Copies, not links: a test may change its copy, never the shipped file."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in shipped:
        shutil.copy(SHIPPED_SKILLS_DIR / name, folder / name)
    for name, source in (own or {}).items():
        (folder / name).write_text(source)
        if home is not None:
            trust_skills(home, folder / name)
    return folder


def boot_agent(config: Config, *, skills: Path | list[Path] | None = None,
               think: Callable[[Thought], list[Action]] | None = None,
               model: bool = False, threads: bool = False,
               channel: Any = None) -> Agent:
    """An agent over ``config``, booted: its skills from ``skills`` (a folder, see
    ``skill_folder``, or folders) or every shipped one; ``think`` instead of a model; ``model``
    installs the model layer first (no warm-up call); ``threads`` starts the loop's
    threads; ``channel`` is registered as the attached client."""
    folders = [skills] if isinstance(skills, Path) else skills
    agent = Agent(config, think=think, skill_dirs=folders)
    if model:
        llm.install(agent, warm=False)
    agent.boot(start_threads=threads)
    if channel is not None:
        agent.attach_faces(channel)
    return agent
