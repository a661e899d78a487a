"""grep-search's engine: what it walks, what it leaves out, and its limits."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest
import regex

from passepartout.errors import PipelineError
from passepartout.security.files.search import Limits, compile_pattern, search
from passepartout.services import Services


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha needle\nbeta\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("needle two\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.txt").write_text("needle hidden\n")
    (tmp_path / "bin.dat").write_bytes(b"needle\x00\x01")
    return tmp_path


def test_matches_are_listed_with_their_place(tree: Path) -> None:
    assert search("needle", tree) == "a.txt:1: alpha needle\nsub/b.txt:1: needle two"
    assert search("(", tree) == "no matches"  # not a regular expression: plain text
    with pytest.raises(PipelineError, match="no such directory"):
        search("x", tree / "missing")


@pytest.mark.attack
def test_symlinks_fifos_and_secret_places_are_not_opened(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside\n")
    (tree / "link.txt").symlink_to(outside / "secret.txt")
    (tree / "linkdir").symlink_to(outside)
    os.mkfifo(tree / "pipe")
    (tree / "vault").mkdir()
    (tree / "vault" / "k.txt").write_text("needle in the vault\n")
    # The FIFO is left out by its kind: opened to read, it would wait for ever.
    out = search("needle", tree, refused=lambda p: "secret" if p.name == "vault" else None)
    assert "outside" not in out and "vault" not in out.split("\n[")[0]
    assert out.endswith("[left out: 1 place holding secrets or the agent's state]")
    with pytest.raises(PipelineError, match="refused"):
        search("needle", tree / "vault", refused=lambda p: "secret" if p.name == "vault" else None)


def test_output_stops_at_its_limits(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 500)
    out = search("hit", tmp_path, limits=Limits(matches=10))
    assert out.count("\n") == 10 and out.endswith("[stopped at 10 matches]")
    (tmp_path / "many.txt").write_text(("hit " + "x" * 400 + "\n") * 500)
    out = search("hit", tmp_path, limits=Limits(output_chars=2_000))
    assert len(out) < 3_000 and out.endswith("[stopped at 2000 characters of output]")


@pytest.mark.attack
def test_a_catastrophic_pattern_stops_at_the_time_limit(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("a" * 30_000 + "!\n")
    for pattern in ("(a+)+$", "(a|aa)+$"):  # left to backtrack, neither would end
        with pytest.raises(PipelineError, match="backtracks too much"):
            search(pattern, tmp_path, limits=Limits(seconds=0.3))


@pytest.mark.attack
@pytest.mark.parametrize("pattern", ["(a{1000}){1000}", "(?:a{1000}|b){1000}", "x{100000}"])
def test_a_pattern_too_large_to_compile_is_refused_at_once(
        pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    monkeypatch.setattr(regex, "compile", lambda p, *a, **k: compiled.append(p))
    with pytest.raises(PipelineError, match="too large"):
        compile_pattern(pattern)
    assert compiled == []  # refused from its parse, before any time goes into compiling


@pytest.mark.attack
def test_a_search_from_the_root_never_enters_proc(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from passepartout.llm.builtin_tools import _secret_filter, grep

    # New for each run: only this process's environment in /proc can hold it (a
    # fixed literal sits in this file, its .pyc and any log of an earlier run).
    canary = f"PROCcanary-{secrets.token_hex(8)}"
    monkeypatch.setenv("PASSEPARTOUT_GREP_CANARY", canary)
    agent = SimpleNamespace(services=Services(), config=SimpleNamespace(
        config_dir=Path("/nonexistent/config"), home=Path("/nonexistent/state")))
    skip = _secret_filter(agent)
    assert skip(Path("/proc/self/environ")) and skip(Path("/dev/zero"))
    out = grep(canary, Path("/"), skip=skip)  # stops at its time limit at worst
    assert canary not in out
