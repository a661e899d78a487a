"""``passepartout memory stats|snapshots|rollback N|verify|import DIR|search QUERY``.

``add_parser(subparsers)`` registers the ``memory`` command on the main CLI's
subparsers; ``run(args)`` carries it out and returns the exit status. Output is
plain text for a person; a bad argument or a damaged store is a one-line error
and a non-zero status, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import time
from pathlib import Path

from passepartout.memory.embedders import SETTING, model_for_setting
from passepartout.memory.embeddings import Embedder, EmbeddingIndex, model_available
from passepartout.memory.schema import default_path
from passepartout.memory.search import snippet as one_line
from passepartout.memory.store import DEFAULT_KEEP_SNAPSHOTS, MemoryStore

# Nodes without a vector that ``memory search`` embeds before it answers (a fraction
# of a second); a larger backlog (a memex just imported) is the daemon's to embed in
# the background, and search meanwhile uses the vectors already stored.
SEARCH_BACKLOG = 1000


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_arguments(subparsers.add_parser("memory", help="inspect, verify and roll back memory"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``passepartout memory`` (what ``passepartout.cli`` calls)."""
    p.add_argument(
        "--db", type=Path, default=None, help="memory database (default: in PASSEPARTOUT_HOME)"
    )
    p.add_argument(
        "--keep", type=int, default=DEFAULT_KEEP_SNAPSHOTS, help="snapshots to keep (default 20)"
    )
    sub = p.add_subparsers(dest="memory_command", metavar="COMMAND", required=True)
    sub.add_parser("stats", help="size of memory and its current root hash")
    sub.add_parser("snapshots", help="list kept snapshots, newest first")
    rb = sub.add_parser("rollback", help="restore snapshot N (0 = the last one)")
    rb.add_argument("n", type=int, nargs="?", default=0)
    sub.add_parser("verify", help="re-hash every stored state and report corrupt rows")
    im = sub.add_parser("import", help="import (re-sync) the org files of a memex directory")
    im.add_argument("directory", type=Path)
    se = sub.add_parser(
        "search", help="search memory: full text and meaning, with snippets and files"
    )
    se.add_argument("query")
    se.add_argument("-k", type=int, default=10)


def run(args: argparse.Namespace) -> int:
    path: Path = args.db or default_path()
    cmd: str = args.memory_command
    if cmd != "import" and not path.exists():
        print(f"no memory at {path} yet (set PASSEPARTOUT_HOME or pass --db)")
        return 1
    try:
        # `verify` reports what it finds instead of letting open() repair it.
        store = MemoryStore.open(path, keep_snapshots=args.keep, verify=cmd != "verify")
    except (sqlite3.Error, ValueError) as e:
        print(f"cannot open memory at {path}: {e}")
        return 2
    try:
        return _COMMANDS[cmd](store, args)
    except (ValueError, KeyError, FileNotFoundError) as e:
        print(f"memory {cmd}: {e}")
        return 2
    finally:
        store.close()


def _stats(store: MemoryStore, args: argparse.Namespace) -> int:
    s = store.stats()
    print(f"memory:     {s.path}")
    print(f"root hash:  {s.head}")
    print(f"nodes:      {s.nodes}")
    print(f"objects:    {s.objects}")
    print(f"snapshots:  {s.snapshots} (keeping {store.keep_snapshots})")
    print(f"embedded:   {s.embedded}")
    print(f"on disk:    {s.bytes_on_disk / 1e6:.1f} MB")
    if store.load_report is not None and not store.load_report.ok:
        print(store.load_report.summary())
    return 0


def _snapshots(store: MemoryStore, args: argparse.Namespace) -> int:
    snaps = store.snapshots()
    if not snaps:
        print("no snapshots")
        return 0
    head = store.root_hash()
    for n, s in enumerate(snaps):
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.created))
        mark = " *" if s.root == head else ""
        print(f"{n:>3}  #{s.seq:<5} {when}  {s.root[:16]}  {s.nodes:>7} nodes  {s.label}{mark}")
    print("(* = the current state; `rollback N` restores line N)")
    return 0


def _rollback(store: MemoryStore, args: argparse.Namespace) -> int:
    before = store.root_hash()
    snap = store.rollback(args.n)
    print(f"rolled back to snapshot #{snap.seq} ({snap.label or 'no label'})")
    print(f"root hash: {before[:16]} -> {store.root_hash()[:16]}, {len(store)} nodes")
    return 0


def _verify(store: MemoryStore, args: argparse.Namespace) -> int:
    report = store.verify()
    print(report.summary())
    return 0 if report.ok else 1


def _import(store: MemoryStore, args: argparse.Namespace) -> int:
    print(store.import_memex(args.directory).summary())
    return 0


def _search(store: MemoryStore, args: argparse.Namespace) -> int:
    if args.k < 1:
        raise ValueError("-k must be at least 1")
    semantic = _semantic(store)
    hits = store.search(args.query, args.k)
    if not hits:
        print("no match")
    for h in hits:
        print(f"{h.score:8.4f}  {one_line(h.title, 120)}  [{h.method}]")
        print(f"{'':10}{h.file or '(no file)'}  id {h.id}")
        if h.snippet:
            print(f"{'':10}{h.snippet}")
    if semantic is None:
        print(f"(full text only: {SETTING} is off or its model is not installed)")
    else:
        stats = store.stats()
        if stats.embedded < stats.nodes:
            print(f"(meaning covers {stats.embedded} of {stats.nodes} notes so far, full text"
                  " all of them: the daemon embeds the rest in the background)")
    return 0


def _semantic(store: MemoryStore) -> EmbeddingIndex | None:
    """Vectors with the model that made the stored ones (the agent's choice), else
    the one PASSEPARTOUT_EMBEDDINGS names, when it is installed. A backlog of up to
    SEARCH_BACKLOG nodes without a vector is embedded first (the default model does
    1,000 notes in ~0.05 s); a larger one is left to the daemon."""
    name = store.embedder_name() or model_for_setting(os.environ.get(SETTING))
    if name is None or not model_available(name):
        return None
    index = EmbeddingIndex(store, Embedder(name))
    return index if index.attach(backlog=SEARCH_BACKLOG) else None


_COMMANDS = {
    "stats": _stats,
    "snapshots": _snapshots,
    "rollback": _rollback,
    "verify": _verify,
    "import": _import,
    "search": _search,
}
