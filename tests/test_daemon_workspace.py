"""The daemon's directory is its own, and a turn's workspace is the one its face named.

A daemon started from some directory (here the checkout) moves to its state directory:
that directory says nothing about where the person works.  A turn sent with
``:workspace`` (Emacs sends the project of the buffer the chat came from) runs its shell
there and says so in the command's reason (what every question and grant shows); a
turn that names none works in the default, the home directory; a workspace that is
not an absolute directory is refused before the turn starts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons
from fakellm import FakeLLM

from passepartout.server.peer import ON_APPROVAL, ON_DONE
from passepartout.wire.client import DaemonError, connect


@pytest.fixture
def daemons(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Daemons]:
    for running in scratch_daemons(tmp_path):
        running.env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake_llm.base_url,
                           PASSEPARTOUT_MODEL="openai/gpt-4o")
        yield running


def _tool_output(fake: FakeLLM) -> str:
    """What the last request fed back to the model from the tool."""
    messages = fake.last_request.body["messages"]
    return "\n".join(json.dumps(m.get("content")) for m in messages if m.get("role") == "tool")


def test_the_daemon_runs_in_its_own_directory(daemons: Daemons) -> None:
    proc = daemons.start()  # from the checkout, as a demo would
    assert Path(os.readlink(f"/proc/{proc.pid}/cwd")) == daemons.home.resolve()


def test_a_turn_works_in_the_workspace_its_face_named(
    daemons: Daemons, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    project = tmp_path / "projects" / "garden"
    project.mkdir(parents=True)
    (project / "beds.txt").write_text("tomatoes\n")
    fake_llm.tool_call("shell", {"cmd": "pwd; ls"})
    fake_llm.reply("In the garden.")
    fake_llm.tool_call("shell", {"cmd": "pwd"})
    fake_llm.reply("At home.")
    daemons.start()
    daemons.wait_ready()
    emacs = connect(daemons.home, environ=daemons.env)
    assert emacs is not None
    with emacs:
        emacs.call("chat-send", "s1", "t1", "where am I?", {"workspace": str(project)})
        emacs.wait_callback(ON_DONE, timeout=60)
        out = _tool_output(fake_llm)
        assert str(project) in out and "beds.txt" in out, out
        emacs.call("chat-send", "s2", "t2", "and now?", None)
        emacs.wait_callback(ON_DONE, timeout=60)
        out = _tool_output(fake_llm)
        assert str(project) not in out
        assert Path(daemons.env["HOME"]).resolve().as_posix() in out, out


def test_a_question_about_a_command_names_its_workspace(
    daemons: Daemons, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    fake_llm.tool_call("shell", {"cmd": "frobnicate --all"})
    fake_llm.reply("Not run.")
    daemons.start()
    daemons.wait_ready()
    emacs = connect(daemons.home, environ=daemons.env)
    assert emacs is not None
    with emacs:
        emacs.call("chat-send", "s1", "t1", "frobnicate", {"workspace": str(project)})
        approval_id, _session, _turn, description, _info = emacs.wait_callback(
            ON_APPROVAL, timeout=60)
        assert f"(workspace {project})" in description, description
        emacs.call("approval-answer", approval_id, None)
        emacs.wait_callback(ON_DONE, timeout=60)


@pytest.mark.parametrize("bad", ["relative/dir", "/no/such/directory", "/"])
def test_a_workspace_that_is_no_absolute_directory_is_refused(
    daemons: Daemons, bad: str
) -> None:
    daemons.start()
    emacs = connect(daemons.home, environ=daemons.env)
    assert emacs is not None
    with emacs, pytest.raises(DaemonError, match="workspace"):
        emacs.call("chat-send", "s1", "t1", "hello", {"workspace": bad})
