"""File tools: paths that cannot escape, protected places (also against creating them),
and atomic writes.  Each case checks the real outcome on disk."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from passepartout.security import files as files_mod
from passepartout.security.files import FileToolError, read_text, write_text
from passepartout.security.files.paths import PathRules, denial


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    work = home / "proj"
    config = home / ".config" / "passepartout"
    state = home / ".local" / "state" / "passepartout"
    for d in (work, config, state, work / ".git" / "hooks"):
        d.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (home / ".bashrc").write_text("original rc\n")
    (config / ".env").write_text("GITHUB_TOKEN=ghp_abcdef123456\n")
    return {"home": home, "work": work, "config": config, "state": state}


def rules_for(place: dict[str, Path]) -> PathRules:
    return PathRules.build(
        protected=[place["config"], place["state"]],
        secret=[place["config"]],
        workspace=place["work"],
    )


def test_ordinary_write_and_read_in_the_workspace(place: dict[str, Path]) -> None:
    rules = rules_for(place)
    result = write_text("notes/todo.txt", "hello\n", rules)
    assert result.created and result.path == place["work"] / "notes" / "todo.txt"
    assert read_text("notes/todo.txt", rules) == "hello\n"
    assert not [p for p in (place["work"] / "notes").iterdir() if p.name.endswith(".tmp")]


ATTACKS = [
    ("~/.bashrc", "shell start-up file"),
    ("../.bashrc", "shell start-up file"),
    ("./sub/../../.bashrc", "shell start-up file"),
    ("/proc/self/root{home}/.bashrc", "/proc"),
    ("/proc/self/cwd/x.txt", "/proc"),
    (".git/hooks/pre-commit", ".git/hooks"),
    ("{home}/other/.git/hooks/post-checkout", ".git/hooks"),
    ("{config}/.env", "secrets"),
    ("{config}/new-skill.py", "secrets"),
    ("{state}/memory.db", "holds secrets"),
    ("~/.zshrc", "shell start-up file"),
    ("~/.ssh/authorized_keys", "secrets"),
]


@pytest.mark.parametrize(("raw", "why"), ATTACKS)
def test_protected_targets_are_refused_and_nothing_is_written(
    place: dict[str, Path], raw: str, why: str
) -> None:
    raw = raw.format(home=place["home"], config=place["config"], state=place["state"])
    before = _snapshot(place["home"])
    with pytest.raises(FileToolError, match=why.replace("/", "\\/").replace(".", "\\.")):
        write_text(raw, "echo pwned\n", rules_for(place))
    assert _snapshot(place["home"]) == before
    assert (place["home"] / ".bashrc").read_text() == "original rc\n"


def test_a_symlink_at_the_target_is_judged_by_where_it_points(place: dict[str, Path]) -> None:
    link = place["work"] / "innocent.txt"
    link.symlink_to(place["home"] / ".bashrc")
    with pytest.raises(FileToolError, match="start-up file"):
        write_text("innocent.txt", "pwned", rules_for(place))
    assert (place["home"] / ".bashrc").read_text() == "original rc\n"


def test_a_symlink_planted_at_the_parent_cannot_lead_out(place: dict[str, Path]) -> None:
    (place["work"] / "cfg").symlink_to(place["config"])
    with pytest.raises(FileToolError):
        write_text("cfg/skills.py", "import os", rules_for(place))
    assert not (place["config"] / "skills.py").exists()
    (place["work"] / "hooks").symlink_to(place["work"] / ".git" / "hooks")
    with pytest.raises(FileToolError, match="git/hooks"):
        write_text("hooks/pre-push", "#!/bin/sh", rules_for(place))
    assert list((place["work"] / ".git" / "hooks").iterdir()) == []


def test_reading_secrets_is_refused(place: dict[str, Path]) -> None:
    with pytest.raises(FileToolError, match="secrets"):
        read_text(str(place["config"] / ".env"), rules_for(place))
    with pytest.raises(FileToolError, match="/proc"):
        read_text("/proc/self/environ", rules_for(place))


def test_a_parent_swapped_for_a_symlink_after_the_check_is_caught(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = rules_for(place)
    target = place["work"] / "d" / "f.txt"
    (place["work"] / "d").mkdir()
    original_denial = files_mod.denial

    def swap_after_check(raw: str, r: PathRules, *, writing: bool):  # type: ignore[no-untyped-def]
        verdict = original_denial(raw, r, writing=writing)
        (place["work"] / "d").rmdir()
        (place["work"] / "d").symlink_to(place["config"])  # the race: now it points away
        return verdict

    monkeypatch.setattr(files_mod, "denial", swap_after_check)
    with pytest.raises(FileToolError, match="symlink"):
        write_text(str(target), "pwned", rules)
    assert not (place["config"] / "f.txt").exists()


def test_write_is_atomic_and_keeps_the_mode(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = rules_for(place)
    target = place["work"] / "script.sh"
    target.write_text("old\n")
    target.chmod(0o750)
    write_text("script.sh", "new\n", rules)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750

    def fail_rename(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(files_mod.os, "rename", fail_rename)
    with pytest.raises(OSError, match="disk full"):
        write_text("script.sh", "half", rules)
    assert target.read_text() == "new\n"
    assert [p.name for p in place["work"].iterdir() if p.name.endswith(".tmp")] == []


def test_hard_link_at_the_target_is_replaced_not_written_through(place: dict[str, Path]) -> None:
    outside = place["home"] / "outside.txt"
    outside.write_text("keep me\n")
    os.link(outside, place["work"] / "alias.txt")
    write_text("alias.txt", "changed\n", rules_for(place))
    assert outside.read_text() == "keep me\n"
    assert (place["work"] / "alias.txt").read_text() == "changed\n"


def test_bad_paths_are_clear_errors(place: dict[str, Path]) -> None:
    rules = rules_for(place)
    for raw in ("", "a\x00b"):
        with pytest.raises(FileToolError):
            write_text(raw, "x", rules)
    with pytest.raises(FileToolError, match="no such file"):
        read_text("missing.txt", rules)
    with pytest.raises(FileToolError, match="directory"):
        write_text(".", "x", rules)


def test_denial_reports_how_the_path_resolved(place: dict[str, Path]) -> None:
    resolved, reason = denial("../.bashrc", rules_for(place), writing=True)
    assert resolved is not None and resolved.path == place["home"] / ".bashrc"
    assert reason is not None and "start-up" in reason
    assert denial("../.bashrc", rules_for(place), writing=False)[1] is None


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p): p.read_bytes() if p.is_file() and not p.is_symlink() else b""
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.attack
def test_only_regular_files_are_opened_and_none_blocks(place: dict[str, Path]) -> None:
    import socket

    rules = rules_for(place)
    os.mkfifo(place["work"] / "pipe")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(place["work"] / "sock"))
    try:  # a FIFO opened to read would wait for a writer for ever: refused by its kind
        for name, kind in (("pipe", "FIFO"), ("sock", "socket"), (".", "directory")):
            with pytest.raises(FileToolError, match=kind):
                read_text(name, rules)
    finally:
        sock.close()


def test_a_file_swapped_between_the_look_and_the_open_is_refused(
    place: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = place["work"] / "a.txt"
    target.write_text("first\n")
    real_open = files_mod.os.open

    other = place["work"] / "other.txt"
    other.write_text("swapped\n")

    def swap_then_open(name: str, flags: int, *args: object, **kwargs: object) -> int:
        if name == "a.txt" and flags & os.O_NONBLOCK:
            os.replace(other, target)  # another file in its place
        return real_open(name, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(files_mod.os, "open", swap_then_open)
    with pytest.raises(FileToolError, match="changed while it was being opened"):
        read_text("a.txt", rules_for(place))


@pytest.mark.attack
@pytest.mark.parametrize("rel", [".npmrc", ".pgpass", ".config/git/credentials",
                                 ".bash_history", ".vault-token", ".config/gcloud/adc.json",
                                 ".docker/config.json", ".kube/config"])
def test_credentials_are_refused_in_any_home(place: dict[str, Path], rel: str) -> None:
    other = place["home"].parent / "someone-else"
    for home in (place["home"], other):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("token = secret\n")
        with pytest.raises(FileToolError, match="holds secrets"):
            read_text(str(home / rel), rules_for(place))
    with pytest.raises(FileToolError, match="holds secrets"):
        read_text(f"~/{rel}", rules_for(place))
