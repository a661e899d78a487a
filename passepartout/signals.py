"""Signals and their s-expression form.

A Signal is the seeds' plist ``(:type :event :depth 0 :meta (...) :payload (...))``.
In Python, keywords are :class:`Keyword` (a ``str`` subclass, so ``Keyword("heartbeat")
== "heartbeat"``), symbols are :class:`Symbol`, strings are ``str``; ``nil`` is ``None``
and ``t`` is ``True``.  The codec is lossless over that domain: Elisp's ``nil`` and the
empty list are one value, so ``()`` reads back as ``None``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sexpdata

from passepartout.errors import ProtocolError
from passepartout.wire.sexpread import DECLINED, SPECIAL_FLOATS, read_plain


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


MAX_NESTING = 100  # deeper input is refused before it can exhaust the stack

# Strings this long can travel as raw bytes beside the s-expression (an attachment), in
# whose place the s-expression holds the symbol ``passepartout-attachment-N``: printing
# and reading a megabyte of escaped text costs Elisp tens of milliseconds.
ATTACHMENT_MIN = 16 * 1024
ATTACHMENT_PREFIX = "passepartout-attachment-"

MESSAGE_TYPES = frozenset({"request", "event", "response", "log", "status"})


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
        if name in SPECIAL_FLOATS:
            return SPECIAL_FLOATS[name]
        return Symbol(name)
    if isinstance(value, sexpdata.Quoted):
        return [Symbol("quote"), from_sexpdata(value.x)]
    if isinstance(value, sexpdata.Delimiters):  # an Elisp vector [a b]: a list
        return [from_sexpdata(v) for v in value.I] or None
    if isinstance(value, list | tuple):
        return [from_sexpdata(v) for v in value] or None
    if isinstance(value, bool):
        return value or None
    return value


def loads(text: str, attachments: list[str] | None = None) -> Any:
    """Read one s-expression from Emacs into our values (ProtocolError when malformed).

    With ``attachments``, each ``passepartout-attachment-N`` symbol is replaced by the
    N-th of them; each must be used exactly once."""
    value = _read(text)
    if attachments is None:
        return value
    used: set[int] = set()
    value = _attach(value, attachments, used)
    if len(used) != len(attachments):
        raise ProtocolError(f"{len(attachments) - len(used)} attachment(s) not referenced")
    return value


def _attach(value: Any, attachments: list[str], used: set[int]) -> Any:
    if isinstance(value, list):
        return [_attach(item, attachments, used) for item in value]
    if isinstance(value, Symbol) and value.startswith(ATTACHMENT_PREFIX):
        index = value[len(ATTACHMENT_PREFIX):]
        if not index.isdigit() or int(index) >= len(attachments) or int(index) in used:
            raise ProtocolError(f"{value} names no attachment of this frame")
        used.add(int(index))
        return attachments[int(index)]
    return value


def _read(text: str) -> Any:
    value = read_plain(text, MAX_NESTING)
    if value is not DECLINED:
        return value
    try:
        raw = sexpdata.loads(text, nil=None, true=None, false=None)
    except RecursionError:
        raise ProtocolError("s-expression nested too deeply") from None
    except Exception as err:  # sexpdata raises assorted types for malformed text
        raise ProtocolError(f"invalid s-expression ({type(err).__name__})") from None
    _check_nesting(raw)
    return from_sexpdata(raw)


def _check_nesting(raw: Any) -> None:
    # Iterative, so that a hostile depth cannot exhaust the stack before we refuse it.
    stack = [(raw, 0)]
    while stack:
        node, depth = stack.pop()
        children = _children(node)
        if children is None:
            continue
        if depth >= MAX_NESTING:
            raise ProtocolError(f"s-expression nested deeper than {MAX_NESTING} levels")
        stack.extend((child, depth + 1) for child in children)


def _children(node: Any) -> Any:
    if isinstance(node, sexpdata.Delimiters):
        return node.I
    if isinstance(node, sexpdata.Quoted):
        return (node.x,)
    return node if isinstance(node, list) else None


def dumps(value: Any, attachments: list[str] | None = None) -> str:
    """Encode a value for Elisp's ``read`` (the inverse of :func:`loads`); dicts and
    dataclasses become plists, paths and other objects their text (never a ``repr``).

    With an ``attachments`` list, each string of ATTACHMENT_MIN characters or more is
    appended to it and written as its placeholder symbol instead; unless the value holds
    a symbol that reads as a placeholder, when the whole value is written plain."""
    out: list[str] = []
    try:
        _encode(value, out, 0, attachments)
    except _Ambiguous:
        assert attachments is not None
        attachments.clear()
        out = []
        _encode(value, out, 0, None)
    return "".join(out)


class _Ambiguous(Exception):
    """The value holds a symbol that its reader would take for a placeholder."""


# The characters both Elisp's reader and sexpdata's take escaped inside a symbol.
_SYMBOL_SPECIAL = re.compile(r"""([ "';()\[\]#`,?\\])""")


def _symbol_text(name: str) -> str:
    if not name:
        return "##"
    text = _SYMBOL_SPECIAL.sub(r"\\\1", name)
    try:
        float(name)
    except ValueError:
        return text
    return "\\" + text  # a symbol that would read as a number


def _encode(value: Any, out: list[str], depth: int, attachments: list[str] | None) -> None:
    if depth > MAX_NESTING:
        raise ProtocolError(f"value nested deeper than {MAX_NESTING} levels")
    if value is None or value is False:
        out.append("nil")
    elif value is True:
        out.append("t")
    elif isinstance(value, Keyword):
        out.append(":" + _symbol_text(value))
    elif isinstance(value, Symbol):
        if attachments is not None and value.startswith(ATTACHMENT_PREFIX):
            raise _Ambiguous
        out.append(_symbol_text(value))
    elif isinstance(value, str):
        if attachments is not None and len(value) >= ATTACHMENT_MIN:
            out.append(f"{ATTACHMENT_PREFIX}{len(attachments)}")
            attachments.append(value)
            return
        out.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_float_text(value))
    elif isinstance(value, Mapping):
        _encode_plist(list(value.items()), out, depth, attachments)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
        _encode_plist(fields, out, depth, attachments)
    elif isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        _encode_list(list(items), out, depth, attachments)
    elif isinstance(value, enum.Enum):
        _encode(value.value, out, depth, attachments)
    else:  # paths, datetimes, ...: their text, never a repr
        text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
        _encode(text, out, depth, attachments)


def _encode_plist(items: list[tuple[Any, Any]], out: list[str], depth: int,
                  attachments: list[str] | None) -> None:
    flat: list[Any] = []
    for key, item in items:
        flat += [Keyword(str(key).removeprefix(":")), item]
    _encode_list(flat, out, depth, attachments)


def _encode_list(items: list[Any], out: list[str], depth: int,
                 attachments: list[str] | None) -> None:
    if not items:
        out.append("nil")
        return
    out.append("(")
    for i, item in enumerate(items):
        if i:
            out.append(" ")
        _encode(item, out, depth + 1, attachments)
    out.append(")")


def _float_text(x: float) -> str:
    if math.isnan(x):
        return "0.0e+NaN"
    if math.isinf(x):
        return "1.0e+INF" if x > 0 else "-1.0e+INF"
    text = repr(x)
    return text if ("." in text or "e" in text) else text + ".0"


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
