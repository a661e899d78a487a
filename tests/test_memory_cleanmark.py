"""Opening a store unchanged since its clean close skips re-hashing; anything else verifies."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from passepartout.memory import MemoryNode, MemoryStore
from passepartout.memory.cleanmark import mark_path, record


def _filled(tmp_path: Path) -> Path:
    s = MemoryStore.open(tmp_path)
    s.put_many([MemoryNode("a", "A"), MemoryNode("b", "B", "a", body="text")])
    s.snapshot("one")
    s.close()
    return tmp_path / "memory.sqlite3"


def test_unchanged_store_opens_without_rehashing_but_verify_checks_all(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    assert mark_path(db).exists()
    s = MemoryStore.open(tmp_path)
    try:
        assert not mark_path(db).exists()  # used up: this session may change the file
        report = s.load_report
        assert report is not None and report.clean and report.ok and report.objects == 0
        assert report.nodes == 2 and "clean close" in report.summary()
        full = s.verify()
        assert full.ok and not full.clean and full.objects >= 3
    finally:
        s.close()
    assert mark_path(db).exists()


def test_a_row_changed_while_closed_is_found(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    conn = sqlite3.connect(db)
    h = conn.execute("SELECT hash FROM idx WHERE id = 'b'").fetchone()[0]
    conn.execute("UPDATE objects SET data = CAST('{\"x\":1}' AS BLOB) WHERE hash = ?", (h,))
    conn.commit()
    conn.close()
    assert mark_path(db).exists()
    s = MemoryStore.open(tmp_path)
    try:
        report = s.load_report
        assert report is not None and not report.clean and not report.tree_ok
        assert report.problems[0].node_id == "b"
    finally:
        s.close()


def test_after_a_crash_the_whole_head_is_verified(tmp_path: Path) -> None:
    _filled(tmp_path)
    code = (
        "import os, sys; from passepartout.memory import MemoryStore, MemoryNode\n"
        "s = MemoryStore.open(sys.argv[1]); s.put(MemoryNode('c', 'C', 'a'))\n"
        "os._exit(0)\n"  # no close: as a kill would leave it
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    s = MemoryStore.open(tmp_path)
    try:
        report = s.load_report
        assert report is not None and report.ok and not report.clean and report.objects > 0
        assert s.get("c") is not None
    finally:
        s.close()


def test_unverified_or_busy_sessions_leave_no_mark(tmp_path: Path) -> None:
    db = _filled(tmp_path)
    MemoryStore.open(tmp_path, verify=False).close()
    assert not mark_path(db).exists()
    s = MemoryStore.open(tmp_path, verify=False)
    assert s.verify().ok  # what `passepartout memory verify` does: a full check vouches
    s.close()
    assert mark_path(db).exists()
    mark_path(db).unlink()
    conn = sqlite3.connect(db)  # a second process wrote, its commit still in the WAL
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("INSERT INTO meta(key, value) VALUES ('x', 'y')")
    conn.commit()
    record(db, "head")
    assert not mark_path(db).exists()
    conn.close()
    s = MemoryStore.open(tmp_path)
    try:
        assert s.load_report is not None and s.load_report.ok and not s.load_report.clean
    finally:
        s.close()
