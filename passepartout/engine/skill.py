"""The skill record and ``defskill``, the one call a skill makes to register itself."""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from passepartout.errors import SkillError
from passepartout.loop.actions import Action, Prompt, Verdict
from passepartout.signals import Signal
from passepartout.tools import Tool

if TYPE_CHECKING:
    from passepartout.engine.skillhost import SkillHost

Trigger = Callable[[Signal], bool]
PromptBuilder = Callable[[Signal], "Prompt | str"]
Reflex = Callable[[Signal], "list[Action] | Action | None"]
Gate = Callable[[Action, Signal], Verdict]
Augment = Callable[[Signal], str]
Lifecycle = Callable[[], None]


@dataclass
class Skill:
    """A capability: when it applies, what it asks the model, what it forbids."""

    name: str
    priority: int = 10
    depends_on: tuple[str, ...] = ()
    trigger: Trigger | None = None
    prompt: PromptBuilder | None = None
    reflex: Reflex | None = None
    gate: Gate | None = None
    augment: Augment | None = None
    tools: tuple[Tool, ...] = ()
    start: Lifecycle | None = None
    """Run by the engine once the skill is loaded: open what it holds (a store, a
    watcher, threads).  A skill file's top level only declares."""
    stop: Lifecycle | None = None
    """Run by the engine before the skill is unloaded, reloaded or the agent stops:
    close what ``start`` opened."""
    module: str = ""
    shipped: bool = False
    """Set by the loader for a skill of the shipped set (pinned by its hash): its gate
    runs on the lane itself; any other skill's gate runs where its deadline can cut it
    off (:mod:`passepartout.loop.gates`)."""
    extras: dict[str, Any] = field(default_factory=dict)


# The loader sets this while a skill file runs, so ``defskill`` knows where to register.
_collector: contextvars.ContextVar[list[Skill] | None] = contextvars.ContextVar(
    "passepartout_skill_collector", default=None
)


# The host of the skill file being loaded (skills keep it at their top level).
_host: contextvars.ContextVar[SkillHost | None] = contextvars.ContextVar(
    "passepartout_skill_host", default=None
)


def host() -> SkillHost | None:
    """The host of the skill file being loaded: what it may read and register
    (``None`` outside a load, e.g. when a test imports the file by itself)."""
    return _host.get()


def defskill(
    name: str,
    *,
    priority: int = 10,
    depends_on: Iterable[str] = (),
    trigger: Trigger | None = None,
    prompt: PromptBuilder | None = None,
    reflex: Reflex | None = None,
    gate: Gate | None = None,
    augment: Augment | None = None,
    tools: Iterable[Tool] = (),
    start: Lifecycle | None = None,
    stop: Lifecycle | None = None,
    **extras: Any,
) -> Skill:
    """Declare a skill.  Called at the top level of a skill file while it loads."""
    if not name or not isinstance(name, str):
        raise SkillError("defskill needs a name", skill=repr(name))
    skill = Skill(
        name=name,
        priority=int(priority),
        depends_on=tuple(depends_on),
        trigger=trigger,
        prompt=prompt,
        reflex=reflex,
        gate=gate,
        augment=augment,
        tools=tuple(tools),
        start=start,
        stop=stop,
        extras=extras,
    )
    collector = _collector.get()
    if collector is None:
        raise SkillError(
            f"defskill({name!r}) called outside the skill loader; "
            "put the skill in a skills directory or use Registry.add",
            skill=name,
        )
    collector.append(skill)
    return skill
