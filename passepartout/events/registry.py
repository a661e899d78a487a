"""The registry of CRON/HOOK nodes, kept current by scans, Emacs edits and the watcher.

Every update says what changed (added, changed, removed), with the old and new node,
so hooks fire once per real change: when Emacs reports an edit and the watcher then
rescans the saved file, the second report finds nothing new and fires nothing.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from passepartout.events.jobs import FileScan, OrgNode, ScanProblem

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodeChange:
    """One node added, changed or removed, and where the news came from."""

    kind: str  # added | changed | removed
    old: OrgNode | None
    new: OrgNode | None
    source: str  # disk | scan | the face that sent the edit (emacs)

    @property
    def node(self) -> OrgNode:
        node = self.new if self.new is not None else self.old
        assert node is not None
        return node


def _key(file: str | Path) -> str:
    return str(Path(file).expanduser().resolve())


class NodeRegistry:
    """CRON/HOOK nodes by file and id; thread-safe."""

    def __init__(self) -> None:
        self._files: dict[str, dict[str, OrgNode]] = {}
        self._problems: dict[str, list[ScanProblem]] = {}
        self._lock = threading.RLock()

    def nodes(self) -> list[OrgNode]:
        with self._lock:
            return [n for nodes in self._files.values() for n in nodes.values()]

    def node(self, node_id: str) -> OrgNode | None:
        with self._lock:
            for nodes in self._files.values():
                if node_id in nodes:
                    return nodes[node_id]
        return None

    def files(self) -> list[str]:
        with self._lock:
            return sorted(self._files)

    def problems(self) -> list[ScanProblem]:
        with self._lock:
            return [p for problems in self._problems.values() for p in problems]

    def replace_file(self, scan: FileScan, source: str = "disk") -> list[NodeChange]:
        """Make the registry hold what ``scan`` found in its file; the changes."""
        file = _key(scan.file)
        new: dict[str, OrgNode] = {}
        problems = list(scan.problems)
        for node in scan.nodes:
            if node.id in new:
                problems.append(ScanProblem(
                    file, f"ID {node.id} is used twice in this file; the second is ignored",
                    node.heading))
                continue
            new[node.id] = node
        for problem in scan.problems:
            log.warning("org scan: %s", problem)
        with self._lock:
            old = self._files.get(file, {})
            if new:
                self._files[file] = new
            else:
                self._files.pop(file, None)
            if problems:
                self._problems[file] = problems
            else:
                self._problems.pop(file, None)
        return diff_nodes(old, new, source)

    def remove_file(self, file: str | Path, source: str = "disk") -> list[NodeChange]:
        """Forget a deleted file's nodes; their removals."""
        key = _key(file)
        with self._lock:
            old = self._files.pop(key, {})
            self._problems.pop(key, None)
        return diff_nodes(old, {}, source)

    def put_node(self, file: str | Path, node_id: str, node: OrgNode | None,
                 source: str) -> list[NodeChange]:
        """Set (or, with None, remove) one node of a file: an edit the face ``source``
        reported."""
        key = _key(file)
        with self._lock:
            nodes = dict(self._files.get(key, {}))
            old = {node_id: nodes[node_id]} if node_id in nodes else {}
            if node is None:
                nodes.pop(node_id, None)
            else:
                nodes[node_id] = node
            if nodes:
                self._files[key] = nodes
            else:
                self._files.pop(key, None)
        return diff_nodes(old, {node.id: node} if node is not None else {}, source)


def diff_nodes(old: dict[str, OrgNode], new: dict[str, OrgNode],
               source: str) -> list[NodeChange]:
    """What turns the nodes ``old`` into ``new`` (both by id): added, changed, removed."""
    changes: list[NodeChange] = []
    for node_id, node in new.items():
        before = old.get(node_id)
        if before is None:
            changes.append(NodeChange("added", None, node, source))
        elif _content(before) != _content(node):
            changes.append(NodeChange("changed", before, node, source))
    changes.extend(
        NodeChange("removed", node, None, source) for node_id, node in old.items()
        if node_id not in new
    )
    return changes


def _content(node: OrgNode) -> tuple[object, ...]:
    # Text alone would call a moved file's nodes changed; compare what they mean.
    return (node.heading, node.outline, node.body, tuple(sorted(node.properties.items())),
            tuple(sorted(node.choice.items())))
