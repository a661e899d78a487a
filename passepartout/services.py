"""What the skills of one agent share: typed services, one attribute each.

The core reads them as attributes (``agent.services.memory`` is a ``MemoryStore`` or
``None``).  The old spelling ``agent.services["memory"]`` still reads and writes the
same attribute (``"emacs-eval"`` is ``emacs_eval``), so a skill that publishes by name
keeps working; a name that is not declared here is kept aside in :attr:`others`, for
what one skill shares with another and the core never reads.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.background.service import Background
    from passepartout.events.heartbeat import HeartbeatBus
    from passepartout.events.hookreplies import HookReplies
    from passepartout.events.orchestrator import Orchestrator
    from passepartout.llm.budget import Budgets
    from passepartout.llm.ledger import Ledger
    from passepartout.llm.sessions import SessionStore
    from passepartout.llm.think import ModelLayer
    from passepartout.memory.store import MemoryStore
    from passepartout.security.approvals.flightplan import FlightPlanRunner
    from passepartout.security.guard import Security
    from passepartout.security.trust.modeljobs import ModelJobs
    from passepartout.security.vault import Vault
    from passepartout.server.focus import FocusHolder
    from passepartout.server.peer import PeerChannel


@dataclass(eq=False)
class Services(MutableMapping[str, Any]):
    """Every shared service, ``None`` until the skill that provides it has loaded."""

    agent: Agent | None = None
    memory: MemoryStore | None = None  # the memory skill, once its store is open
    memory_ready: threading.Event | None = None  # set once the store opened (or failed)
    llm: ModelLayer | None = None  # the model layer (chat skill)
    ledger: Ledger | None = None
    sessions: SessionStore | None = None
    budgets: Budgets | None = None
    security: Security | None = None  # the policy skill
    vault: Vault | None = None
    orchestrator: Orchestrator | None = None  # the events skill
    heartbeat: HeartbeatBus | None = None
    hook_replies: HookReplies | None = None  # the ``hook`` channel (the events skill)
    flightplans: FlightPlanRunner | None = None  # the flightplans skill
    model_jobs: ModelJobs | None = None
    focus: FocusHolder | None = None  # the server: where the person is in Emacs
    peer: PeerChannel | None = None  # the server's channel to every attached face
    emacs_eval: Callable[[str], str] | None = None
    background: Background | None = None  # the background skills' shared service
    hooks: Any = None  # the hooks skill's kit (a class of a skill file)
    classifier: Any = None  # a skill's intent classifier, when one is set
    others: dict[str, Any] = field(default_factory=dict)

    # -- the mapping spelling ----------------------------------------------------------

    @staticmethod
    def _field(name: str) -> str | None:
        attr = name.replace("-", "_")
        return attr if attr in _DECLARED else None

    def __getitem__(self, name: str) -> Any:
        attr = self._field(name)
        value = getattr(self, attr) if attr else self.others.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: Any) -> None:
        attr = self._field(name)
        if attr:
            setattr(self, attr, value)
        else:
            self.others[name] = value

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self[name] = None
        self.others.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        for attr in _DECLARED:
            if getattr(self, attr) is not None:
                yield attr.replace("_", "-")
        yield from (k for k, v in self.others.items() if v is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        attr = self._field(name)
        return (getattr(self, attr) if attr else self.others.get(name)) is not None


_DECLARED = tuple(f.name for f in dataclasses.fields(Services) if f.name != "others")
