"""`passepartout memory stats|snapshots|rollback N|verify` through add_parser/run."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

import pytest

from passepartout.memory import MemoryNode, MemoryStore, cli


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="passepartout")
    cli.add_parser(parser.add_subparsers(dest="command"))
    return cli.run(parser.parse_args(["memory", *argv]))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PASSEPARTOUT_HOME", str(tmp_path))
    s = MemoryStore.open(tmp_path)
    s.put(MemoryNode("a", "Alpha", body="first"))
    s.snapshot("one")
    s.put(MemoryNode("a", "Alpha", body="second"))
    s.snapshot("two")
    s.close()
    return tmp_path


def test_stats_and_snapshots(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("stats") == 0
    out = capsys.readouterr().out
    assert "nodes:      1" in out and "snapshots:  2" in out
    assert run("snapshots") == 0
    lines = capsys.readouterr().out.splitlines()
    assert "two *" in lines[0] and "one" in lines[1]


def test_rollback_and_verify(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run("rollback", "1") == 0
    assert "rolled back to snapshot #1 (one)" in capsys.readouterr().out
    s = MemoryStore.open(home)
    assert s.get("a").body == "first"  # type: ignore[union-attr]
    s.close()
    assert run("verify") == 0
    assert "verified: OK" in capsys.readouterr().out


def test_bad_input_is_a_message_not_a_traceback(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("rollback", "7") == 2
    assert "cannot roll back 7: 2 snapshot(s) kept" in capsys.readouterr().out
    assert run("--db", str(tmp_path / "none.sqlite3"), "stats") == 1
    assert "no memory at" in capsys.readouterr().out


def test_verify_names_a_corrupt_row(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s = MemoryStore.open(home)
    h = s._tree.row("a").hash  # type: ignore[union-attr]
    s.close()
    conn = sqlite3.connect(home / "memory.sqlite3")
    conn.execute("UPDATE objects SET data = CAST('x' AS BLOB) WHERE hash = ?", (h,))
    conn.commit()
    conn.close()
    assert run("verify") == 1
    out = capsys.readouterr().out
    assert "PROBLEMS FOUND" in out and f"node 'a': object {h[:12]}" in out


def test_import_and_search(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memex = tmp_path / "mx"
    memex.mkdir()
    (memex / "n.org").write_text("* Gardening\nTomatoes need sun.\n")
    assert run("import", str(memex)) == 0
    assert "imported 1 file(s)" in capsys.readouterr().out
    assert run("search", "tomatoes") == 0
    assert "Gardening  [fts" in capsys.readouterr().out  # and by its vector, when a model is there
