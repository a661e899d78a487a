"""``passepartout chat`` as a face of the daemon: beside an Emacs-like EPC client each
gets its own replies and approvals; it starts the daemon when none runs, which then
outlives it; it exits promptly after end of input; ``--standalone`` still runs the
agent in process, and no mode aborts at exit (status 134).

Everything is real: the daemon and the chat are processes, the model is the fake
OpenAI-protocol server, the Emacs-like client speaks the EPC wire over the socket.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_proc import Daemons, scratch_daemons, wait_for
from fakellm import FakeLLM
from wire_client import PYTHON, ROOT

from passepartout.faces.events import parse_event
from passepartout.faces.face import ApprovalAsked, Chunk, Done, Face, Notice, ToolEvent, TurnError
from passepartout.server.peer import ON_APPROVAL, ON_CHUNK, ON_DONE, ON_TOOL
from passepartout.signals import Keyword, Symbol
from passepartout.wire.client import DaemonError, as_dict, connect

ABORT = 134  # "terminate called without an active exception"


@pytest.fixture
def daemons(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Daemons]:
    for running in scratch_daemons(tmp_path):
        running.env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=fake_llm.base_url,
                           PASSEPARTOUT_MODEL="openai/gpt-4o")
        try:
            yield running
        finally:
            if running.cli("status").returncode == 0:  # one a chat started
                running.cli("stop")


def chat(daemons: Daemons, *args: str, stdin: str = "",
         timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "passepartout", "chat", *args], cwd=ROOT,
                          env=daemons.env, input=stdin, capture_output=True, text=True,
                          timeout=timeout)


def test_chat_and_an_emacs_client_each_get_their_own_replies_and_approvals(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.tool_call("eval", {"code": "1+1"})  # Emacs's first step
    fake_llm.tool_call("eval", {"code": "2+2"})  # the chat's
    fake_llm.reply("Four.")
    fake_llm.reply("Not computed, as you wish.")  # Emacs's, after its no
    daemons.start()
    daemons.wait_ready()
    emacs = connect(daemons.home, environ=daemons.env)
    assert emacs is not None
    with emacs:
        emacs.call("chat-send", "emacs-s", "t1", "compute one and one", None)
        approval_id, session, turn, description, _info = emacs.wait_callback(ON_APPROVAL)
        assert (session, turn) == ("emacs-s", "t1") and "1+1" in description
        result = chat(daemons, "--session", "term", "--answers-from-stdin",
                      stdin="compute two and two\ny\n")
        assert result.returncode == 0, result.stderr
        assert "Allow eval(code='2+2')" in result.stdout
        assert "[ok] 4" in result.stdout and "Four." in result.stdout
        assert "1+1" not in result.stdout and "Not computed" not in result.stdout
        assert emacs.call("approval-answer", approval_id, None) is True  # Emacs says no
        assert emacs.wait_callback(ON_CHUNK)[2] == "Not computed, as you wish."
        assert emacs.wait_callback(ON_DONE)[:2] == ["emacs-s", "t1"]
        seen = [args for name, args in emacs.callbacks if name in (ON_CHUNK, ON_TOOL)]
        assert all(args[0] == "emacs-s" for args in seen)  # none of the chat's events
    listed = daemons.cli("sessions")
    assert listed.returncode == 0
    assert "term" in listed.stdout and "compute two and two" in listed.stdout
    assert "emacs-s" in listed.stdout
    assert daemons.cli("status").returncode == 0  # the daemon outlived the chat
    # A cron job's result reaches an attached face as a notice.
    fake_llm.reply("The backups are fresh.")
    face = Face.attach(daemons.home, environ=daemons.env)
    assert face is not None
    notices: list[Notice] = []
    with face:
        face.listen(lambda e: notices.append(e) if isinstance(e, Notice) else None)
        daemons.write_approved(daemons.memex / "projects" / "jobs.org",
            "* Check the backups\n:PROPERTIES:\n:ID: backups-1\n"
            f":CRON: <{dt.datetime.now():%Y-%m-%d %a %H:%M}>\n:END:\nAre they fresh?\n",
            encoding="utf-8")
        wait_for(lambda: any("backups are fresh" in n.text for n in notices), 30,
                 "the job's result as a notice")


def test_two_clients_on_one_session_each_get_their_own_turns(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    """Two terminal chats on the default session: the second used to take the session's
    events, so the first never heard its reply and hung."""
    fake_llm.tool_call("eval", {"code": "3+3"})  # the first client's step
    fake_llm.reply("Not computed.")  # the first's, after its no (one lane: in order)
    fake_llm.reply("Hello, second.")
    daemons.start()
    daemons.wait_ready()
    first = connect(daemons.home, environ=daemons.env)
    second = connect(daemons.home, environ=daemons.env)
    assert first is not None and second is not None
    with first, second:
        first.call("chat-send", "shared", "f1", "compute three and three", None)
        approval_id, session, turn, _description, _info = first.wait_callback(ON_APPROVAL)
        assert (session, turn) == ("shared", "f1")
        second.call("chat-send", "shared", "s1", "and you?", None)
        assert first.call("approval-answer", approval_id, None) is True
        assert first.wait_callback(ON_DONE)[:2] == ["shared", "f1"]
        assert second.wait_callback(ON_DONE)[:2] == ["shared", "s1"]
        for client, own in ((first, "f1"), (second, "s1")):
            turns = {args[1] for name, args in client.callbacks
                     if name in (ON_CHUNK, ON_TOOL, ON_DONE, ON_APPROVAL)}
            assert turns == {own}
        texts = {turn: "".join(args[2] for name, args in client.callbacks
                               if name == ON_CHUNK)
                 for client, turn in ((first, "f1"), (second, "s1"))}
        assert texts == {"f1": "Not computed.", "s1": "Hello, second."}


def test_chat_starts_the_daemon_it_then_leaves_running(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.reply("Hello from the daemon.")
    fake_llm.reply("Still the same session.")
    daemons.write_approved(daemons.memex / "projects" / "jobs.org",
        "* Weekly review\n:PROPERTIES:\n:ID: review-1\n:CRON: <2030-01-07 Mon 09:00 +1w>\n"
        ":TIER: cognition\n:HOOK: notify\n:END:\nWhat is left?\n", encoding="utf-8")
    first = chat(daemons, stdin="hello\n")
    assert first.returncode == 0, first.stderr
    assert "Hello from the daemon." in first.stdout
    status = daemons.cli("status")
    assert status.returncode == 0 and "running" in status.stdout
    second = chat(daemons, stdin="/model openai/gpt-4o-mini\nand again\n/cost\n")
    assert "This chat now uses openai/gpt-4o-mini" in second.stdout
    assert "Still the same session." in second.stdout
    assert "session terminal: $" in second.stdout and "2 calls" in second.stdout
    assert fake_llm.last_request.model == "gpt-4o-mini"  # /model reached the daemon
    messages = [m["role"] for m in fake_llm.last_request.messages]
    assert messages[:4] == ["system", "user", "assistant", "user"]  # resumed
    assert fake_llm.last_request.messages[1]["content"] == "hello"
    # The command line reads the running daemon's state, then the files without it.
    for where in ("from the running daemon", "from the state files"):
        listed = daemons.cli("sessions")
        assert listed.returncode == 0 and "terminal" in listed.stdout
        assert "hello" in listed.stdout  # the title: the first prompt
        jobs = daemons.cli("cron", "list")
        assert jobs.returncode == 0 and where in jobs.stdout, jobs.stdout
        assert "Weekly review" in jobs.stdout and "2030-01-07" in jobs.stdout
        hooks = daemons.cli("hooks", "list")
        assert hooks.returncode == 0 and "notify" in hooks.stdout
        if where == "from the running daemon":
            assert daemons.cli("stop").returncode == 0


# What the memory skill's embedding thread does with the minilm model: torch calls,
# one after another, in a daemon thread still running when the chat ends.  Finalizing
# the interpreter then ended that thread with pthread_exit inside torch's C++:
# std::terminate, "terminate called without an active exception", status 134.
TORCH_AT_EXIT = """
import os, threading
if os.environ.get("PP_TEST_TORCH_THREAD"):
    import torch
    torch.set_num_threads(1)
    x, w = torch.randn(64, 384), torch.randn(384, 384)

    def spin():
        while True:
            torch.nn.functional.linear(x, w)

    threading.Thread(target=spin, daemon=True).start()
