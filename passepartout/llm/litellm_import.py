"""litellm, imported and configured once: it takes seconds to import, so it loads on
first use or in the model layer's background warm-up, never at import of a module of
ours; its remote cost-map fetch is turned off before it loads.

litellm's ``completion()`` imports its MCP gateway (the ``mcp`` package, starlette and
some 250 modules: about 0.7 s of processor time) the first time a call passes tools,
only to see whether one of them names the MCP gateway of a litellm proxy.  Ours never
do (they are function tools), so every call says so with ``_skip_mcp_handler``: the
flag litellm passes itself to skip that check, which it strips from what it sends
(``filter_internal_params`` lists it).  It is passed only when the installed litellm
says it knows it (:func:`call_options`): never sent to a provider as an unknown field.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)

_litellm: ModuleType | None = None
_import_lock = threading.Lock()
_call_options: dict[str, Any] = {}


def load_litellm() -> ModuleType:
    """Import and configure litellm once (offline cost map, quiet, local provider)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            started = time.perf_counter()
            import litellm

            litellm.telemetry = False
            _apply_optional_setup()
            _call_options.update(_known_call_options())
            log.info("litellm loaded in %.1f s", time.perf_counter() - started)
            _litellm = litellm
    return _litellm


def _apply_optional_setup() -> None:
    """Our litellm settings (tuning.FAST_SETTINGS), and the local model's provider."""
    from passepartout.llm.local import register_local_provider
    from passepartout.llm.tuning import configure_litellm_fast

    configure_litellm_fast()
    try:
        register_local_provider()
    except Exception as err:  # the local model is optional: report, go on
        log.warning("local model provider not registered: %s", err)


def call_options() -> dict[str, Any]:
    """What every ``litellm.completion`` of ours passes besides the request (loads
    litellm): the MCP gateway's check skipped, when this litellm knows the flag."""
    load_litellm()
    return dict(_call_options)


def _known_call_options() -> dict[str, Any]:
    try:
        from litellm.litellm_core_utils.core_helpers import filter_internal_params

        known = filter_internal_params({"_skip_mcp_handler": True}) == {}
    except Exception as err:  # another litellm: the check stays, the call still works
        log.debug("litellm's internal parameters unknown: %s", err)
        known = False
    return {"_skip_mcp_handler": True} if known else {}
