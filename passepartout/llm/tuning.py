"""litellm settings that cut its per-call overhead (figures: bench/litellm_overhead.py)."""

from __future__ import annotations

from typing import Any

FAST_SETTINGS: dict[str, Any] = {
    "suppress_debug_info": True,
    "turn_off_message_logging": True,
    "disable_streaming_logging": True,
    "logging": False,
    "disable_end_user_cost_tracking": True,
    "disable_token_counter": True,
    "disable_add_transform_inline_image_block": True,
}


def configure_litellm_fast() -> None:
    import litellm

    for name, value in FAST_SETTINGS.items():
        setattr(litellm, name, value)
