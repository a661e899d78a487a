"""Semantic relevance with a local embedding model, offline.

The model is one of ``embedders.MODELS``: by default a static embedder whose
weights ship in its PyPI package and need no torch; all-MiniLM-L6-v2 (torch) is
an option. Nothing heavy is imported until the worker thread loads the model, so
``import passepartout.memory`` stays cheap. Vectors are computed in the
background for nodes whose text changed and kept in the store by content key (a
rollback or an unchanged re-import costs no re-embedding); the store forgets
them when another model is chosen. Until the model is loaded, ``search`` returns
None and the store searches full text alone; while the backlog is embedded (all
of a memex after its import), search uses the vectors there are so far.

Memory stays bounded whatever the notes: a model pads each batch to its longest
text, so no batch holds more than ``MAX_BATCH`` texts and no text more than
``CHUNK_CHARS`` characters. A longer node is embedded in pieces (at most
``MAX_CHUNKS``; the rest of a very long node is left to full-text search), each
after the node's title, with the title alone as one more piece, and each piece's
vector is kept: a node scores by its best piece, so a long node is found by the
passage that means what the query means rather than by an average of everything it
says.

A search reads no vector from disk: every stored piece vector is held in memory
(``vectors.PieceMatrix``, loaded once in the background and appended to as each
batch is written), with the segment each current node scores by
(``vectors.HeadMap``, rebuilt when the head moves). The embedder holds no lock a
search needs while it embeds or commits a batch.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from passepartout.memory.embedders import DEFAULT_MODEL, MODELS, Encode, installed
from passepartout.memory.store import MemoryStore, SearchHit
from passepartout.memory.vectors import HeadMap, PieceMatrix

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

DEFAULT_THRESHOLD = 0.75  # the original's relevance cut for the fovea
MAX_BATCH = 64  # texts in one call to the model
CHUNK_CHARS = 1000  # characters in one text given to the model (about 250 tokens)
MAX_CHUNKS = 16  # pieces of one node: the first 16,000 characters count
BACKFILL = 256  # nodes read from the store per round of the backlog
PAD_RATIO = 4  # a call to the model holds no piece over 4 times as long as its shortest
LOAD_ROWS = 2000  # stored vectors read per round when loading them into memory
REFETCH = 5000  # at most this many vectors looked up by key when the head moves


def pieces(text: str, size: int = CHUNK_CHARS, most: int = MAX_CHUNKS) -> list[str]:
    """``text`` in at most ``most`` pieces of at most ``size`` characters, cut at a
    line end or a space when there is one in the second half of the piece."""
    out: list[str] = []
    start = 0
    while start < len(text) and len(out) < most:
        end = start + size
        if end < len(text):
            half = start + size // 2
            cut = max(text.rfind("\n", half, end), text.rfind(" ", half, end))
            end = cut + 1 if cut > 0 else end
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out or [text[:size]]


def titled_pieces(text: str) -> list[str]:
    """A node's text (its title on the first line) in pieces: the title alone (cut to
    a quarter of a piece), then the body in pieces, each after the title and none
    longer than ``CHUNK_CHARS``. The title alone is a piece of its own because a
    question that says what a heading says is nearer its title than its title and
    text (bench/embedders.py, tuning questions)."""
    title, _nl, body = text.partition("\n")
    head = title[: CHUNK_CHARS // 4]
    if not body.strip():
        return [head]
    return [head, *(f"{head}\n{p}" for p in pieces(body, CHUNK_CHARS - len(head) - 1))]


def model_available(model: str = DEFAULT_MODEL) -> bool:
    """True when the package carrying ``model``'s weights is installed."""
    return model in MODELS and installed(model)


