"""The attack corpus, run for real through execute_shell.

With an approver that says no, every attack must leave the workspace canary unchanged,
create no marker, leave the protected file alone and open no connection to the listener.
The liveness test approves the same payloads and checks that their effect then happens,
which proves each payload is real and that the gate is what stopped it.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from passepartout.security.shell.tool import ShellApprovalRequest, execute_shell
from shell_attacks import ATTACKS, Attack

from passepartout.security.sandbox import MINIMAL_PATH
from passepartout.security.shell import DEFAULT_PROTECTED, DEFAULT_SECRETS, ShellPolicy

# Every test here is an attack class: run again as an unprivileged user.
pytestmark = pytest.mark.attack

CANARY_TEXT = "canary: must not change\n"
PROTECTED_TEXT = "protected: must not change\n"


class Listener:
    """A TCP listener on 127.0.0.1 that counts connections (and closes them at once)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # shut down by close()
                return
            self.connections += 1
            conn.close()

    def saw_connection(self, timeout: float = 3.0) -> bool:
        """Whether a connection arrived (the accepting thread may lag the client)."""
        deadline = time.monotonic() + timeout
        while self.connections == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.connections > 0

    def close(self) -> None:
        self._stop.set()
        # shutdown() wakes the blocked accept() on Linux, so the thread ends at once.
        self.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=2)
        self.sock.close()


@dataclass
class Scene:
    workspace: Path
    canary: Path
    protected: Path
    secret: Path
    marker: Path
    listener: Listener
    policy: ShellPolicy
    asked: list[ShellApprovalRequest] = field(default_factory=list)

    def render(self, attack: Attack) -> str:
        return (
            attack.cmd.replace("{marker}", str(self.marker))
            .replace("{canary}", str(self.canary))
            .replace("{protected}", str(self.protected))
            .replace("{secret}", str(self.secret))
            .replace("{port}", str(self.listener.port))
        )

    def untouched(self) -> bool:
        return (
            self.canary.read_text() == CANARY_TEXT
            and self.protected.read_text() == PROTECTED_TEXT
            and not self.marker.exists()
            and self.listener.connections == 0
        )


@pytest.fixture
def scene(tmp_path: Path) -> Iterator[Scene]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    canary = workspace / "canary.txt"
    canary.write_text(CANARY_TEXT)
    outside = tmp_path / "outside"
    outside.mkdir()
    protected = outside / "protected.txt"
    protected.write_text(PROTECTED_TEXT)
    secret = outside / "secrets"
    secret.mkdir()
    (secret / "key.txt").write_text("secret: must not be read\n")
    listener = Listener()
    policy = ShellPolicy(
        protected_paths=(*DEFAULT_PROTECTED, str(outside)),
        secret_paths=(*DEFAULT_SECRETS, str(secret)),
        workspace=workspace,
    )
    yield Scene(workspace, canary, protected, secret, workspace / "pwned", listener, policy)
    listener.close()


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
def test_attack_is_stopped(scene: Scene, attack: Attack) -> None:
    def refuse(request: ShellApprovalRequest) -> bool:
        scene.asked.append(request)
        return False

    cmd = scene.render(attack)
    outcome = execute_shell(
        cmd, policy=scene.policy, workspace=scene.workspace, approve=refuse, timeout=10
    )
    assert outcome.verdict.decision == attack.expect, outcome.verdict.reasons
    assert not outcome.ran and outcome.result is None
    assert outcome.status == ("declined" if attack.expect == "ask" else "denied")
    assert outcome.verdict.reasons, "a refusal or a question must say why"
    if attack.expect == "ask":
        assert len(scene.asked) == 1 and scene.asked[0].action == cmd
        assert scene.asked[0].tool == "shell"
    else:
        assert scene.asked == [], "a denied command must not even be offered for approval"
    if attack.effect == "connect":
        assert outcome.verdict.network, "a network attack must be flagged as needing the network"
    assert scene.untouched()


def _runnable(attack: Attack) -> bool:
    return all(shutil.which(tool, path=MINIMAL_PATH) for tool in attack.needs)


LIVE = [
    a
    for a in ATTACKS
    if a.expect == "ask" and a.effect in ("marker", "canary", "connect") and _runnable(a)
]


@pytest.mark.parametrize("attack", LIVE, ids=[a.id for a in LIVE])
def test_attack_payload_is_live_when_approved(scene: Scene, attack: Attack) -> None:
    outcome = execute_shell(
        scene.render(attack),
        policy=scene.policy,
        workspace=scene.workspace,
        approve=lambda request: True,
        timeout=10,
    )
    assert outcome.ran, outcome.message
    if attack.effect == "marker":
        assert scene.marker.exists(), (outcome.result, outcome.verdict.reasons)
    elif attack.effect == "canary":
        assert not scene.canary.exists() or scene.canary.read_text() != CANARY_TEXT
    else:
        assert outcome.network
        assert scene.listener.saw_connection(), outcome.result
    assert scene.protected.read_text() == PROTECTED_TEXT


def test_corpus_is_large_and_covers_every_family() -> None:
    ids = {a.id for a in ATTACKS}
    assert len(ATTACKS) >= 60 and len(ids) == len(ATTACKS)
    for needed in (
        "semicolon",
        "newline",
        "dollar-paren",
        "subshell",
        "redirect-protected",
        "ifs",
        "bash-c",
        "xargs",
        "sudo",
        "absolute-path",
        "homoglyph",
        "git-c-alias",
        "find-exec",
        "rg-pre",
        "sort-o",
        "tar-to-command",
        "python-c",
        "nul-byte",
        "line-continuation",
        "many-then-protected",
        "curl",
        "dev-tcp",
        "pipe-sh",
    ):
        assert needed in ids
