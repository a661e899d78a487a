"""The memory object: one org node, and its canonical byte encoding.

The encoding is what the Merkle hash covers, so it must be a pure function of
the node's content: JSON with sorted keys, no whitespace, UTF-8, and tags and
properties in a fixed order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

# The invisible node every top-level node hangs from; its hash names a state.
ROOT_ID = ""


@dataclass(frozen=True)
class MemoryNode:
    """One org heading (or one org file, for a file-level node) held in memory.

    ``parent`` is None for a top-level node. ``position`` orders siblings; when
    it is None on ``put`` the store keeps the old position or appends.
    ``source`` is the memex-relative org file the node lives in (file-level
    nodes and nodes imported from org files carry it; nodes the agent creates
    inherit it from their file ancestor on write-back).
    """

    id: str
    title: str = ""
    parent: str | None = None
    todo: str | None = None
    tags: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)
    body: str = ""
    planning: str = ""
    created: float = 0.0
    updated: float = 0.0
    position: int | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError("a memory node needs a non-empty string id")
        if self.parent == self.id:
            raise ValueError(f"node {self.id!r} cannot be its own parent")
        # Normalise so that equal content always encodes to equal bytes.
        object.__setattr__(self, "tags", tuple(str(t) for t in self.tags))
        object.__setattr__(
            self, "properties", {str(k): str(v) for k, v in dict(self.properties).items()}
        )

    def stamped(self, now: float | None = None) -> MemoryNode:
        """Fill in missing timestamps (created once, updated when absent)."""
        t = time.time() if now is None else now
        return replace(self, created=self.created or t, updated=self.updated or t)

    def text(self) -> str:
        """The text that embeddings and full-text search see."""
        return f"{self.title}\n{self.body}".strip()


def content_fields(node: MemoryNode) -> dict[str, Any]:
    """The fields the hash covers (everything but the tree links)."""
    return {
        "id": node.id,
        "title": node.title,
        "todo": node.todo,
        "tags": list(node.tags),
        "props": [[k, v] for k, v in node.properties.items()],  # org order is content
        "body": node.body,
        "planning": node.planning,
        "created": node.created,
        "updated": node.updated,
        "pos": node.position if node.position is not None else 0,
        "source": node.source,
    }


def node_from_fields(d: Mapping[str, Any], parent: str | None) -> MemoryNode:
    """Inverse of :func:`content_fields` (``parent`` comes from the tree)."""
    return MemoryNode(
        id=d["id"],
        title=d["title"],
        parent=parent,
        todo=d["todo"],
        tags=tuple(d["tags"]),
        properties={k: v for k, v in d["props"]},
        body=d["body"],
        planning=d["planning"],
        created=d["created"],
        updated=d["updated"],
        position=d["pos"],
        source=d["source"],
    )


def canonical(obj: Mapping[str, Any]) -> bytes:
    """Canonical JSON bytes of a store object."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def decode(data: bytes) -> dict[str, Any]:
    """Decode canonical bytes back into a store object."""
    obj = json.loads(data.decode())
    if not isinstance(obj, dict):
        raise ValueError("store object is not a JSON object")
    return obj
