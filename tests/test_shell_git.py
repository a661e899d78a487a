"""git against an untrusted repository: read-only subcommands with declared options run
unasked in a clean repository; a repository whose own config names programs asks, and
nothing it names runs while the person has not said yes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from passepartout.security.shell.git_hardening import GIT_ENV, repository_risks, risky_key
from passepartout.security.shell.tool import ShellApprovalRequest, execute_shell

from passepartout.security.shell import ShellPolicy, analyze

READ_ONLY = [
    "git status",
    "git status -sb",
    "git diff",
    "git diff --stat HEAD",
    "git log --oneline -5",
    "git log -p -n 1",
    "git log -n 3 --format=%h --since=2.weeks",
    "git show --name-only HEAD",
    "git show HEAD:f.txt",
    "git rev-parse --abbrev-ref HEAD",
    "git ls-files -z",
    "git blame -L 1,1 f.txt",
    "git grep -n line",
    "git branch --list",
    "git --no-pager log --graph --decorate --all",
]


def _git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env=env,
    )


def _repo(path: Path) -> Path:
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    (path / "f.txt").write_text("line\n")
    _git(path, "add", "f.txt")
    _git(path, "commit", "-qm", "first")
    (path / "f.txt").write_text("line\nchanged\n")
    return path


def _never(request: ShellApprovalRequest) -> bool:
    return False


@pytest.mark.parametrize(
    ("cmd", "reason"),
    [
        ("git log --output=x", "writes a file"),
        ("git log --outp=x", "--output (writes a file)"),
        ("git diff --ext-diff", "runs an external diff program"),
        ("git log -p --textconv", "runs textconv programs"),
        ("git cat-file --filters HEAD:f.txt", "runs filter programs"),
        ("git grep -O x", "pager"),
        ("git log --show-signature", "runs gpg"),
        ("git -c core.pager=x log", "can set programs git runs"),
        ("git --config-env=core.pager=X log", "can set programs git runs"),
        ("git -C /tmp status", "changes what git reads or runs"),
        ("git --git-dir=/tmp/x status", "changes what git reads or runs"),
        ("git --exec-path=/tmp log", "changes what git reads or runs"),
        ("git -p log", "changes what git reads or runs"),
        ("git lg", "not a read-only git command"),
        ("git commit -m x", "not a read-only git command"),
        ("git status --zzz", "unknown option"),
        ("git fetch", "network"),
    ],
)
def test_git_options_that_write_or_run_ask(cmd: str, reason: str, tmp_path: Path) -> None:
    verdict = analyze(cmd, ShellPolicy(workspace=tmp_path))
    assert verdict.decision == "ask"
    assert any(reason in r for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(
    ("key", "risky"),
    [
        ("core.repositoryformatversion", False),
        ("remote.origin.url", False),
        ("branch.main.merge", False),
        ("core.fsmonitor", False),  # neutralised by GIT_ENV
        ("core.hookspath", False),  # neutralised by GIT_ENV
        ("diff.renames", False),
        ("diff.evil.xfuncname", False),
        ("diff.evil.textconv", True),
        ("diff.evil.command", True),
        ("diff.external", True),
        ("filter.lfs.clean", True),
        ("filter.evil.process", True),
        ("include.path", True),
        ("includeif.gitdir:/x.path", True),
        ("alias.st", True),
        ("core.worktree", True),
        ("credential.https://x.helper", True),
        ("merge.evil.driver", True),
        ("submodule.x.update", True),
        ("made.up", True),
    ],
)
def test_config_keys(key: str, risky: bool) -> None:
    assert risky_key(key) is risky


def test_clean_clone_runs_read_only_git_unasked(tmp_path: Path) -> None:
    origin = _repo(tmp_path / "origin")
    _git(origin, "commit", "-qam", "second")
    _git(tmp_path, "clone", "-q", str(origin), "ws")
    ws = tmp_path / "ws"
    (ws / "f.txt").write_text("line\nchanged\nagain\n")
    assert repository_risks(ws) == []
    for cmd in READ_ONLY:
        outcome = execute_shell(cmd, policy=ShellPolicy(), workspace=ws, approve=_never)
        assert outcome.verdict.decision == "allow", (cmd, outcome.verdict.reasons)
        assert outcome.result is not None and outcome.result.exit_code == 0, (
            cmd,
            outcome.message,
            outcome.result and outcome.result.stderr,
        )


def _malicious(ws: Path, marks: Path) -> dict[str, Path]:
    """A repository whose own config and attributes name programs for read-only git."""
    _repo(ws)
    markers = {n: marks / n for n in ("ext", "textconv", "clean", "fsmonitor", "hook", "pager")}

    def touch(name: str) -> str:
        return f"touch {markers[name]}"

    _git(ws, "config", "diff.external", touch("ext"))
    _git(ws, "config", "diff.evil.textconv", f"sh -c '{touch('textconv')}; cat \"$1\"' -")
    _git(ws, "config", "filter.evil.clean", f"sh -c '{touch('clean')}; cat'")
    _git(ws, "config", "filter.evil.smudge", "cat")
    _git(ws, "config", "core.fsmonitor", f"{touch('fsmonitor')}; false")
    _git(ws, "config", "core.pager", touch("pager"))
    (ws / ".gitattributes").write_text("* diff=evil filter=evil\n")
    hook = ws / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\n{touch('hook')}\n")
    hook.chmod(0o755)
    # Touch the file so git status must run the clean filter to compare it.
    os.utime(ws / "f.txt", (1, 1))
    return markers


@pytest.mark.attack
def test_malicious_repository_runs_nothing_unasked(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    ws = tmp_path / "ws"
    markers = _malicious(ws, marks)
    # Control: git run plainly in this repository runs the programs it names.
    subprocess.run(["git", "status"], cwd=ws, capture_output=True)
    subprocess.run(["git", "diff"], cwd=ws, capture_output=True)
    subprocess.run(["git", "-c", "diff.external=", "log", "-p"], cwd=ws, capture_output=True)
    ran = {n for n, p in markers.items() if p.exists()}
    assert {"ext", "textconv", "clean", "fsmonitor"} <= ran, ran
    for p in markers.values():
        p.unlink(missing_ok=True)
    asked: list[str] = []

    def refuse(request: ShellApprovalRequest) -> bool:
        asked.append(request.action)
        return False

    for cmd in READ_ONLY:
        outcome = execute_shell(cmd, policy=ShellPolicy(), workspace=ws, approve=refuse)
        assert outcome.verdict.decision == "ask", cmd
        assert any("git config" in r for r in outcome.verdict.reasons), outcome.verdict.reasons
        assert not outcome.ran
    assert len(asked) == len(READ_ONLY)
    assert not [n for n, p in markers.items() if p.exists()]


@pytest.mark.attack
def test_hardened_environment_neutralises_what_it_can(tmp_path: Path) -> None:
    """What GIT_ENV switches off (fsmonitor, hooks, pager, editor) does not ask, and
    does not run either, inside the sandbox or out of it."""
    ws = _repo(tmp_path / "ws")
    marker = tmp_path / "ran"
    _git(ws, "config", "core.fsmonitor", f"touch {marker}; false")
    _git(ws, "config", "core.hooksPath", str(tmp_path))
    _git(ws, "config", "core.pager", f"touch {marker}")
    _git(ws, "config", "core.editor", f"touch {marker}")
    (tmp_path / "post-index-change").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (tmp_path / "post-index-change").chmod(0o755)
    os.utime(ws / "f.txt", (1, 1))
    outcome = execute_shell("git status", policy=ShellPolicy(), workspace=ws, approve=_never)
    assert outcome.verdict.decision == "allow", outcome.verdict.reasons
    assert outcome.ran and not marker.exists()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **GIT_ENV}
    subprocess.run(["git", "status"], cwd=ws, env=env, capture_output=True, check=True)
    subprocess.run(["git", "diff"], cwd=ws, env=env, capture_output=True, check=True)
    assert not marker.exists()
    subprocess.run(["git", "status"], cwd=ws, capture_output=True)
    assert marker.exists()  # control: without the hardening this repository runs it


def test_git_in_a_subdirectory_and_a_worktree_file(tmp_path: Path) -> None:
    ws = _repo(tmp_path / "ws")
    sub = ws / "sub"
    sub.mkdir()
    _git(ws, "config", "diff.evil.textconv", "cat")
    assert analyze("git diff", ShellPolicy(workspace=sub)).decision == "ask"
    linked = tmp_path / "linked"
    _git(ws, "worktree", "add", "-q", str(linked))
    assert analyze("git log", ShellPolicy(workspace=linked)).decision == "ask"
    _git(ws, "config", "--unset", "diff.evil.textconv")
    assert analyze("git log", ShellPolicy(workspace=linked)).decision == "allow"


def test_cd_then_git_checks_the_repository_there(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    evil = _repo(tmp_path / "evil")
    _git(evil, "config", "filter.x.clean", "cat")
    assert analyze("git status", ShellPolicy(workspace=ws)).decision == "allow"
    assert analyze(f"cd {evil} && git status", ShellPolicy(workspace=ws)).decision == "ask"
