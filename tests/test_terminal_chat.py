"""``passepartout chat``: the terminal channel against the fake server and the local model."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import make_config
from test_emacs_channel import RecordingPeer, chat

from passepartout import protocol
from passepartout.faces.terminal.answers import FromStream, Refuse
from passepartout.faces.terminal.channel import TerminalChannel
from passepartout.faces.terminal.chat import run_chat
from passepartout.llm.models import PROVIDER_DEFAULTS, local_installed
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.loop.events import Chunk, Denied, Done, Error, Notice, Reply, ToolCall, ToolResult
from passepartout.server.peer import PeerChannel
from passepartout.signals import Signal
from passepartout.wire import frames

pytest_plugins = ["llm_agent"]


def test_chat_with_the_fake_server(provider_env: FakeLLM, tmp_path: Path) -> None:
    fake = provider_env
    (tmp_path / "memex").mkdir()
    (tmp_path / "memex" / "todo.org").write_text("* TODO water the plants\n")
    fake.reply("Hello from the model.")
    fake.tool_call("grep-search", {"pattern": "TODO"})
    fake.reply("You have one TODO: water the plants.")
    stdin = io.StringIO("hi there\n\nwhat is left to do?\n")
    stdout = io.StringIO()
    assert run_chat(make_config(tmp_path), stdin=stdin, stdout=stdout) == 0
    out = stdout.getvalue()
    assert out.count("Hello from the model.") == 1  # streamed once, not printed again
    assert "[tool] grep-search pattern='TODO'" in out
    assert "[ok] todo.org:1: * TODO water the plants" in out
    assert out.rstrip().endswith("You have one TODO: water the plants.")
    assert fake.request_count == 3
    # the session is resumed next time
    fake.reply("Still here.")
    assert run_chat(make_config(tmp_path), stdin=io.StringIO("again\n"),
                    stdout=io.StringIO()) == 0
    assert [m["role"] for m in fake.requests[-1].messages][:3] == ["system", "user", "assistant"]
    assert fake.requests[-1].messages[1]["content"] == "hi there"


def test_chat_reports_a_failure(provider_env: FakeLLM, tmp_path: Path) -> None:
    provider_env.error(500).error(500)
    stdout = io.StringIO()
    config = make_config(tmp_path, PASSEPARTOUT_FALLBACK_MODELS="openai/gpt-4.1-mini")
    assert run_chat(config, stdin=io.StringIO("hello\n"), stdout=stdout) == 1
    assert "error: No model answered (2 attempts)" in stdout.getvalue()


def test_approval_on_the_terminal() -> None:
    request = ApprovalRequest(Action("tool", "eval", {"code": "1"}), ("high impact",), Signal())
    out = io.StringIO()
    assert TerminalChannel(out, FromStream(io.StringIO("yes\n"))).approve(request) is True
    assert "Allow eval(code='1')" in out.getvalue()
    assert TerminalChannel(io.StringIO(), FromStream(io.StringIO("n\n"))).approve(request) is False
    eof = io.StringIO()
    assert TerminalChannel(eof, FromStream(io.StringIO(""))).approve(request) is False
    assert "no answer" in eof.getvalue()
    piped = io.StringIO()
    assert TerminalChannel(piped, Refuse()).approve(request) is False
    assert "refused: standard input is not a terminal" in piped.getvalue()


def test_unstreamed_reply_is_printed() -> None:
    out = io.StringIO()
    channel = TerminalChannel(out, Refuse())
    channel.send(Signal(), Reply("whole"))
    channel.send(Signal(), Done(False))
    assert out.getvalue() == "whole\n"


@pytest.mark.slow
@pytest.mark.skipif(not local_installed(), reason="the local model is not installed")
def test_chat_with_the_local_model(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in {var for var, _ in PROVIDER_DEFAULTS} and not k.startswith("PASSEPARTOUT")}
    env.update(PASSEPARTOUT_HOME=str(tmp_path / "home"),
               PASSEPARTOUT_CONFIG_DIR=str(tmp_path / "cfg"), MEMEX_DIR=str(tmp_path),
               PASSEPARTOUT_EMBEDDINGS="off", PASSEPARTOUT_MEMORY_IMPORT="off")
    result = subprocess.run(
        [sys.executable, "-m", "passepartout", "chat", "--standalone"],
        input="What is the capital of France?\n", capture_output=True, text=True,
        env=env, timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip()) > 0
    assert "error" not in result.stdout.lower()
    assert "(local model local/smollm2, offline, " in result.stdout  # said, with its time


def test_an_attached_turn_of_the_local_model_says_so() -> None:
    out = io.StringIO()
    channel = TerminalChannel(out, Refuse())
    channel.begin()
    channel.show(protocol.Chunk("s", "t", "Paris."))
    channel.show(protocol.Done("s", "t", model="local/smollm2", local=True))
    channel.begin()
    channel.show(protocol.Chunk("s", "t2", "Rome."))
    channel.show(protocol.Done("s", "t2", model="openai/gpt-4o", local=False))
    text = out.getvalue()
    assert "Paris.\n(local model local/smollm2, offline, " in text
    assert text.count("(local model") == 1


def test_a_command_that_failed_is_said_failed() -> None:
    """A shell command that ran and exited non-zero prints [failed], not [ok]."""
    out = io.StringIO()
    channel = TerminalChannel(out, Refuse())
    channel.show(protocol.ToolFinished("s", "t", "shell", True, "exit code 1\nno such file"))
    channel.show(protocol.ToolFinished("s", "t", "shell", True, "exit code 0\nfine"))
    text = out.getvalue()
    assert "[failed] exit code 1" in text
    assert "[ok] exit code 0" in text


def test_the_standalone_and_the_attached_chat_show_a_turn_alike() -> None:
    """The terminal renders protocol events only: the loop's events of a turn run here
    (--standalone) and the same events sent by the daemon over the wire print the same."""
    events = [Chunk("Let me "), Chunk("look."), ToolCall("shell", {"cmd": "ls"}),
              ToolResult("shell", True, "exit code 1\nno such file"),
              Denied("shell(cmd='rm')", "no"), Notice("saved"), Chunk("It "),
              Reply("It says."), Error("llm-error", "slow"), Done(True)]
    standalone = io.StringIO()
    here = TerminalChannel(standalone, Refuse())
    for event in events:
        here.send(chat(), event)
    server, peer = PeerChannel(), RecordingPeer()
    server.peer_opened(peer)
    server.bind("s1", peer)
    for event in events:
        server.send(chat(), event)
    attached = io.StringIO()
    there = TerminalChannel(attached, Refuse())
    for name, args in peer.calls:
        sent = protocol.decode(name, frames.read_payload(frames.frame(args)[frames.HEAD:]))
        assert sent is not None
        there.show(sent)
    assert attached.getvalue() == standalone.getvalue()
    assert standalone.getvalue() == (
        "Let me look.\n  [tool] shell cmd='ls'\n  [failed] exit code 1 no such file\n"
        "  [refused] shell(cmd='rm'): no\n  (saved)\nIt says.\nerror: slow\n(cancelled)\n")
    assert here.errors == there.errors == 1
    assert here.wait(0) and there.wait(0)


def test_a_daemon_gone_mid_turn_ends_the_turn_with_an_error() -> None:
    out = io.StringIO()
    channel = TerminalChannel(out, Refuse())
    channel.show(protocol.Chunk("s", "t", "half"))
    channel.show(protocol.Disconnected("the daemon stopped"))
    assert out.getvalue() == "half\nerror: the daemon went away: the daemon stopped\n"
    assert channel.errors == 1 and channel.wait(0)
