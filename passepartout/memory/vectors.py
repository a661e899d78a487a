"""Every stored piece vector in memory, so that a search reads no vector from disk.

The store keeps a node's vectors (one per piece of its text) by content key;
``PieceMatrix`` holds the same rows in one float32 matrix, a content key's rows
together (a *segment*), appended to as batches are written and never changed in
place: a search takes a view of the rows there are and scores them without a
lock while the embedder appends after them. ``HeadMap`` says which segment each
current node scores by; it is rebuilt when the head moves (a write, an import, a
rollback, a deletion) and extended when segments are appended.

numpy is imported by the callers' worker and search, never at module import.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

BLOCK = 4096  # rows in one block of the matrix (4 MB at 256 dimensions)


class PieceMatrix:
    """Append-only rows of piece vectors, grouped by content key, in blocks of
    ``BLOCK`` rows: growing never copies what is there (memory stays within a block
    of the rows held), and rows once written never change."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._lock = threading.Lock()
        self._blocks: list[Any] = []
        self._n = 0  # rows in use
        self._starts: list[int] = []  # first row of each segment
        self._keys: list[str] = []  # content key of each segment
        self._segment: dict[str, int] = {}  # content key -> segment
        self._view: tuple[list[Any], Any, int] | None = None

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def rows(self) -> int:
        return self._n

    def __contains__(self, ckey: str) -> bool:
        return ckey in self._segment

    def add(self, items: Iterable[tuple[str, Any]]) -> int:
        """Append each (content key, pieces x dims array) not held yet; returns how
        many segments were added."""
        import numpy as np

        with self._lock:
            added = 0
            for ckey, vecs in items:
                vecs = np.asarray(vecs, dtype=np.float32).reshape(-1, self.dims)
                if ckey in self._segment or not len(vecs):
                    continue
                self._segment[ckey] = len(self._keys)
                self._keys.append(ckey)
                self._starts.append(self._n)
                done = 0
                while done < len(vecs):
                    at = self._n % BLOCK
                    if at == 0:
                        self._blocks.append(np.zeros((BLOCK, self.dims), dtype=np.float32))
                    take = min(BLOCK - at, len(vecs) - done)
                    self._blocks[-1][at : at + take] = vecs[done : done + take]
                    done += take
                    self._n += take
                added += 1
            if added:
                self._view = None
            return added

    def keys(self, start: int = 0) -> list[str]:
        """The content keys of segments ``start`` onwards, in segment order."""
        with self._lock:
            return self._keys[start:]

    def view(self) -> tuple[list[Any], Any, int]:
        """(the rows in use as blocks, each segment's first row, the segment count):
        arrays a search may read without a lock."""
        import numpy as np

        with self._lock:
            if self._view is None:
                full, rest = divmod(self._n, BLOCK)
                blocks = self._blocks[:full] + ([self._blocks[full][:rest]] if rest else [])
                self._view = (blocks, np.asarray(self._starts, dtype=np.intp), len(self._keys))
            return self._view

    def segment_scores(self, query: np.ndarray) -> np.ndarray:
        """Each segment's best piece's cosine with the unit vector ``query``."""
        import numpy as np

        blocks, starts, count = self.view()
        if not count:
            return np.zeros(0, dtype=np.float32)
        return np.maximum.reduceat(np.concatenate([b @ query for b in blocks]), starts)


class HeadMap:
    """The current nodes that have vectors, each with the segment it scores by."""

    def __init__(self, root: str, head: Sequence[tuple[str, str]]) -> None:
        import numpy as np

        self.root = root
        self.by_key: dict[str, list[str]] = {}
        for node_id, ckey in head:
            self.by_key.setdefault(ckey, []).append(node_id)
        self.matrix: PieceMatrix | None = None  # the matrix the segments are of
        self.ids: list[str] = []
        self._segments: list[int] = []
        self.mapped = 0  # segments of the matrix looked at so far
        self._array: Any = np.zeros(0, dtype=np.intp)

    def follow(self, matrix: PieceMatrix) -> None:
        """Map the segments of ``matrix`` (all again when it is another one than
        before; lists a search holds are left as they were)."""
        if matrix is not self.matrix:
            import numpy as np

            self.matrix, self.ids, self._segments, self.mapped = matrix, [], [], 0
            self._array = np.zeros(0, dtype=np.intp)
        if self.mapped < len(matrix):
            self.extend(matrix.keys(self.mapped))

    def extend(self, keys: Sequence[str]) -> None:
        """Take in segments ``mapped`` onwards, whose content keys are ``keys``."""
        import numpy as np

        start = self.mapped
        for i, ckey in enumerate(keys):
            for node_id in self.by_key.get(ckey, ()):
                self.ids.append(node_id)
                self._segments.append(start + i)
        self.mapped += len(keys)
        if keys:
            self._array = np.asarray(self._segments, dtype=np.intp)

    def missing(self, matrix: PieceMatrix) -> list[str]:
        """Content keys of current nodes the matrix has no segment for."""
        return [k for k in self.by_key if k not in matrix]

    @property
    def segments(self) -> Any:
        return self._array
