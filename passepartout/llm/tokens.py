"""Token counting with each model's own tokenizer, and token prices from litellm's map.

OpenAI models count with tiktoken (the BPE files litellm bundles, so nothing is
fetched), Anthropic models with the tokenizer litellm bundles for Claude, anything
else with ``cl100k_base`` (a fair estimate for most BPE vocabularies).  Counting does
not import litellm; prices do (litellm's cost map is the single source of prices).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# What OpenAI's chat format adds around each message and before the reply.
MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3

# The estimate: what models without a tokenizer of their own count with, and the
# tokenizer litellm loads for itself on its first call.
ESTIMATE = "cl100k_base"
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")
_lock = threading.Lock()


def _bundled_tokenizers() -> Path | None:
    """litellm's directory of tokenizer files, found without importing litellm."""
    spec = importlib.util.find_spec("litellm")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "litellm_core_utils" / "tokenizers"
        if candidate.is_dir():
            return candidate
    return None


def _bare(model: str) -> str:
    """The model name without its provider prefix (``openai/gpt-4o`` -> ``gpt-4o``)."""
    return model.rsplit("/", 1)[-1].lower()


def encoding_name(model: str | None) -> str:
    """Which tokenizer counts for ``model``: ``o200k_base``, ``cl100k_base`` or ``claude``."""
    if not model:
        return ESTIMATE
    lowered = model.lower()
    bare = _bare(model)
    if "claude" in lowered or lowered.startswith("anthropic/"):
        return "claude"
    if bare.startswith(_O200K_PREFIXES):
        return "o200k_base"
    return ESTIMATE


@cache
def _tiktoken(name: str) -> Callable[[str], int]:
    with _lock:
        bundled = _bundled_tokenizers()
        # litellm ships the BPE files under their tiktoken cache names: never download.
        if bundled is not None and "TIKTOKEN_CACHE_DIR" not in os.environ:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)
        import tiktoken

        enc = tiktoken.get_encoding(name)
    return _remembered(lambda text: len(enc.encode(text, disallowed_special=())))


@cache
def _claude() -> Callable[[str], int]:
    bundled = _bundled_tokenizers()
    path = bundled / "anthropic_tokenizer.json" if bundled else None
    if path is None or not path.is_file():
        log.info("no bundled Claude tokenizer: counting with cl100k_base")
        return _tiktoken(ESTIMATE)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(path.read_text(encoding="utf-8"))
    return _remembered(lambda text: len(tok.encode(text).ids))


def _remembered(count: Callable[[str], int]) -> Callable[[str], int]:
    """The same texts come back every turn (the prefix, the tool schemas, old turns):
    count each once."""
    return lru_cache(maxsize=8192)(count)


_put_off: set[str] = set()  # tokenizers whose load waits (see load_later)
_loaded: set[str] = set()


def counter(model: str | None) -> Callable[[str], int]:
    """A function that counts the tokens of a text for ``model`` (with the estimate
    while the load of its own tokenizer is put off, see :func:`load_later`)."""
    name = encoding_name(model)
    if name in _put_off:
        return _tiktoken(ESTIMATE)
    return _load(name)


def _load(name: str) -> Callable[[str], int]:
    count = _claude() if name == "claude" else _tiktoken(name)
    _loaded.add(name)
    return count


def load_later(model: str | None, delay: float) -> threading.Timer | None:
    """Load ``model``'s own tokenizer in the background in ``delay`` seconds, counting
    with the estimate until then.

    Loading one takes a third of a second of processor time, in a start that is bound
    by it: a daemon answers sooner when the load waits until it is ready (the first
    turns then count as every model without its own tokenizer does; for o200k_base
    the counts of English and org text differ by under 1 %).  None when the estimate is
    its tokenizer or it is loaded already."""
    name = encoding_name(model)
    if name == ESTIMATE or name in _loaded:
        return None

    def load() -> None:
        try:
            _load(name)
        except Exception as err:  # counted with the estimate, as a model of no tokenizer
            log.warning("the %s tokenizer did not load: %s", name, err)
            return
        _put_off.discard(name)

    _put_off.add(name)
    timer = threading.Timer(delay, load)
    timer.name, timer.daemon = "tokenizer-load", True
    timer.start()
    return timer


def count_tokens(text: str | Iterable[Mapping[str, Any]], model: str | None = None) -> int:
    """Tokens of a text, or of a list of chat messages (with the chat format's overhead)."""
    count = counter(model)
    if isinstance(text, str):
        return count(text)
    return sum(message_tokens(m, count) for m in text) + REPLY_PRIMING


def message_tokens(message: Mapping[str, Any], count: Callable[[str], int]) -> int:
    """Tokens of one chat message: its text, its tool calls, and the per-message overhead."""
    total = MESSAGE_OVERHEAD + count(content_text(message.get("content")))
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {}) if isinstance(call, Mapping) else {}
        total += count(str(fn.get("name", ""))) + count(str(fn.get("arguments", ""))) + 3
    return total


def content_text(content: Any) -> str:
    """The text of a message's content, whether a string or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content
        )
    return str(content)


def tools_tokens(schemas: list[dict[str, Any]], model: str | None = None) -> int:
    """Tokens the tool schemas take in the prompt (as their JSON text)."""
    if not schemas:
        return 0
    return counter(model)(json.dumps(schemas, separators=(",", ":")))


@dataclass(frozen=True)
class Price:
    """USD per token: input, output, and input read from the provider's prompt cache."""

    input: float = 0.0
    output: float = 0.0
    cached_input: float = 0.0
    known: bool = False

    def cost(self, tokens_in: int, tokens_out: int, tokens_cached: int = 0) -> float:
        """The cost of one call; ``tokens_in`` includes the cached ones (OpenAI's usage)."""
        cached = min(tokens_cached, tokens_in)
        return (tokens_in - cached) * self.input + cached * self.cached_input + (
            tokens_out * self.output
        )


def price(model: str) -> Price:
    """The model's prices from litellm's (local) cost map; unknown models cost nothing."""
    from passepartout.llm.litellm_import import load_litellm

    cost_map: Mapping[str, Mapping[str, Any]] = load_litellm().model_cost
    entry = _lookup(cost_map, model)
    if entry is None:
        return Price()
    inp = float(entry.get("input_cost_per_token") or 0.0)
    cached = entry.get("cache_read_input_token_cost")
    return Price(
        input=inp,
        output=float(entry.get("output_cost_per_token") or 0.0),
        cached_input=float(cached) if cached is not None else inp,
        known=True,
    )


def _lookup(cost_map: Mapping[str, Mapping[str, Any]], model: str) -> Mapping[str, Any] | None:
    candidates = [model, model.lower()]
    if "/" in model:
        candidates += [model.split("/", 1)[1], _bare(model)]
    for key in candidates:
        if key in cost_map:
            return cost_map[key]
    return None


def token_cost(model: str, tokens_in: int, tokens_out: int, tokens_cached: int = 0) -> float:
    """USD for a call to ``model`` with these token counts."""
    return price(model).cost(tokens_in, tokens_out, tokens_cached)
