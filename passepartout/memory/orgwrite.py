"""Write memory back into its org file, atomically.

When the agent changes a node (after the gates approved the write), the org
file the node lives in is rendered again from memory and replaced through a
temporary file in the same directory, fsync and rename, then an fsync of the
directory: a reader (Emacs, the watcher) sees the old file or the new one,
never half of one. Rendering is the inverse of ``orgimport``: importing a
rendered file gives back the same nodes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from passepartout.fsutil import atomic_write
from passepartout.memory.nodes import MemoryNode
from passepartout.memory.orgimport import DERIVED_PREFIX, FILE_PREFIX
from passepartout.org.drawer import NAME
from passepartout.org.entry import entry_lines
from passepartout.org.escape import no_headings, their_line

if TYPE_CHECKING:
    from passepartout.memory.store import MemoryStore

log = logging.getLogger(__name__)


def render_node(node: MemoryNode, level: int) -> list[str]:
    """The org lines of one heading (without its children)."""
    props = dict(node.properties)
    if not node.id.startswith(DERIVED_PREFIX) and "ID" not in props:
        # A node the agent created keeps its id through the watcher's re-import.
        props = {"ID": node.id, **props}
    # The person's text as they wrote it (the agent's own went through org_escape when
    # it came in, see the remember tool), but a title or property holding a line break
    # of any kind must not add a line (a heading, a drawer) of its own.
    return entry_lines(
        level,
        their_line(node.title),
        keyword=their_line(node.todo) if node.todo else None,
        tags=[their_line(":".join(node.tags))] if node.tags else (),
        planning=node.planning,
        properties={k: their_line(v) for k, v in props.items()
                    if NAME.fullmatch(k)},
        body=no_headings(node.body) if node.body else "",
    )


def render_file(store: MemoryStore, file_id: str) -> str:
    """The whole org file held under the file-level node ``file_id``."""
    top = store.get(file_id)
    if top is None:
        raise KeyError(f"no file node {file_id!r} in memory")
    lines = top.body.split("\n") if top.body else []
    stack = [(child, 1) for child in reversed(store.children(file_id))]
    while stack:
        node, level = stack.pop()
        lines += render_node(node, level)
        stack += [(child, level + 1) for child in reversed(store.children(node.id))]
    text = "\n".join(lines)
    return text if text.endswith("\n") else text + "\n"


def file_of(store: MemoryStore, node_id: str) -> MemoryNode | None:
    """The file-level node a node lives under (None for nodes of no file)."""
    node = store.get(node_id)
    if node is None:
        return None
    chain = [*store.ancestors(node_id), node]
    top = chain[0]
    return top if top.id.startswith(FILE_PREFIX) and top.source else None


def write_back(store: MemoryStore, node_id: str, memex_dir: Path) -> Path | None:
    """Rewrite the org file that holds ``node_id``; returns its path, or None
    when the node belongs to no file (e.g. the conversation log)."""
    top = file_of(store, node_id)
    if top is None or top.source is None:
        return None
    root = memex_dir.resolve()
    target = (root / top.source).resolve()
    if not target.is_relative_to(root):
        raise ValueError(f"refusing to write {top.source!r}: outside the memex directory")
    atomic_write(target, render_file(store, top.id))
    log.info("memory written back to %s", target)
    return target
