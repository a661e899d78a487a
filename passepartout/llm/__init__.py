"""The model layer: litellm providers, the cascade, tier routing, token economics,
budgets, sessions and the loop's ``think``.

Importing this package is cheap: litellm loads in the background after :func:`install`,
or on the first call.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from passepartout.config import read_dotenv

if TYPE_CHECKING:
    from passepartout.agent import Agent
    from passepartout.llm.think import ModelLayer

log = logging.getLogger(__name__)


def install(agent: Agent, *, warm: bool = True) -> ModelLayer:
    """Plug the model layer into ``agent`` (idempotent); returns the :class:`ModelLayer`.

    Attaches the model at the loop's THINK hook (a think given to the Agent, a test's,
    still wins) and publishes the
    services ``llm``, ``ledger``, ``sessions`` and ``budgets``.  The built-in tools
    come with the ``chat`` skill.  With ``warm``, litellm starts importing in a
    background thread.
    """
    layer = agent.services.llm
    if layer is not None:
        return layer
    from passepartout.errors import PassepartoutError
    from passepartout.llm import models
    from passepartout.llm.provider import warm_up
    from passepartout.llm.think import ModelLayer
    from passepartout.loop.hooks import THINK

    export_provider_settings(agent.config.config_dir / ".env")
    layer = ModelLayer(agent)
    agent.hooks.attach(THINK, layer.think, owner="llm")  # a think given to the Agent wins
    services = agent.services
    services.llm, services.ledger = layer, layer.ledger
    services.sessions, services.budgets = layer.sessions, layer.budgets
    from passepartout.llm.shown import ShownTurns

    agent.observers.append(ShownTurns(layer.sessions).observe)  # what resume shows
    agent.on_shutdown(layer.close)
    if warm:
        try:
            model = models.default_model(agent.config)
        except PassepartoutError:
            model = None  # said in the chat when a call is made
        warm_up(model)
    return layer


def export_provider_settings(dotenv: Any) -> None:
    """Providers' variables from the config directory's ``.env`` (OPENAI_API_KEY, ...),
    where litellm reads them: the process environment, which wins."""
    for key, value in read_dotenv(dotenv).items():
        if not key.startswith("PASSEPARTOUT_") and key not in os.environ:
            os.environ[key] = value


__all__ = ["export_provider_settings", "install"]
