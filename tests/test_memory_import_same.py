"""The fast import gives exactly the nodes and hashes of the node-by-node import.

The reference is the import as it was before the fast path (bench/memex.py's
``reference_import``): each file read by orgparse's tree, then one transaction
per file putting node after node and rewriting the changed path of the Merkle
tree each time. Both run on the same
generated memex (bench/memexgen.py) plus hand-written awkward files, under one
frozen clock (timestamps are part of a node's hash), and every node id, parent,
position, hash and the root must agree; then again after edits. The scanner is
also compared with orgparse on random org text, errors included.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import pytest

from passepartout.memory import MemoryStore, orgimport
from passepartout.memory.orgimport import (
    org_files,
    outline_nodes,
    parse_org_text,
    parse_org_text_orgparse,
)
from passepartout.memory.orgscan import scan

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from memex import reference_import
from memexgen import make_memex

NOW = 1_700_000_000.0
# The root the import gave, before the fast path existed, for make_memex(0.4 MB,
# seed 11) plus TRICKY at NOW: pins today's hashes independently of the reference.
PINNED_ROOT = "0862d7e9346add5222ccb298ea02979e71e9d6a51b892a944aa018d1c28fba2c"

TRICKY = {
    "tricky/todo.org": "#+TODO: NEXT WAIT | DONE CANCELLED\n#+TITLE: Keywords\n"
    "* NEXT [#B] Call :phone:\n** WAIT Reply\n* CANCELLED Gone\n* TODO not a keyword here\n",
    "tricky/levels.org": "intro\n:PROPERTIES:\n:ID: root-drawer\n:END:\nafter\n*** deep first\n"
    "* top\n**** jump\n** back\n*** again\n* top\n* top\n",
    "tricky/dupid.org": "* One\n:PROPERTIES:\n:ID: shared-id\n:END:\n"
    "* Two\n:PROPERTIES:\n:ID: shared-id\n:END:\n",
    "tricky/moved.org": "* Elsewhere\n:PROPERTIES:\n:ID: shared-id\n:END:\n"
    "same id as in dupid.org\n",
    "tricky/clock.org": "* TODO Work\nDEADLINE: <2024-05-01 Wed> SCHEDULED: <2024-04-01 Mon>\n"
    ":LOGBOOK:\nCLOCK: [2024-01-02 Tue 10:00]--[2024-01-02 Tue 11:30] =>  1:30\n"
    '- State "DONE"       from "TODO"       [2024-01-02 Tue 11:30]\n:END:\n'
    ":PROPERTIES:\n:Effort: 1:30\n:END:\nbody <2024-03-05 Tue 10:00-11:00 +1w>\n"
    "#+begin_src org\n* inside a block\n#+end_src\n",
    "tricky/baddate.org": "* Broken\nwhen <2024-13-45 Mon>\n",
    "tricky/empty.org": "",
    "tricky/crlf.org": "* A\r\nline\r\n* B\x0cfeed\n\u2028sep\n",
}


def _memex(d: Path) -> Path:
    make_memex(d, 0.4, seed=11)
    for rel, text in TRICKY.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text, newline="")
    return d


def _state(store: MemoryStore) -> tuple[str, list[tuple[str, str, int, str]]]:
    rows = store._conn.execute("SELECT id, parent, pos, hash FROM idx ORDER BY id").fetchall()
    return store.root_hash(), [tuple(r) for r in rows]


def _edit(d: Path) -> None:
    files = list(org_files(d))
    a, b, c = files[1], files[4], files[7]
    text = a.read_text()
    a.write_text(text.replace("\n* ", "\n* EDITED ", 3) + "\n* A new heading\nnew body\n")
    lines = b.read_text().split("\n")
    b.write_text("\n".join(line for line in lines if not line.startswith("** ")))
    c.unlink()
    (d / "tricky" / "dupid.org").write_text("* One\nno id any more\n")
    (d / "added.org").write_text("#+TITLE: Added\n* Fresh\n:PROPERTIES:\n:ID: fresh-1\n:END:\n")


@pytest.mark.parametrize("batch", [orgimport.BATCH_BYTES, 30_000])
def test_fast_import_equals_node_by_node_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW)
    monkeypatch.setattr(orgimport, "BATCH_BYTES", batch)
    memex = _memex(tmp_path / "memex")
    fast = MemoryStore.open(tmp_path / "fast")
    ref = MemoryStore.open(tmp_path / "ref")
    try:
        report = fast.import_memex(memex)
        assert [name for name, _why in report.skipped] == ["tricky/baddate.org"]
        reference_import(ref, memex)
        state = _state(fast)
        assert state == _state(ref)
        assert state[0] == PINNED_ROOT
        assert len(state[1]) > 600 and fast.verify().ok

        _edit(memex)
        again = fast.import_memex(memex)
        reference_import(ref, memex)
        assert _state(fast) == _state(ref) and fast.verify().ok
        assert again.removed > 0 and fast.get("fresh-1") is not None
    finally:
        fast.close()
        ref.close()


def test_unchanged_files_are_not_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "time", lambda: NOW)
    memex = tmp_path / "memex"
    make_memex(memex, 0.1, seed=3)
    store = MemoryStore.open(tmp_path / "s")
    try:
        first = store.import_memex(memex)
        root = store.root_hash()
        parsed: list[str] = []
        import passepartout.memory.orgimport as oi

        real = oi.parse_org_text
        monkeypatch.setattr(oi, "parse_org_text", lambda t, r: parsed.append(r) or real(t, r))
        second = store.import_memex(memex)
        assert parsed == [] and store.root_hash() == root
        assert (second.files, second.nodes) == (first.files, first.nodes)
        # A node changed in memory: its file is read again and memory follows the file.
        victim = next(n for n in store.children(None) if store.children(n.id))
        kid = store.children(victim.id)[0]
        store.put(type(kid)(kid.id, "changed in memory", kid.parent, body="x"))
        store.import_memex(memex)
        assert parsed == [victim.source] and store.root_hash() == root
    finally:
        store.close()


_PIECES = [
    "* ", "** ", "*** ", "**** ", "*bold* text", "TODO ", "DONE ", "NEXT ", "[#A] ", ":tag:x@y:",
    "SCHEDULED: <2024-02-03 Sat>", "DEADLINE: <2024-02-10 Sat>", "CLOSED: [2024-01-01 Mon 10:00]",
    ":PROPERTIES:", ":END:", ":ID: x1", ":ID: x2", ":Effort: 1:30", ":LOGBOOK:",
    "CLOCK: [2024-01-02 Tue 10:00]--[2024-01-02 Tue 11:30] =>  1:30",
    "CLOCK: [2024-01-02 Tue 9:00]",
    '- State "DONE" from "TODO" [2024-01-02 Tue 11:30]', "  - State of things",
    "#+TODO: NEXT | DONE", "#+SEQ_TODO: A B | C", "#+TITLE: t", "  #+begin_src org", "#+end_src",
    "<2024-03-05 Tue 10:00-11:00 +1w -2d>", "[2024-03-05 Tue]--[2024-03-07 Thu]", "2024-03-05",
    "plain words", "", "  indented", "\t* tab star", "*no space", "\r", "\x0c", "\u2028", ":",
]
# Each of these makes orgparse fail (a date or an effort it cannot read).
_BAD = [
    "DEADLINE: <2024-02-30 Fri>", ":Effort: soon", "CLOCK: [2024-99-02 Tue 10:00]",
    '- State "X" from "Y" [2024-13-01 Mon]', "<2024-00-05>", "[2024-13-01]",
]


def _random_org(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(0, 40)):
        n = rng.randint(1, 3)
        pieces = [rng.choice(_BAD if rng.random() < 0.01 else _PIECES) for _ in range(n)]
        line = "".join(pieces)
        lines.append(line)
    return "\n".join(lines) + rng.choice(["", "\n"])


def test_scanner_reads_random_org_as_orgparse_does() -> None:
    rng = random.Random(20261123)
    failures = 0
    for i in range(1000):
        text = _random_org(rng)
        try:
            want = parse_org_text_orgparse(text, f"r{i}.org")
        except Exception as e:
            failures += 1
            with pytest.raises(type(e)):
                parse_org_text(text, f"r{i}.org")
            continue
        assert outline_nodes(text, f"r{i}.org", scan(text)) == want, text
    assert 100 < failures < 600, failures  # both outcomes were exercised
