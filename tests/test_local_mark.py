"""Every face says when the small offline model answered, with the time it took (Emacs
on the reply's heading; the TUI, ACP clients and the terminal after the reply)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from passepartout.faces.acp.agent import AcpAgent, _Running
from passepartout.faces.answered import local_mark
from passepartout.protocol import Chunk, Done, Event


def test_only_the_local_models_reply_is_marked() -> None:
    local = Done("s", "t", model="local/smollm2", local=True)
    assert local_mark(local, 21.04) == "(local model local/smollm2, offline, 21.0 s)"
    assert local_mark(Done("s", "t", model="openai/gpt-4o", local=False), 2.0) is None
    assert local_mark(Done("s", "t", cancelled=True, model="local/smollm2", local=True),
                      2.0) is None
    assert local_mark(Done("s", "t"), 2.0) is None


@dataclass
class _Turn:
    """A turn whose events are already all there (what ``Face.Turn`` gives in order)."""

    events: list[Event]
    turn: str = "t1"
    on_event: Any = None
    finished: bool = False

    def next(self, timeout: float) -> Event | None:
        if not self.events:
            self.finished = True
            return None
        event = self.events.pop(0)
        self.finished = not self.events
        return event


@dataclass
class _Client:
    updates: list[Any] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any) -> None:
        self.updates.append(update)


def _acp_text(done: Done) -> str:
    client = _Client()
    agent = AcpAgent(face=None, conn=client)  # type: ignore[arg-type]
    running = _Running(turn=_Turn([Chunk("s", "t1", "Venus."), done]))  # type: ignore[arg-type]
    reason = asyncio.run(agent._follow("s", running))
    assert reason == "end_turn"
    return "".join(u.content.text for u in client.updates)


def test_an_acp_client_is_told_the_local_model_answered() -> None:
    text = _acp_text(Done("s", "t1", model="local/smollm2", local=True))
    assert text.startswith("Venus.\n\n(local model local/smollm2, offline, ")
    assert _acp_text(Done("s", "t1", model="openai/gpt-4o", local=False)) == "Venus."
