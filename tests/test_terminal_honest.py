"""``passepartout chat`` asks honestly and shows, not obeys, terminal controls.

Standard input that is not a terminal answers no approval (a later prompt line ``yes``
is a prompt, not a yes) unless ``--answers-from-stdin`` names it; on a terminal the
question is asked on the terminal and type-ahead is discarded; escape sequences, C1 and
bidi controls from a model's text or a tool's output reach the terminal escaped."""

from __future__ import annotations

import io
import logging
import os
import select
import subprocess
import sys
import threading
import time
import unicodedata
from pathlib import Path

import pytest
from fakellm import FakeLLM
from llm_agent import make_config
from passepartout.text import terminal_safe
from terminal_modes import MODES, chat_mode

from passepartout.faces.terminal.answers import FromStream, FromTerminal, Refuse
from passepartout.faces.terminal.chat import TerminalChannel, run_chat
from passepartout.faces.terminal.streams import escaped_output
from passepartout.loop.actions import Action, ApprovalRequest
from passepartout.loop.events import Chunk, Denied, Done, Error, Notice, Reply, ToolCall, ToolResult
from passepartout.signals import Signal

pytest_plugins = ["llm_agent"]

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # sets the clipboard to "rm -rf ~"
CSI = "\x1b[2J\x1b[1;1H"  # clears the screen, cursor home
C1_CSI = "\x9b31m"
BIDI = "\u202eevil\u202c \u2066x\u2069"
OVERWRITE = "safe\rEVIL\x08\x08"
HOSTILE = f"{OSC52} {CSI} {C1_CSI} {BIDI} {OVERWRITE} \x07\x00"
# Raw in the bytes written to the terminal, any of these would act on it.
RAW = [b"\x1b", b"\x07", b"\x08", b"\r", b"\x00", b"\xc2\x9b",
       *(chr(c).encode() for c in (0x202E, 0x202C, 0x2066, 0x2069))]


def _unsafe(char: str) -> bool:
    code = ord(char)
    return ((unicodedata.category(char) in ("Cc", "Cs") and char not in "\n\t")
            or 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069
            or char in "\u061c\u200e\u200f\u2028\u2029")


def _assert_clean(out: bytes) -> None:
    for raw in RAW:
        assert raw not in out, (raw, out)


@pytest.mark.attack
def test_no_character_that_acts_on_a_terminal_passes() -> None:
    every = "".join(map(chr, range(0x110000)))
    shown = terminal_safe(every)
    assert [c for c in shown if _unsafe(c)] == []
    assert terminal_safe(shown) == shown  # escaping twice changes nothing
    assert terminal_safe("a\tb\nc\r\nd") == "a\tb\nc\nd"
    assert terminal_safe(OSC52) == "\\x1b]52;c;cm0gLXJmIH4K\\x07"
    assert terminal_safe(OVERWRITE) == "safe\\rEVIL\\x08\\x08"
    assert terminal_safe(C1_CSI + BIDI) == "\\x9b31m\\u202eevil\\u202c \\u2066x\\u2069"
    assert terminal_safe("é 日本 🙂") == "é 日本 🙂"


@pytest.mark.attack
def test_every_write_of_the_channel_is_escaped() -> None:
    out = io.StringIO()
    channel = TerminalChannel(out, Refuse())
    signal = Signal()
    channel.send(signal, Chunk(HOSTILE))
    channel.send(signal, Reply(HOSTILE + "!", streamed=True))
    channel.send(signal, ToolCall(f"shell{CSI}", {"cmd": HOSTILE}))
    channel.send(signal, ToolResult("shell", True, HOSTILE))
    channel.send(signal, Denied(HOSTILE, HOSTILE))
    channel.send(signal, Notice(HOSTILE))
    channel.send(signal, Error("error", HOSTILE))
    request = ApprovalRequest(Action("tool", "shell", {"cmd": HOSTILE}), (HOSTILE,), Signal())
    assert channel.approve(request) is False
    channel.send(signal, Done(True))
    text = out.getvalue()
    _assert_clean(text.encode())
    assert text.count("\\x1b]52;c;cm0gLXJmIH4K\\x07") >= 6
    assert "refused: standard input is not a terminal" in text


def test_answers_from_a_stream_take_only_yes() -> None:
    request = ApprovalRequest(Action("tool", "eval", {"code": "1"}), ("high impact",), Signal())
    for line, expected in [("yes\n", True), ("Y\n", True), ("n\n", False),
                           ("yess\n", False), ("sure\n", False), ("", False)]:
        out = io.StringIO()
        assert TerminalChannel(out, FromStream(io.StringIO(line))).approve(request) is expected
        assert "Allow eval(code='1')" in out.getvalue()
        assert ("no answer" in out.getvalue()) is (line == "")