"""


def native_thread_env(daemons: Daemons, tmp_path: Path) -> dict[str, str]:
    """The chat's environment with a torch thread running (torch is the minilm extra,
    installed by ``make minilm``; without it the chat runs as it is)."""
    if importlib.util.find_spec("torch") is None:
        return dict(daemons.env)
    shim = tmp_path / "torch-shim"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(TORCH_AT_EXIT)
    return {**daemons.env, "PP_TEST_TORCH_THREAD": "1",
            "PYTHONPATH": f"{shim}:{daemons.env['PYTHONPATH']}"}


def test_chat_exits_promptly_after_end_of_input_and_never_aborts(
    daemons: Daemons, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.reply("Quick.")
    daemons.start()
    daemons.wait_ready()
    proc = subprocess.Popen([PYTHON, "-m", "passepartout", "chat"], cwd=ROOT,
                            env=native_thread_env(daemons, tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write("hi\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "Quick."
    closed = time.monotonic()
    proc.stdin.close()
    status = proc.wait(30)
    took = time.monotonic() - closed
    errors = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert "terminate called" not in errors
    assert status == 0, (status, errors[-2000:])
    assert took < 1.0, f"{took:.2f} s to exit after end of input"
    assert daemons.cli("status").returncode == 0  # the daemon runs on


def test_standalone_still_runs_the_agent_in_process_and_never_aborts(
    daemons: Daemons, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.reply("From this process.")
    result = subprocess.run([PYTHON, "-m", "passepartout", "chat", "--standalone"], cwd=ROOT,
                            env=native_thread_env(daemons, tmp_path), input="hello\n",
                            capture_output=True, text=True, timeout=120)
    assert "terminate called" not in result.stderr
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert "From this process." in result.stdout
    assert daemons.cli("status").returncode == 3  # no daemon was started


def test_the_face_types_every_callback_and_drops_malformed_ones() -> None:
    assert parse_event(ON_CHUNK, ["s", "t", "hi"]) == Chunk("s", "t", "hi")
    tool = parse_event(ON_TOOL, ["s", "t", [Keyword("event"), Symbol("tool-result"),
                                            Keyword("name"), "shell", Keyword("ok"), True,
                                            Keyword("output"), "done"]])
    assert tool == ToolEvent("s", "t", "tool-result", "shell", ok=True, output="done")
    asked = parse_event(ON_APPROVAL, ["id1", "s", "t", "shell(cmd='ls')",
                                      [Keyword("tool"), "shell",
                                       Keyword("args"), [Keyword("cmd"), "ls"]]])
    assert isinstance(asked, ApprovalAsked)
    assert asked.tool == "shell" and asked.info["args"] == {"cmd": "ls"}
    assert parse_event("passepartout--on-error", ["s", "t", "boom", "it broke"]) == \
        TurnError("s", "t", "boom", "it broke")
    assert parse_event(ON_DONE, ["s", "t", [Keyword("cancelled"), True]]) == Done("s", "t", True)
    assert parse_event("passepartout--on-notify", [Symbol("warning"), "careful"]) == \
        Notice("warning", "careful")
    assert parse_event(ON_TOOL, ["s", "t", [Keyword("odd")]]) is None  # a broken plist
    assert parse_event("passepartout--unknown", []) is None
    assert as_dict(None) == {}


def test_the_chat_reattaches_to_a_daemon_that_is_back_and_says_so(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    fake_llm.reply("Before.")
    fake_llm.reply("After the restart.")
    daemons.start()
    daemons.wait_ready()
    proc = subprocess.Popen([PYTHON, "-m", "passepartout", "chat"], cwd=ROOT, env=daemons.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None

    def say(line: str, until: str) -> list[str]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        seen = [proc.stdout.readline()]
        while until not in seen[-1]:
            assert seen[-1], f"{until!r} never shown: {seen}"
            seen.append(proc.stdout.readline())
        return seen

    try:
        say("first", "Before.")
        assert daemons.cli("stop").returncode == 0
        daemons.start()  # back, as a service manager or `passepartout daemon --detach` does
        daemons.wait_ready()
        shown = say("second", "After the restart.")
        assert any("(reconnected to the daemon)" in line for line in shown)
        assert daemons.cli("stop").returncode == 0  # and now it stays away
        shown = say("third", "was not sent")
        assert any("the daemon went away" in line for line in shown)
        proc.stdin.close()
        assert proc.wait(30) == 1  # a prompt was lost: said, and the status says it
        assert daemons.cli("status").returncode == 3  # the chat did not start one
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()


def test_a_prompt_too_large_for_a_frame_is_refused_and_the_face_goes_on(
    daemons: Daemons, fake_llm: FakeLLM
) -> None:
    """Its six-digit length overflowed, the daemon misread the stream and closed the
    connection: every later call of that face failed."""
    fake_llm.reply("Still here.")
    daemons.start()
    daemons.wait_ready()
    face = Face.attach(daemons.home, environ=daemons.env)
    assert face is not None
    with face:
        with pytest.raises(DaemonError) as refused:
            face.send("big", "x" * (9 * 2**20))
        assert refused.value.kind == "too-large" and "at most 8 MB" in refused.value.message
        turn = face.send("big", "and now?")
        text = "".join(e.text for e in turn.events(60) if isinstance(e, Chunk))
        assert text == "Still here."
