"""Org files -> memory nodes (orgparse for the outline, the raw lines for fidelity).

Each file becomes a file-level node ``file:<relative path>`` whose body is the
text before the first heading; each heading becomes a node below it. A heading
with an ``:ID:`` property keeps that id; others get a stable id derived from
the file and the chain of titles, so re-importing an edited file updates the
nodes it changed and leaves the others alone. Headline text keeps its priority
cookie; tags keep their order; property values stay strings; planning lines
(SCHEDULED/DEADLINE/CLOSED) are kept so that write-back reproduces the file.

Files are read by ``orgscan`` (orgparse's reading without its per-line date
objects; orgparse itself when a line trips it), new files are inserted in one
pass each, and a file whose bytes and nodes are as its last import left them
is not parsed again (``MemoryStore.subtree_mark``).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from passepartout.memory.nodes import MemoryNode
from passepartout.org.drawer import entry_properties

if TYPE_CHECKING:
    from passepartout.memory.store import MemoryStore
    from passepartout.org.heading import Heading
    from passepartout.org.outline import Outline

log = logging.getLogger(__name__)

BATCH_BYTES = 16_000_000
FILE_PREFIX = "file:"
DERIVED_PREFIX = "org:"
# The headline read as it always was here (orgparse's TODO keyword, any white space),
# not through passepartout.org: a derived node id hashes the titles, so another reading
# would give a person's existing nodes new ids.
_TAGS = re.compile(r"\s+(:(?:[\w@#%]+:)+)\s*$")


@dataclass
class ImportReport:
    """What an import did; ``skipped`` names each file that could not be read."""

    files: int = 0
    nodes: int = 0
    removed: int = 0
    seconds: float = 0.0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"imported {self.files} file(s), {self.nodes} node(s), removed {self.removed}"
            f" in {self.seconds:.2f} s"
        ]
        lines += [f"  skipped {name}: {why}" for name, why in self.skipped]
        return "\n".join(lines)


def file_node_id(relpath: str) -> str:
    return FILE_PREFIX + relpath


def org_files(directory: Path) -> Iterator[Path]:
    """Org files under ``directory``, skipping hidden directories and files."""
    for p in sorted(directory.rglob("*.org")):
        rel = p.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts) or not p.is_file():
            continue
        yield p


def import_memex(store: MemoryStore, directory: Path) -> ImportReport:
    """Import (or re-sync) every org file under ``directory``, a transaction per
    ``BATCH_BYTES`` of changed files.

    A file whose text has the digest recorded at its last import, and whose
    nodes have not changed in memory since, is not parsed again: importing it
    would change nothing.
    """
    if not directory.is_dir():
        raise FileNotFoundError(f"memex directory {directory} does not exist")
    report = ImportReport()
    start = time.perf_counter()
    seen: set[str] = set()
    trees: list[list[MemoryNode]] = []
    marks: dict[str, str] = {}
    pending_bytes = 0
    for path in org_files(directory):
        rel = path.relative_to(directory).as_posix()
        fid = file_node_id(rel)
        seen.add(fid)  # a file that cannot be read keeps what memory already had of it
        try:
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            mark = store.subtree_mark(fid)
            if mark is not None and mark.split(" ")[0] == digest:
                report.files += 1
                report.nodes += int(mark.split(" ")[1])
                continue
            nodes = parse_org_text(_text(data), rel)
        except Exception as e:  # orgparse raises assorted errors on malformed input
            # A file that cannot be read or parsed is named and skipped; the rest imports.
            log.warning("memex: cannot parse %s: %s", rel, e)
            report.skipped.append((rel, f"{type(e).__name__}: {e}"))
            continue
        trees.append(nodes)
        marks[fid] = f"{digest} {len(nodes)}"
        report.files += 1
        report.nodes += len(nodes)
        pending_bytes += len(data)
        if pending_bytes > BATCH_BYTES:  # bounds the memory a large memex holds parsed
            report.removed += store.sync_subtrees(trees, (), marks)
            trees, marks, pending_bytes = [], {}, 0
    # A file deleted from the memex leaves memory too.
    gone = [i for i in store.top_ids() if i.startswith(FILE_PREFIX) and i not in seen]
    report.removed += store.sync_subtrees(trees, gone, marks)
    report.seconds = time.perf_counter() - start
    return report


def _text(data: bytes) -> str:
    """Bytes read as ``Path.read_text`` reads them (UTF-8, universal newlines)."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def import_org_file(store: MemoryStore, path: Path, memex_dir: Path) -> int:
    """Re-sync one file (what the watcher calls on a change); returns node count.

    Raises ``ValueError`` naming the file when it cannot be parsed.
    """
    if path.is_dir():  # a directory made or moved in: the watcher names it, not its files
        return sum(import_org_file(store, file, memex_dir) for file in org_files(path))
    rel = path.resolve().relative_to(memex_dir.resolve()).as_posix()
    if not path.exists():
        store.sync_subtrees([], [file_node_id(rel)])
        return 0
    data = path.read_bytes()
    try:
        nodes = parse_org_text(_text(data), rel)
    except Exception as e:  # orgparse raises assorted errors on malformed input
        raise ValueError(f"cannot parse {rel}: {type(e).__name__}: {e}") from e
    digest = hashlib.sha256(data).hexdigest()
    store.sync_subtrees([nodes], marks={nodes[0].id: f"{digest} {len(nodes)}"})
    return len(nodes)


