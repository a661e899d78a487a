"""MemoryStore: nodes, Merkle root, snapshots, rollback, verification, GC, threads."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from passepartout.memory import MemoryNode, MemoryStore
from passepartout.memory.merkle import LEAF_MAX


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    s = MemoryStore.open(tmp_path, keep_snapshots=20)
    yield s
    s.close()


def N(i: str, parent: str | None = None, **kw: object) -> MemoryNode:
    """A node with fixed timestamps, so equal content hashes equal."""
    title = str(kw.pop("title", f"title {i}"))
    return MemoryNode(i, title, parent=parent, created=1.0, updated=1.0, **kw)  # type: ignore[arg-type]


def test_put_get_children_delete(store: MemoryStore) -> None:
    empty = store.root_hash()
    store.put(N("a", body="alpha"))
    store.put(N("b", "a"))
    store.put(N("c", "a"))
    store.put(N("d", "b"))
    assert store.get("a").body == "alpha"  # type: ignore[union-attr]
    assert [n.id for n in store.children("a")] == ["b", "c"]
    assert [n.id for n in store.children(None)] == ["a"]
    assert store.get("d").parent == "b"  # type: ignore[union-attr]
    assert [n.id for n in store.ancestors("d")] == ["a", "b"]
    assert len(store) == 4
    assert store.delete("b") is True
    assert store.get("d") is None and len(store) == 2
    assert store.delete("nope") is False
    store.delete("a")
    assert store.root_hash() == empty


def test_child_change_changes_every_ancestor_hash(store: MemoryStore) -> None:
    store.put_many([N("a"), N("b", "a"), N("c", "b"), N("x")])
    before = {i: store._tree.row(i).hash for i in "abcx"}  # type: ignore[union-attr]
    root = store.root_hash()
    store.put(N("c", "b", body="changed"))
    after = {i: store._tree.row(i).hash for i in "abcx"}  # type: ignore[union-attr]
    assert [i for i in "abcx" if before[i] != after[i]] == ["a", "b", "c"]
    assert store.root_hash() != root


def test_unchanged_put_is_free_and_keeps_timestamps(store: MemoryStore) -> None:
    first = store.put(MemoryNode("a", "A", body="x"))
    root = store.root_hash()
    again = store.put(MemoryNode("a", "A", body="x"))
    assert store.root_hash() == root and again.updated == first.updated
    changed = store.put(MemoryNode("a", "A", body="y"))
    assert changed.created == first.created and changed.updated >= first.updated


def test_bad_writes_are_refused_cleanly(store: MemoryStore) -> None:
    store.put_many([N("a"), N("b", "a")])
    root = store.root_hash()
    with pytest.raises(KeyError, match="not in memory"):
        store.put(N("z", "missing"))
    with pytest.raises(ValueError, match="cycle"):
        store.put(N("a", "b"))
    with pytest.raises(ValueError):
        MemoryNode("")
    assert store.root_hash() == root and store.verify().ok


def test_root_hash_is_a_function_of_content_not_history(tmp_path: Path) -> None:
    one = MemoryStore.open(tmp_path / "1")
    two = MemoryStore.open(tmp_path / "2")
    kids = [N(f"k{i}", "p", position=i) for i in range(300)]  # enough to split the trie
    one.put_many([N("p"), *kids])
    two.put(N("p"))
    for k in reversed(kids):
        two.put(k)
    two.put(N("tmp", "p"))
    two.delete("tmp")
    assert one.root_hash() == two.root_hash()
    one.close()
    two.close()


def test_wide_node_rewrites_few_objects(store: MemoryStore) -> None:
    store.put_many([N("p"), *(N(f"k{i}", "p") for i in range(5000))])
    before = store._io.written
    store.put(N("k42", "p", body="edited"))
    # node + a handful of trie levels + parent + root, not a 5,000-entry object
    assert store._io.written - before < 10
    assert LEAF_MAX < 5000


def test_snapshot_rollback_restores_exact_root(store: MemoryStore) -> None:
    store.put(N("a", body="v1"))
    s1 = store.snapshot("one")
    store.put(N("a", body="v2"))
    store.put(N("b", "a"))
    s2 = store.snapshot("two")
    store.delete("a")
    assert [s.label for s in store.snapshots()] == ["two", "one"]
    assert store.rollback(0).seq == s2.seq
    assert store.root_hash() == s2.root and store.get("b") is not None
    store.rollback(1)
    assert store.root_hash() == s1.root
    assert store.get("a").body == "v1" and store.get("b") is None  # type: ignore[union-attr]
    assert store.verify().ok  # the index matches the restored tree
    assert store.search("v1")[0].id == "a"  # full-text index follows the rollback
    with pytest.raises(ValueError, match="2 snapshot"):
        store.rollback(2)


def test_rollback_handles_moves_and_subtrees(store: MemoryStore) -> None:
    store.put_many([N("a"), N("b"), N("c", "a"), N("d", "c")])
    snap = store.snapshot()
    store.put(N("c", "b"))  # move a subtree
    store.delete("a")
    store.put_many([N("e", "d"), N("f")])
    store.rollback(0)
    assert store.root_hash() == snap.root
    assert store.get("c").parent == "a" and store.get("e") is None  # type: ignore[union-attr]
    assert store.verify().ok


def test_only_the_last_n_snapshots_are_kept(tmp_path: Path) -> None:
    s = MemoryStore.open(tmp_path, keep_snapshots=3)
    for i in range(6):
        s.put(N(f"n{i}"))
        s.snapshot(f"s{i}")
    assert [x.label for x in s.snapshots()] == ["s5", "s4", "s3"]
    s.close()


def test_gc_keeps_every_kept_state(store: MemoryStore) -> None:
    roots = []
    for i in range(30):
        store.put(N(f"n{i % 5}", body=f"v{i}"))
        roots.append(store.snapshot().root)
    removed = store.gc()
    assert removed > 0
    report = store.verify()
    assert report.ok and not report.snapshots_bad
    store.rollback(19)
    assert store.root_hash() == roots[-20]


def test_state_survives_reopen(tmp_path: Path) -> None:
    s = MemoryStore.open(tmp_path)
    s.put_many([N("a"), N("b", "a")])
    snap = s.snapshot("x")
    root = s.root_hash()
    s.close()
    s = MemoryStore.open(tmp_path)
    assert s.root_hash() == root and s.snapshots()[0] == snap and s.load_report.ok  # type: ignore[union-attr]
    s.close()


def _corrupt(path: Path, node_id: str) -> str:
    s = MemoryStore.open(path, verify=False)
    h = s._tree.row(node_id).hash  # type: ignore[union-attr]
    s.close()
    conn = sqlite3.connect(path / "memory.sqlite3")
    conn.execute("UPDATE objects SET data = CAST('{\"garbage\":1}' AS BLOB) WHERE hash = ?", (h,))
    conn.commit()
    conn.close()
    return h


def test_corrupt_row_is_found_and_last_verified_state_used(tmp_path: Path) -> None:
    s = MemoryStore.open(tmp_path)
    s.put_many([N("a"), N("b", "a", body="old")])
    good = s.snapshot("good")
    s.put(N("b", "a", body="new"))  # a fresh object only the head uses
    s.close()
    bad = _corrupt(tmp_path, "b")
    s = MemoryStore.open(tmp_path)
    report = s.load_report
    assert report is not None and not report.tree_ok
    assert report.problems[0].hash == bad and report.problems[0].node_id == "b"
    assert report.recovered_from == good.seq
    assert s.root_hash() == good.root and s.get("b").body == "old"  # type: ignore[union-attr]
    assert "node 'b'" in report.summary()
    s.close()


def test_verify_reports_corruption_without_repairing(tmp_path: Path) -> None:
    s = MemoryStore.open(tmp_path)
    s.put(N("a"))
    s.close()
    _corrupt(tmp_path, "a")
    s = MemoryStore.open(tmp_path, verify=False)
    report = s.verify()
    assert not report.ok and report.problems[0].node_id == "a"
    s.close()  # closing a damaged store must not raise (GC refuses to sweep)


def test_threads_share_one_store(store: MemoryStore) -> None:
    store.put(N("top"))
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for i in range(40):
                store.put(N(f"w{w}-{i}", "top"))
                if i % 10 == 0:
                    store.snapshot(f"w{w}")
                store.search("title")
        except BaseException as e:  # collected for the assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(store.children("top")) == 160 and store.verify().ok


def test_text_search_is_the_fallback(store: MemoryStore) -> None:
    store.put_many([N("a", body="the quick brown fox"), N("b", body="lazy dogs sleep")])
    hits = store.search("fox")
    assert [h.id for h in hits] == ["a"] and hits[0].method == "fts"
    assert store.search("   ") == []
    assert store.search('"unbalanced') == []


ops = st.lists(
    st.tuples(
        st.sampled_from(["put", "delete", "snap", "rollback"]),
        st.integers(0, 11),
        st.integers(-1, 11),
        st.text(max_size=5),
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(ops)
def test_any_history_verifies_and_matches_a_fresh_build(
    tmp_path_factory: pytest.TempPathFactory, history: list
) -> None:
    path = tmp_path_factory.mktemp("h")
    s = MemoryStore.open(path)
    for kind, a, b, text in history:
        try:
            if kind == "put":
                s.put(N(f"n{a}", f"n{b}" if b >= 0 and b != a else None, body=text))
            elif kind == "delete":
                s.delete(f"n{a}")
            elif kind == "snap":
                s.snapshot()
            elif s.snapshots():
                s.rollback(a % len(s.snapshots()))
        except (KeyError, ValueError):
            pass
    assert s.verify().ok
    fresh = MemoryStore.open(path / "fresh")
    nodes = []
    queue = [None]
    while queue:
        for child in s.children(queue.pop()):
            nodes.append(child)
            queue.append(child.id)
    fresh.put_many(nodes)
    assert fresh.root_hash() == s.root_hash()
    s.close()
    fresh.close()
