"""execute_shell: positive controls run for real; approvals are explicit; network needs a grant."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from passepartout.security.shell.tool import ShellApprovalRequest, execute_shell

from passepartout.security.shell import ShellPolicy


def never(request: ShellApprovalRequest) -> bool:
    raise AssertionError(f"an allowed command must not ask: {request}")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("x one\ny two\nx three\n")
    return workspace


def test_ls_runs(ws: Path) -> None:
    outcome = execute_shell("ls", policy=ShellPolicy(), workspace=ws, approve=never)
    assert outcome.status == "ran" and not outcome.asked
    assert outcome.result is not None and outcome.result.stdout == "notes.txt\n"


def test_grep_pipe_wc(ws: Path) -> None:
    outcome = execute_shell(
        "grep -n x notes.txt | wc -l", policy=ShellPolicy(), workspace=ws, approve=never
    )
    assert outcome.result is not None and outcome.result.stdout.strip() == "2"


def test_and_list(ws: Path) -> None:
    outcome = execute_shell("echo a && echo b", policy=ShellPolicy(), workspace=ws, approve=never)
    assert outcome.result is not None and outcome.result.stdout == "a\nb\n"
    assert outcome.message == "exit code 0"


def _git(ws: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True)


def test_git_status_in_a_repository(ws: Path) -> None:
    _git(ws, "init", "-q", "-b", "main")
    outcome = execute_shell("git status", policy=ShellPolicy(), workspace=ws, approve=never)
    assert outcome.result is not None, outcome.message
    assert outcome.result.exit_code == 0, outcome.result.stderr
    assert "On branch main" in outcome.result.stdout
    assert "notes.txt" in outcome.result.stdout


def test_repository_config_cannot_run_programs_on_git_status(ws: Path) -> None:
    _git(ws, "init", "-q")
    marker = ws / "fsmonitor-ran"
    _git(ws, "config", "core.fsmonitor", f"touch {marker}; false")
    subprocess.run(["git", "status"], cwd=ws, capture_output=True)
    assert marker.exists()  # control: this repository really runs a program on `git status`
    marker.unlink()
    outcome = execute_shell("git status", policy=ShellPolicy(), workspace=ws, approve=never)
    assert outcome.status == "ran" and not outcome.asked
    assert not marker.exists()


def test_ask_runs_only_on_explicit_true(ws: Path) -> None:
    requests: list[ShellApprovalRequest] = []

    def yes(request: ShellApprovalRequest) -> bool:
        requests.append(request)
        return True

    outcome = execute_shell("touch made", policy=ShellPolicy(), workspace=ws, approve=yes)
    assert outcome.status == "ran" and outcome.asked
    assert (ws / "made").exists()
    assert requests[0].tool == "shell" and requests[0].action == "touch made"
    assert any("touch is not on the allowlist" in r for r in requests[0].reasons)
    assert not requests[0].network


@pytest.mark.parametrize("answer", [False, None, 1, "yes", [True]])
def test_anything_but_true_is_a_refusal(ws: Path, answer: object) -> None:
    outcome = execute_shell(
        "touch made",
        policy=ShellPolicy(),
        workspace=ws,
        approve=lambda request: answer,  # type: ignore[arg-type, return-value]
    )
    assert outcome.status == "declined" and outcome.result is None
    assert not (ws / "made").exists()


def test_approver_exception_is_a_refusal(ws: Path) -> None:
    def broken(request: ShellApprovalRequest) -> bool:
        raise TimeoutError("Emacs went away")

    outcome = execute_shell("touch made", policy=ShellPolicy(), workspace=ws, approve=broken)
    assert outcome.status == "declined"
    assert "Emacs went away" in outcome.message
    assert not (ws / "made").exists()


def test_deny_never_asks_and_never_runs(ws: Path) -> None:
    outcome = execute_shell(
        "echo 'touch made' | sh", policy=ShellPolicy(), workspace=ws, approve=never
    )
    assert outcome.status == "denied" and not outcome.asked
    assert "piped into a shell" in outcome.message
    assert not (ws / "made").exists()


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    sock.setblocking(False)
    return sock


def _received(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def test_network_is_granted_only_with_the_approval(ws: Path) -> None:
    with _listener() as sock:
        port = sock.getsockname()[1]
        # Approved, but the analysis did not see the network: it stays closed.
        sneaky = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"
        outcome = execute_shell(sneaky, policy=ShellPolicy(), workspace=ws, approve=lambda r: True)
        assert outcome.status == "ran" and not outcome.network
        assert outcome.result is not None and outcome.result.exit_code != 0
        assert not _received(sock)
        # Flagged as network and approved: the request said so, and the grant opens it.
        seen: list[ShellApprovalRequest] = []
        flagged = f"echo hi > /dev/tcp/127.0.0.1/{port}"
        outcome = execute_shell(
            flagged,
            policy=ShellPolicy(),
            workspace=ws,
            approve=lambda r: seen.append(r) or True,
        )
        assert seen[0].network and outcome.network and outcome.status == "ran"
        assert _received(sock)


def test_sandbox_unavailable_runs_nothing(ws: Path) -> None:
    outcome = execute_shell(
        "ls", policy=ShellPolicy(), workspace=ws, approve=never, bwrap="/nonexistent/bwrap"
    )
    assert outcome.status == "unavailable" and outcome.result is None
    assert "apt-get install bubblewrap" in outcome.message


def test_timeout_and_cap_are_reported(ws: Path) -> None:
    outcome = execute_shell(
        "yes", policy=ShellPolicy(), workspace=ws, approve=lambda r: True, output_cap=1000
    )
    assert outcome.result is not None and outcome.result.truncated
    assert "output truncated" in outcome.message
    outcome = execute_shell(
        "sleep 20", policy=ShellPolicy(), workspace=ws, approve=lambda r: True, timeout=0.5
    )
    assert outcome.result is not None and outcome.result.timed_out
    assert "timed out" in outcome.message