def parse_org_file(path: Path, relpath: str) -> list[MemoryNode]:
    """Parse one file into nodes, the file-level node first, parents before children."""
    return parse_org_text(path.read_text(encoding="utf-8"), relpath)


def parse_org_text(text: str, relpath: str) -> list[MemoryNode]:
    """The nodes of one file's text (see ``orgscan``: orgparse's reading, faster)."""
    from passepartout.memory.orgscan import scan

    try:
        outline = scan(text)
    except Exception:  # orgparse's own functions failed on a line: let orgparse decide
        return parse_org_text_orgparse(text, relpath)
    return outline_nodes(text, relpath, outline)


def parse_org_text_orgparse(text: str, relpath: str) -> list[MemoryNode]:
    """The same nodes read through orgparse's tree (the reference for ``orgscan``)."""
    import orgparse  # imported here: keeps `import passepartout.memory` cheap

    from passepartout.org.heading import Heading
    from passepartout.org.outline import Outline

    def convert(org: Any) -> Heading:
        kids = [convert(c) for c in org.children]
        return Heading(str(org).split("\n"), org.level, org.todo, org.get_body(format="raw"), kids)

    root = orgparse.loads(text, filename=relpath)
    outline = Outline(root.get_body(format="raw"), [convert(c) for c in root.children])
    return outline_nodes(text, relpath, outline)


def outline_nodes(text: str, relpath: str, outline: Outline) -> list[MemoryNode]:
    fid = file_node_id(relpath)
    nodes = [
        MemoryNode(
            id=fid,
            title=_file_title(text) or relpath,
            body=outline.body,
            position=0,
            source=relpath,
        )
    ]
    _walk(outline.children, fid, relpath, [], nodes, {fid})
    return nodes


def _file_title(text: str) -> str:
    m = re.search(r"^#\+TITLE:\s*(.*?)\s*$", text, re.MULTILINE | re.IGNORECASE)
    return m.group(1) if m else ""


def _walk(
    children: list[Heading],
    parent_id: str,
    rel: str,
    path: list[str],
    out: list[MemoryNode],
    used: set[str],
) -> None:
    dups: dict[str, int] = {}
    for pos, org in enumerate(children):
        node = _convert(org, parent_id, rel, path, dups, pos, used)
        used.add(node.id)
        out.append(node)
        _walk(org.children, node.id, rel, [*path, node.title], out, used)


def _convert(
    org: Heading,
    parent_id: str,
    rel: str,
    path: list[str],
    dups: dict[str, int],
    pos: int,
    used: set[str],
) -> MemoryNode:
    lines = org.lines
    headline = lines[0].lstrip("*").strip()
    tags: tuple[str, ...] = ()
    m = _TAGS.search(" " + headline)
    if m:
        tags = tuple(t for t in m.group(1).split(":") if t)
        headline = (" " + headline)[: m.start()].strip()
    todo = org.todo or None
    if todo and headline.startswith(todo):
        headline = headline[len(todo) :].strip()
    planning, props, _rest = entry_properties(lines[1:])
    dup = dups.get(headline, 0)
    dups[headline] = dup + 1
    node_id = props.get("ID") or ""
    if not node_id or node_id in used:  # an :ID: seen twice in a file keeps its first heading
        node_id = _derived_id(rel, [*path, headline], dup)
    return MemoryNode(
        id=node_id,
        title=headline,
        parent=parent_id,
        todo=todo,
        tags=tags,
        properties=props,
        body=org.body,
        planning=planning,
        position=pos,
        source=rel,
    )


def _derived_id(rel: str, titles: list[str], dup: int) -> str:
    key = "\0".join([rel, *titles, str(dup)])
    return DERIVED_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:24]