class Embedder:
    """Loads one model once, on first use, offline, on the CPU."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu") -> None:
        if model not in MODELS:
            raise ValueError(f"no embedding model {model!r} (choose from {', '.join(MODELS)})")
        self.spec = MODELS[model]
        self.device = device
        self.error: str | None = None
        self._encode: Encode | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def loaded(self) -> bool:
        return self._encode is not None

    def load(self) -> bool:
        """Load the model; False (and ``error`` set) when it cannot be loaded."""
        with self._lock:
            if self._encode is not None or self.error is not None:
                return self._encode is not None
            # Never reach for a hub: the weights are inside the package.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            start = time.perf_counter()
            try:
                self._encode = self.spec.load(self.device)
            except Exception as e:  # missing package, broken install, bad weights
                self.error = f"{type(e).__name__}: {e}"
                log.warning("embedding model %s unavailable, using full-text search: %s",
                            self.name, e)
                return False
            log.info("embedding model %s loaded in %.2f s", self.name,
                     time.perf_counter() - start)
            return True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not self.load() or self._encode is None:
            raise RuntimeError(f"embedding model unavailable: {self.error}")
        return self._encode(list(texts))


class EmbeddingIndex:
    """Background embedding of changed nodes, and cosine search over the head."""

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        batch: int = MAX_BATCH,
    ) -> None:
        self.store = store
        self.embedder = embedder or Embedder()
        self.threshold = threshold
        self.batch = max(1, min(batch, MAX_BATCH))
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._busy = threading.Event()
        self._thread: threading.Thread | None = None
        # The stored vectors in memory, and which current node scores by which.
        self._lock = threading.Lock()
        self._matrix = PieceMatrix(self.embedder.spec.dims)
        self._epoch = store.vectors_epoch
        self._loaded = False  # every vector stored before the start is in the matrix
        self._head: HeadMap | None = None
        self._refreshing = threading.Event()  # the head is being read again

    def start(self) -> EmbeddingIndex:
        """Attach to the store and start the worker (it loads the model first)."""
        # Vectors of another model are of no use (nor of the same size): forget them.
        self.store.use_embedder(self.embedder.name)
        self.store.add_change_listener(self._enqueue)
        self.store.set_semantic(self)
        self._busy.set()
        self._thread = threading.Thread(target=self._run, name="memory-embeddings", daemon=True)
        self._thread.start()
        return self

    def attach(self, backlog: int | None = None) -> bool:
        """Search from this thread without a worker (the CLI): embed what has no
        vector yet, then serve the store's searches. False when the model cannot load.

        With ``backlog``, a backlog larger than that is left alone (a daemon embeds
        it in the background) and search uses the vectors already stored."""
        if not self.embedder.load():
            return False
        self.store.use_embedder(self.embedder.name)
        self._load()
        if backlog is None or self.store.count_without_vectors(backlog + 1) <= backlog:
            self._backfill()
        self.store.set_semantic(self)
        return True

    def stop(self, timeout: float = 10.0) -> None:
        self.store.remove_change_listener(self._enqueue)
        self.store.set_semantic(None)
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)
            self._thread = None

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until every queued text is embedded (for tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._busy.is_set() and self._queue.empty():
                return True
            time.sleep(0.02)
        return False

    def search(self, query: str, k: int, threshold: float | None) -> list[SearchHit] | None:
        """Top ``k`` nodes by cosine similarity (>= ``threshold`` when given), a node
        scored by its best piece, ties by id; None while the model is not loaded, so
        the store uses full-text search."""
        if not self.embedder.loaded:
            return None
        import numpy as np

        matrix, ids, segments = self._current_head()
        if not len(segments) or k < 1:
            return []
        scores = matrix.segment_scores(self.vectors([query])[0])[segments]
        candidates = (np.arange(len(scores)) if threshold is None
                      else np.nonzero(scores >= threshold)[0])
        if k < len(candidates):  # the k best and every node tied with the k-th
            kth = np.partition(scores[candidates], len(candidates) - k)[-k]
            candidates = candidates[scores[candidates] >= kth]
        chosen = sorted(candidates.tolist(), key=lambda i: (-float(scores[i]), ids[i]))[:k]
        titles = self.store.titles([ids[i] for i in chosen])
        return [
            SearchHit(ids[i], titles[ids[i]], float(scores[i]), "embedding")
            for i in chosen
            if ids[i] in titles  # deleted since the head was read
        ]

    def _current_head(self) -> tuple[PieceMatrix, list[str], Any]:
        """The matrix, and the current nodes with vectors with the segment each
        scores by (arrays a search reads without a lock: they are only appended to)."""
        if self._epoch != self.store.vectors_epoch:  # the stored vectors were dropped
            with self._lock:
                if self._epoch != self.store.vectors_epoch:
                    self._epoch = self.store.vectors_epoch
                    self._matrix = PieceMatrix(self.embedder.spec.dims)
                    self._head = None
                    self._loaded = False
            self._load()  # read them again
        elif not self._loaded and self._thread is None:
            self._load()  # searched without start() or attach(): the worker loads them
        if not len(self._matrix):  # nothing embedded yet: no node to map
            return self._matrix, [], ()
        root = self.store.root_hash()
        head = self._head
        if head is None or head.root != root:
            if not self._refreshing.is_set():
                head = self._refresh_head()
            elif head is None:  # the worker is reading the head: no wait for it
                return self._matrix, [], ()
        with self._lock:
            head.follow(self._matrix)
            return self._matrix, head.ids, head.segments

    def _refresh_head(self) -> HeadMap:
        """Read the head's nodes again (after a write, an import, a rollback): the
        worker does it after each batch, so a search seldom has to. No lock is held
        while reading: a search meanwhile uses the map before (none at first)."""
        self._refreshing.set()
        try:
            return self._read_head()
        finally:
            self._refreshing.clear()

    def _read_head(self) -> HeadMap:
        root, keys = self.store.head_keys()
        head = HeadMap(root, keys)
        if self._loaded:
            # Vectors stored by another process since (at most a bounded few looked
            # up; the backlog fills the rest in).
            missing = head.missing(self._matrix)
            if 0 < len(missing) <= REFETCH:
                found = self.store.vectors_of(missing)
                with self._lock:
                    self._add(found)
        with self._lock:
            self._head = head
        return head

    def _add(self, rows: Sequence[tuple[str, bytes]]) -> None:
        import numpy as np

        self._matrix.add((ck, np.frombuffer(v, dtype=np.float32)) for ck, v in rows)

    def _load(self) -> None:
        """Read every stored vector into memory, a bounded part at a time (searches
        meanwhile use what is read so far)."""
        with self._lock:
            if self._loaded:
                return
            matrix = self._matrix
        after = ""
        while True:
            rows = self.store.stored_vectors(after, LOAD_ROWS)
            if not rows:
                break
            with self._lock:
                if self._matrix is not matrix:
                    return  # reset meanwhile: that reset loads them
                self._add(rows)
            after = rows[-1][0]
        with self._lock:
            if self._matrix is matrix:
                self._loaded = True

    def _enqueue(self, changed: list[tuple[str, str]]) -> None:
        for item in changed:
            self._queue.put(item)

    def piece_vectors(self, texts: Sequence[str]) -> list[np.ndarray]:
        """For each text, one unit vector per piece of it (``titled_pieces``, in that
        order), the model called on at most ``self.batch`` pieces at a time. The
        model pads a call's texts to its longest, so pieces go to it shortest first
        and a call ends before a piece over ``PAD_RATIO`` times its shortest: a
        title alone is not padded to the length of a passage."""
        import numpy as np

        flat: list[tuple[int, int, str]] = []  # (text, piece of it, piece)
        counts: list[int] = []
        for i, text in enumerate(texts):
            parts = titled_pieces(text)
            flat += [(i, j, piece) for j, piece in enumerate(parts)]
            counts.append(len(parts))
        flat.sort(key=lambda item: len(item[2]))
        calls: list[list[tuple[int, int, str]]] = []
        for item in flat:
            if (not calls or len(calls[-1]) >= self.batch
                    or len(item[2]) > PAD_RATIO * max(1, len(calls[-1][0][2]))):
                calls.append([])
            calls[-1].append(item)
        found: dict[tuple[int, int], np.ndarray] = {}
        for call in calls:
            vecs = np.asarray(self.embedder.embed([p for _i, _j, p in call]), dtype=np.float32)
            for (i, j, _p), v in zip(call, vecs, strict=True):
                found[i, j] = v
        dims = self.embedder.spec.dims
        return [np.stack([found[i, j] for j in range(n)]) if n
                else np.zeros((0, dims), dtype=np.float32) for i, n in enumerate(counts)]

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text, the model called on at most ``self.batch``
        pieces of at most ``CHUNK_CHARS`` characters at a time (see the module)."""
        import numpy as np

        owner: list[int] = []
        weight: list[float] = []
        flat: list[str] = []
        for i, text in enumerate(texts):
            for piece in pieces(text):
                owner.append(i)
                weight.append(float(len(piece) or 1))
                flat.append(piece)
        out: np.ndarray | None = None
        for start in range(0, len(flat), self.batch):
            vecs = np.asarray(self.embedder.embed(flat[start : start + self.batch]))
            if out is None:
                out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
            rows = owner[start : start + self.batch]
            w = np.asarray(weight[start : start + self.batch], dtype=np.float32)
            np.add.at(out, rows, vecs * w[:, None])
        if out is None:
            return np.zeros((0, self.embedder.spec.dims), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def _embed_and_store(self, items: list[tuple[str, str]]) -> bool:
        """Embed and store, one model batch at a time: each batch's vectors are
        stored (and searched) as soon as they are ready."""
        unique = dict(items)  # equal texts share one vector
        group: list[tuple[str, str]] = []
        size = 0
        for ck, text in unique.items():
            n = len(titled_pieces(text))
            if group and size + n > self.batch:
                if not self._store_group(group):
                    return False
                group, size = [], 0
            group.append((ck, text))
            size += n
        return self._store_group(group) if group else True

    def _store_group(self, group: list[tuple[str, str]]) -> bool:
        try:
            vecs = self.piece_vectors([text for _ck, text in group])
        except Exception:  # one bad batch must not stop the worker
            log.exception("embedding a batch of %d texts failed", len(group))
            return False
        done = [(ck, v) for (ck, _t), v in zip(group, vecs, strict=True) if len(v)]
        self.store.store_vectors([(ck, v.tobytes()) for ck, v in done])
        # A head map stale or missing is read again here, said before the vectors
        # are searchable, so that a search meanwhile does not read it too.
        stale = self._head is None or self._head.root != self.store.root_hash()
        if stale:
            self._refreshing.set()
        try:
            with self._lock:  # stored: searched from now on
                if self._epoch == self.store.vectors_epoch:
                    self._matrix.add(done)
            if stale:
                self._refresh_head()
        finally:
            self._refreshing.clear()
        return True

    def _keep_head(self) -> None:
        """Have the head map ready for the next search (in the worker, not in it)."""
        head = self._head
        if not len(self._matrix):
            return  # a search needs no map before a vector is there
        if head is None or head.root != self.store.root_hash():
            self._refresh_head()

    def _backfill(self) -> None:
        """Embed what the store holds without vectors, in one walk over the index."""
        after = 0
        while True:
            after, todo = self.store.backlog(after, BACKFILL)
            if not todo or not self._embed_and_store(todo):
                return

    def _run(self) -> None:
        try:
            if not self.embedder.load():
                return
            self._load()
            self._keep_head()
            self._backfill()
            self._busy.clear()
            while True:
                item = self._queue.get()
                if item is None:
                    return
                self._busy.set()
                items = [item]
                while len(items) < self.batch:
                    try:
                        nxt = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is None:
                        self._queue.put(None)
                        break
                    items.append(nxt)
                self._embed_and_store(items)
                self._busy.clear()
        except RuntimeError as e:  # the store was closed under us
            log.info("embedding worker stopped: %s", e)
        finally:
            self._busy.clear()
