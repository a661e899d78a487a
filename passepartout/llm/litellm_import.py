"""litellm, imported and configured once: it takes seconds to import, so it loads on
first use or in the model layer's background warm-up, never at import of a module of
ours; its remote cost-map fetch is turned off before it loads."""

from __future__ import annotations

import logging
import os
import threading
import time
from types import ModuleType

log = logging.getLogger(__name__)

_litellm: ModuleType | None = None
_import_lock = threading.Lock()


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