class _Pty:
    """A pseudo-terminal: ``path`` is the terminal the chat would ask on, ``type``
    types on its keyboard, ``screen`` is what it has shown."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        self.shown = b""

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def wait_for(self, text: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.shown:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                raise AssertionError(f"{text!r} not shown: {self.shown!r}")
            self.shown += os.read(self.master, 4096)

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


def _ask_on(pty: _Pty, timeout: float = 10.0) -> tuple[threading.Thread, list[bool]]:
    answers: list[bool] = []
    request = ApprovalRequest(Action("tool", "shell", {"cmd": f"rm x{OSC52}"}), ("ask",),
                              Signal())
    channel = TerminalChannel(io.StringIO(), FromTerminal(timeout, path=pty.path))
    thread = threading.Thread(target=lambda: answers.append(channel.approve(request)))
    thread.start()
    return thread, answers


@pytest.mark.attack
def test_the_terminal_answers_only_after_the_question() -> None:
    pty = _Pty()
    try:
        # Typed ahead, before the question: discarded, not an answer.
        pty.type("yes\n")
        select.select([pty.slave], [], [], 5)
        thread, answers = _ask_on(pty)
        pty.wait_for("[y/N] ")
        assert b"\x1b" not in pty.shown.split(b"Allow")[-1]  # the question is escaped
        assert b"\\x1b]52;c;" in pty.shown
        pty.type("no\n")
        thread.join(10)
        assert answers == [False]
        for typed, expected in [("yes\n", True), ("y\n", True), ("maybe\n", False)]:
            pty.shown = b""
            thread, answers = _ask_on(pty)
            pty.wait_for("[y/N] ")
            pty.type(typed)
            thread.join(10)
            assert answers == [expected], typed
        pty.shown = b""
        thread, answers = _ask_on(pty, timeout=0.3)
        thread.join(10)
        pty.wait_for("no answer in time: refused")
        assert answers == [False]
    finally:
        pty.close()


def test_no_terminal_to_ask_on_is_a_no(tmp_path: Path) -> None:
    out = io.StringIO()
    request = ApprovalRequest(Action("tool", "eval", {"code": "1"}), ("ask",), Signal())
    channel = TerminalChannel(out, FromTerminal(1.0, path=str(tmp_path / "no-tty")))
    assert channel.approve(request) is False
    assert "refused: the terminal cannot be opened" in out.getvalue()


def _script(fake: FakeLLM, target: Path) -> None:
    fake.tool_call("write-file", {"path": str(target), "content": "written"})
    fake.tool_call("read-file", {"path": "payload.txt"})
    fake.reply(f"About the file: {HOSTILE}")
    fake.reply("You said yes.")


def _memex(tmp_path: Path) -> Path:
    memex = tmp_path / "memex"
    memex.mkdir(exist_ok=True)
    (memex / "payload.txt").write_text(f"tool output {HOSTILE}\n")
    return memex


@pytest.mark.attack
@pytest.mark.parametrize("mode", MODES)
def test_a_piped_yes_is_a_prompt_not_an_approval(
    fake_llm: FakeLLM, tmp_path: Path, mode: str
) -> None:
    """The real ``passepartout chat``: stdin a pipe, its second line ``yes``."""
    memex = _memex(tmp_path)
    target = memex / "approved.txt"
    _script(fake_llm, target)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PASSEPARTOUT")}
    env.update(
        HOME=str(tmp_path), PASSEPARTOUT_HOME=str(tmp_path / "home"),
        PASSEPARTOUT_CONFIG_DIR=str(tmp_path / "config"), MEMEX_DIR=str(memex),
        PASSEPARTOUT_WORKSPACE=str(memex), PASSEPARTOUT_MODEL="openai/gpt-4o-mini",
        PASSEPARTOUT_EMBEDDINGS="off", PASSEPARTOUT_MEMORY_IMPORT="off",
        OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="sk-fake",
        LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1",
    )
    with chat_mode(mode, env) as args:
        result = subprocess.run(
            [sys.executable, "-m", "passepartout", "chat", *args],
            input=b"write the file\nyes\n", capture_output=True, env=env, cwd=tmp_path,
            timeout=180,
        )
    out = result.stdout
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert not target.exists()
    assert b"[y/N] refused: standard input is not a terminal" in out
    assert b"--answers-from-stdin" in out
    last = fake_llm.requests[-1].messages[-1]  # the "yes" line was a prompt, not an answer
    assert last["role"] == "user" and last["content"].rsplit("\n", 1)[-1] == "yes"
    assert out.rstrip().endswith(b"You said yes.")
    assert not (tmp_path / "home" / "chat_history").exists()  # no history from a pipe
    # The model's text and the tool's output are shown escaped, in the process's bytes.
    _assert_clean(out + result.stderr)
    assert out.count(b"\\x1b]52;c;cm0gLXJmIH4K\\x07") >= 2
    assert b"\\x1b[2J" in out and b"\\x9b31m" in out and b"\\u202eevil" in out


@pytest.mark.attack
def test_answers_from_stdin_when_the_flag_says_so(
    provider_env: FakeLLM, tmp_path: Path
) -> None:
    memex = _memex(tmp_path)
    target = memex / "approved.txt"
    provider_env.tool_call("write-file", {"path": str(target), "content": "written"})
    provider_env.reply("Written.")
    out = io.StringIO()
    config = make_config(tmp_path, PASSEPARTOUT_WORKSPACE=str(memex), MEMEX_DIR=str(memex))
    code = run_chat(config, stdin=io.StringIO("write the file\nyes\n"), stdout=out,
                    answers_from_stdin=True)
    assert code == 0, out.getvalue()
    assert target.read_text() == "written"
    assert "[y/N] " in out.getvalue() and "refused" not in out.getvalue()
    assert out.getvalue().rstrip().endswith("Written.")
    assert provider_env.request_count == 2  # the "yes" line answered; it was no prompt


def test_the_chat_names_its_flag() -> None:
    result = subprocess.run([sys.executable, "-m", "passepartout", "chat", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "--answers-from-stdin" in result.stdout
    assert "refused when standard input is not a terminal" in " ".join(result.stdout.split())


@pytest.mark.attack
def test_the_process_streams_and_log_lines_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    handler = logging.StreamHandler(sys.stderr)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with escaped_output():
            print(f"a library prints {HOSTILE}")
            logging.getLogger("some.library").warning("tool said %s", HOSTILE)
        assert handler.stream is sys.stderr  # restored
    finally:
        root.removeHandler(handler)
    out, err = capsys.readouterr()
    _assert_clean((out + err).encode())
    assert "\\x1b]52;c;" in out and "\\x1b]52;c;" in err
