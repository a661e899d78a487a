"""The faces' channel: one channel reaches every face a person attaches to the daemon,
named for what it is (``agent.faces``), and the daemon's own questions go there."""

from __future__ import annotations

from pathlib import Path

from llm_agent import make_config
from security_agent import Channel

from passepartout import protocol
from passepartout.agent import Agent
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.loop.events import Notice
from passepartout.signals import Keyword, Signal
from passepartout.turn import DAEMON, TurnContext


def test_the_faces_channel_serves_every_face_and_the_daemons_questions(
        tmp_path: Path) -> None:
    agent = Agent(make_config(tmp_path))
    assert agent.faces is None  # no daemon serves faces yet
    faces = Channel()
    agent.attach_faces(faces)
    assert agent.faces is faces
    for name in (*protocol.FACES, DAEMON):
        assert agent.channels[name] is faces, name


def test_the_daemon_asks_on_the_face_attached(tmp_path: Path) -> None:
    agent = Agent(make_config(tmp_path))
    faces = Channel(answer=True)
    agent.attach_faces(faces)
    signal = Signal(payload={"sensor": Keyword("job-held")},
                    turn=TurnContext(face=DAEMON, origin="approval"))
    request = ApprovalRequest(Action("job", "allow", {"id": "n-1"}), ("new job",), signal)
    assert agent.approvals(request) is True
    assert [r.action.name for r in faces.asked] == ["allow"]


def test_the_event_logs_word_goes_to_the_faces_alone(tmp_path: Path) -> None:
    agent = Agent(make_config(tmp_path))
    chat = Channel()  # a chat of this process (``passepartout chat --standalone``)
    agent.register_channel("terminal", chat)
    notice = Notice("cron: done")
    assert agent.notify(notice, faces_only=True) == 0  # no face attached: nobody told
    faces = Channel()
    agent.attach_faces(faces, ("emacs",))
    agent.register_channel("terminal", chat)
    assert agent.notify(notice, faces_only=True) == 1
    assert faces.of("notice") == [{"text": "cron: done", "level": "info"}]
    assert chat.of("notice") == []
    assert agent.notify(Notice("hello")) == 2  # every person's face, this chat too
    assert chat.of("notice") == [{"text": "hello", "level": "info"}]
