"""Memory: org nodes in SQLite as a Merkle tree, with snapshots and rollback.

Every memory object is an org node (:class:`MemoryNode`). The store keeps them
content-addressed, so the root hash names a whole memory state, a snapshot is
one row, and ``rollback(n)`` restores a state exactly. Importing this package
is cheap: orgparse, numpy and the embedding model load only when used.

Entry points for the loop: :meth:`MemoryStore.open`, ``put``/``delete``/
``get``/``children``, ``snapshot``/``rollback``/``verify``, ``save`` (autosave
and shutdown), ``search``; :func:`flush_turns` before context truncation;
:class:`EmbeddingIndex` for semantic search; :func:`write_back` after the agent
changes memory; ``memory.cli`` for ``passepartout memory ...``.
"""

from passepartout.memory.embeddings import Embedder, EmbeddingIndex, model_available
from passepartout.memory.flush import CONVERSATION_LOG_ID, Turn, flush_turns
from passepartout.memory.nodes import ROOT_ID, MemoryNode
from passepartout.memory.orgimport import ImportReport, import_memex, import_org_file
from passepartout.memory.orgwrite import render_file, write_back
from passepartout.memory.schema import CorruptObjectError, default_home, default_path
from passepartout.memory.store import (
    DEFAULT_KEEP_SNAPSHOTS,
    MemoryStore,
    SearchHit,
    SnapshotInfo,
    StoreStats,
)
from passepartout.memory.verify import VerifyProblem, VerifyReport

__all__ = [
    "CONVERSATION_LOG_ID",
    "DEFAULT_KEEP_SNAPSHOTS",
    "ROOT_ID",
    "CorruptObjectError",
    "Embedder",
    "EmbeddingIndex",
    "ImportReport",
    "MemoryNode",
    "MemoryStore",
    "SearchHit",
    "SnapshotInfo",
    "StoreStats",
    "Turn",
    "VerifyProblem",
    "VerifyReport",
    "default_home",
    "default_path",
    "flush_turns",
    "import_memex",
    "import_org_file",
    "model_available",
    "render_file",
    "write_back",
]
