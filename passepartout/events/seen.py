"""The CRON/HOOK nodes the agent knew when it last ran, kept on disk.

At the next start the orchestrator compares them with what its scan finds: a hook
node edited, added or removed while the agent was down fires its hooks then, and the
files outside the scanned directories that held such nodes (first seen through Emacs
edits) are read again, so that their jobs come back.  With nothing recorded (the
first start, or an unreadable record) nothing fires: finding a node is not a change.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from passepartout.events.jobs import OrgNode
from passepartout.fsutil import DeferredSave

log = logging.getLogger(__name__)

VERSION = 1


class SeenNodes(DeferredSave):
    """A JSON file of the nodes, rewritten atomically: at once (``save``), or a moment
    after a change (``save_soon``), so that a rescan does not wait for the disk."""

    what = "record of known org nodes"

    def __init__(self, path: Path, nodes: Callable[[], Iterable[OrgNode]], *,
                 delay: float = 0.5) -> None:
        super().__init__(path, delay=delay)
        self.nodes = nodes  # what to record: read when the record is written

    def load(self) -> dict[str, OrgNode] | None:
        """The nodes recorded by id; None when there is no usable record."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            log.error("the record of known org nodes %s is unreadable (%s); edits made "
                      "while the agent was down will not fire hooks this time", self.path, err)
            return None
        try:
            if raw.get("version") != VERSION:
                raise ValueError(f"version {raw.get('version')!r}")
            nodes = [_node(entry) for entry in raw["nodes"]]
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            log.error("the record of known org nodes %s is not ours (%s); ignoring it",
                      self.path, err)
            return None
        return {node.id: node for node in nodes}

    def _render(self) -> str:
        entries = [dataclasses.asdict(node) for node in sorted(self.nodes(), key=lambda n: n.id)]
        return json.dumps({"version": VERSION, "nodes": entries}, ensure_ascii=False, indent=1)


def _node(entry: dict[str, object]) -> OrgNode:
    fields = {f.name for f in dataclasses.fields(OrgNode)}
    if set(entry) != fields:
        raise ValueError(f"fields {sorted(entry)}")
    properties = entry["properties"]
    outline = entry["outline"]
    if not isinstance(properties, dict) or not isinstance(outline, list):
        raise ValueError("properties or outline of the wrong type")
    return OrgNode(
        id=str(entry["id"]), file=str(entry["file"]), heading=str(entry["heading"]),
        outline=tuple(str(title) for title in outline), level=int(str(entry["level"])),
        body=str(entry["body"]), properties={str(k): str(v) for k, v in properties.items()},
        text=str(entry["text"]),
    )
