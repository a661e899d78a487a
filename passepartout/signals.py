"""Signals and their s-expression form.

A Signal is the seeds' plist ``(:type :event :depth 0 :meta (...) :payload (...))``.
In Python, keywords are :class:`Keyword` (a ``str`` subclass, so ``Keyword("heartbeat")
== "heartbeat"``), symbols are :class:`Symbol`, strings are ``str``; ``nil`` is ``None``
and ``t`` is ``True``.  The codec is lossless over that domain: Elisp's ``nil`` and the
empty list are one value, so ``()`` reads back as ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sexpdata

from passepartout.errors import ProtocolError


class Keyword(str):
    """A Lisp keyword such as ``:user-input`` (stored without the colon)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Keyword({str.__repr__(self)})"


class Symbol(str):
    """A Lisp symbol that is not a keyword, ``nil`` or ``t``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Symbol({str.__repr__(self)})"


MESSAGE_TYPES = frozenset({"request", "event", "response", "log", "status"})

def _encode_string(text: str) -> str:
    # Elisp strings take any character literally except the quote and backslash.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _encode_float(x: float) -> str:
    if math.isnan(x):
        return "0.0e+NaN"
    if math.isinf(x):
        return "1.0e+INF" if x > 0 else "-1.0e+INF"
    text = repr(x)
    return text if ("." in text or "e" in text) else text + ".0"


def dumps(value: Any) -> str:
    """Encode a Python value as an s-expression (the inverse of :func:`loads`)."""
    parts: list[str] = []
    _dump(value, parts)
    return "".join(parts)


def _dump(value: Any, out: list[str]) -> None:
    if value is None or value is False:
        out.append("nil")
    elif value is True:
        out.append("t")
    elif isinstance(value, Keyword):
        out.append(":" + value)
    elif isinstance(value, Symbol):
        out.append(value)
    elif isinstance(value, str):
        out.append(_encode_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_encode_float(value))
    elif isinstance(value, Mapping):
        if not value:
            out.append("nil")
            return
        out.append("(")
        first = True
        for key, item in value.items():
            if not first:
                out.append(" ")
            first = False
            out.append(":" + str(key))
            out.append(" ")
            _dump(item, out)
        out.append(")")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("nil")
            return
        out.append("(")
        for i, item in enumerate(value):
            if i:
                out.append(" ")
            _dump(item, out)
        out.append(")")
    else:
        raise ProtocolError(f"cannot encode a {type(value).__name__} as an s-expression")


# Elisp's printed forms of the floats that have no digits.
_SPECIAL_FLOATS = {
    "1.0e+INF": math.inf,
    "-1.0e+INF": -math.inf,
    "0.0e+NaN": math.nan,
    "-0.0e+NaN": math.nan,
}


def from_sexpdata(value: Any) -> Any:
    """Convert what sexpdata (and python-epc) read into this module's value domain."""
    if isinstance(value, sexpdata.Symbol):
        name = str(value)
        if name == "nil":
            return None
        if name == "t":
            return True
        if name.startswith(":") and len(name) > 1:
            return Keyword(name[1:])
        if name in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[name]
        return Symbol(name)
    if isinstance(value, sexpdata.Quoted):
        return [Symbol("quote"), from_sexpdata(value.value())]
    if isinstance(value, list | tuple):
        return [from_sexpdata(v) for v in value] or None
    if isinstance(value, bool):
        return value or None
    return value


def loads(text: str) -> Any:
    """Read one s-expression; malformed text is a :class:`ProtocolError`."""
    try:
        raw = sexpdata.loads(text, nil=None, true=None, false=None)
    except Exception as err:  # sexpdata raises several unrelated types
        raise ProtocolError("invalid s-expression", raw_message=text[:200]) from err
    return from_sexpdata(raw)


def plist_to_dict(items: Any) -> dict[str, Any]:
    """Read a property list ``(:a 1 :b 2)`` as ``{"a": 1, "b": 2}``."""
    if items is None:
        return {}
    if isinstance(items, Mapping):
        return dict(items)
    if not isinstance(items, list) or len(items) % 2:
        raise ProtocolError("a property list needs keyword/value pairs")
    result: dict[str, Any] = {}
    for key, value in zip(items[::2], items[1::2], strict=True):
        if not isinstance(key, Keyword):
            raise ProtocolError(f"property list key {key!r} is not a keyword")
        result[str(key)] = value
    return result


@dataclass(slots=True)
class Signal:
    """One message through the loop: what happened, where it came from, how deep."""

    type: str = "event"
    payload: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    depth: int = 0

    @property
    def sensor(self) -> str | None:
        sensor = self.payload.get("sensor")
        return str(sensor) if sensor is not None else None

    @property
    def session_id(self) -> str | None:
        value = self.meta.get("session-id")
        return str(value) if value is not None else None

    def child(self, payload: dict[str, Any], *, type: str = "event") -> Signal:
        """A feedback signal one level deeper that keeps this signal's meta."""
        return Signal(type=type, payload=payload, meta=dict(self.meta), depth=self.depth + 1)

    def to_plist(self) -> dict[str, Any]:
        return {
            "type": Keyword(self.type),
            "depth": self.depth,
            "meta": _keywordize(self.meta),
            "payload": _keywordize(self.payload),
        }

    def to_sexp(self) -> str:
        return dumps(self.to_plist())

    @classmethod
    def from_plist(cls, plist: Any) -> Signal:
        fields = plist_to_dict(plist)
        kind = fields.get("type", Keyword("event"))
        if not isinstance(kind, str) or str(kind) not in MESSAGE_TYPES:
            raise ProtocolError(f"unknown message type {kind!r}")
        depth = fields.get("depth") or 0
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
            raise ProtocolError(f"depth must be a natural number, not {depth!r}")
        return cls(
            type=str(kind),
            payload=plist_to_dict(fields.get("payload")),
            meta=plist_to_dict(fields.get("meta")),
            depth=depth,
        )

    @classmethod
    def from_sexp(cls, text: str) -> Signal:
        return cls.from_plist(loads(text))


# Payload values that name a kind of thing travel as keywords, not strings.
_KEYWORD_VALUED = frozenset({"sensor", "source", "origin", "tier", "target", "action"})


def _keywordize(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {
        k: Keyword(v) if k in _KEYWORD_VALUED and type(v) is str else v for k, v in fields.items()
    }
