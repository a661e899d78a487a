"""Stage 1: any raw input becomes a Signal, or a ProtocolError says why it cannot."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from passepartout.errors import ProtocolError
from passepartout.signals import Keyword, Signal, plist_to_dict


def perceive(raw: Any) -> Signal:
    """Normalize ``raw``: a Signal, its s-expression text, a plist, a dict, or chat text."""
    if isinstance(raw, Signal):
        signal = raw
    elif isinstance(raw, str):
        text = raw.lstrip()
        if text.startswith("("):
            signal = Signal.from_sexp(text)
        else:
            signal = Signal(payload={"sensor": Keyword("user-input"), "text": raw})
    elif isinstance(raw, Mapping):
        signal = Signal.from_plist({k.lstrip(":"): v for k, v in raw.items()})
    elif isinstance(raw, list):
        signal = Signal.from_plist(plist_to_dict(raw))
    else:
        raise ProtocolError(f"cannot perceive a {type(raw).__name__}", raw_message=repr(raw)[:200])
    if not isinstance(signal.payload, dict):
        raise ProtocolError("the payload must be a property list")
    if signal.type == "event" and signal.sensor is None:
        raise ProtocolError("an event needs a :sensor in its payload")
    return signal
