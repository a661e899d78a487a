"""A turn's context: who sent a signal, what it is about, and what it chose.

A signal's ``:meta`` plist is read here, once, where the signal is built or enters the
loop (:meth:`TurnContext.from_meta`), and checked: a malformed field is a
:class:`ProtocolError` there, not a surprise deep in the model layer.  The rest of the
daemon reads typed fields (``signal.turn.heading``, ``signal.turn.choice``); the plist
is only the wire form (:meth:`TurnContext.to_meta`).

Two fields say where a turn comes from: ``face`` (the meta's ``:source``) names who sent
it, a face such as ``emacs``, the daemon itself asking the person on whichever face is
attached (:data:`DAEMON`), or a sender with nobody waiting (``cron``, ``hook``,
``heartbeat``, ``background``, ``flightplan``); ``origin`` (``:origin``) names the kind of
stimulus (``chat``, ``cron``, ``hook``, ``notify``, ``rewrite``, ``approval``, ...).
:attr:`TurnContext.kind` is the kind with its defaults filled in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar, cast

from passepartout.errors import ProtocolError

CHOSEN_TIERS = ("cognition", "reasoning")
TIERS = ("reflex", *CHOSEN_TIERS)
# Senders no person is waiting on: an approval they need goes to the background path.
BACKGROUND_SENDERS = frozenset({"cron", "hook", "heartbeat", "background", "flightplan"})
# The daemon itself, asking the person on the face they have attached (a skill to trust,
# an MCP tool's card, a job to approve): its signals go to the faces' channel.
DAEMON = "daemon"

# The meta keys a turn context reads; any other key travels along untouched (``extra``).
# ``hook-act`` and ``background-act`` mark a signal that carries out a proposal of a
# hook or of a background skill (``events/hookact.py``, ``background/acts.py``).
_TEXT_KEYS = {
    "source": "face", "origin": "origin", "session-id": "session_id", "turn-id": "turn_id",
    "heading": "heading", "hook": "hook", "flightplan": "flightplan",
    "attached": "attached", "workspace": "workspace", "client": "client",
    "hook-act": "hook_act", "background-act": "background_act",
}
_CHOICE_KEYS = ("model", "tier", "system", "tools", "budget")
KEYS = frozenset({*_TEXT_KEYS, *_CHOICE_KEYS, "private"})
T = TypeVar("T")


class Kept(Generic[T]):
    """What one layer keeps for each turn in the turn's record (the peer channel's
    sender and streamed text, the recorder of what a turn showed): its ``make`` gives
    a turn's fresh value."""

    __slots__ = ("make", "name")

    def __init__(self, name: str, make: Callable[[], T]) -> None:
        self.name = name
        self.make = make

    def __repr__(self) -> str:
        return f"Kept({self.name!r})"


class TurnState:
    """A turn's one record, shared by all its steps (a child signal shares its context):
    its cancel flag, the models that answered (the faces say which one replied), what
    the calls cost (a preset's budget caps the turn), and what each layer keeps for it
    (:meth:`kept`).  The loop gives each turn its own, or takes the one its face gave
    with the prompt, and :meth:`end` drops what it holds when the turn ends."""

    __slots__ = ("_ended", "_kept", "_lock", "_models", "_spent", "cancel")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._models: list[str] = []
        self._spent = 0.0
        self._kept: dict[Kept[Any], Any] = {}
        self._ended = False
        self.cancel = threading.Event()  # set: the turn stops at its next step

    def answered(self, model: str) -> None:
        with self._lock:
            self._models.append(model)

    def spend(self, cost: float) -> None:
        with self._lock:
            self._spent += cost

    @property
    def models(self) -> list[str]:
        with self._lock:
            return list(self._models)

    @property
    def spent(self) -> float:
        with self._lock:
            return self._spent

    def kept(self, key: Kept[T]) -> T:
        """What ``key``'s layer keeps for this turn (made on first use)."""
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                found = self._kept[key] = key.make()
            return cast(T, found)

    def end(self) -> None:
        """The turn ended (its Done was shown): what the layers kept for it goes."""
        with self._lock:
            self._ended = True
            self._kept.clear()

    @property
    def ended(self) -> bool:
        return self._ended


@dataclass(frozen=True, slots=True)
class TurnChoice:
    """What the person chose for a turn's model: a model, a tier, a preset's fields.

    They can only narrow what the configuration allows: the system text is escaped and
    appended after the instructions, the tool list filters the tools offered (the gates
    still decide every call), and the budget caps this turn's spend."""

    model: str | None = None
    tier: str | None = None  # cognition or reasoning; a reflex job's own tier is not a choice
    system: str | None = None
    tools: frozenset[str] | None = None  # None: every offered tool
    budget: float | None = None

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> TurnChoice:
        """Read and check the fields; a malformed one is a :class:`ProtocolError`."""
        tier = _tier(meta)
        return cls(model=_text(meta, "model"), tier=None if tier == "reflex" else tier,
                   system=_text(meta, "system"), tools=_tools(meta), budget=_budget(meta))

    def allows(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


_NO_CHOICE = TurnChoice()
_NO_EXTRA: Mapping[str, Any] = MappingProxyType({})


def _no_extra() -> Mapping[str, Any]:
    return _NO_EXTRA


@dataclass(frozen=True, slots=True)
class TurnContext:
    """The typed meta of a signal; every step of a turn shares its context."""

    face: str | None = None
    origin: str | None = None
    session_id: str | None = None
    turn_id: str | None = None
    heading: str | None = None  # the org node (its id) the turn serves
    hook: str | None = None
    private: bool = False  # a job of a private subtree: the local model only
    flightplan: str | None = None
    attached: str | None = None  # the attachments' text, read and filtered by the bridge
    workspace: str | None = None
    client: str | None = None
    hook_act: str | None = None
    background_act: str | None = None
    reflex: bool = False  # a reflex job's tier: no model is asked
    choice: TurnChoice = _NO_CHOICE
    extra: Mapping[str, Any] = field(default_factory=_no_extra, hash=False)
    # The turn's record while it runs (not part of the meta): the loop gives each turn
    # its own (or takes the one its face gave), and every step of the turn shares it.
    state: TurnState | None = field(default=None, compare=False, hash=False, repr=False)

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> TurnContext:
        """Read and check a meta plist (as a dict); ProtocolError when a field is bad."""
        if not meta:
            return cls()
        if not isinstance(meta, Mapping):
            raise ProtocolError("meta must be a property list")
        def text(key: str) -> str | None:
            return _text(meta, key, ids=True)

        extra = {str(k): v for k, v in meta.items() if str(k) not in KEYS}
        return cls(face=text("source"), origin=text("origin"), session_id=text("session-id"),
                   turn_id=text("turn-id"), heading=text("heading"), hook=text("hook"),
                   flightplan=text("flightplan"), attached=text("attached"),
                   workspace=text("workspace"), client=text("client"),
                   hook_act=text("hook-act"), background_act=text("background-act"),
                   private=bool(meta.get("private")),
                   reflex=_tier(meta) == "reflex", choice=TurnChoice.from_meta(meta),
                   extra=MappingProxyType(extra) if extra else _NO_EXTRA)

    def to_meta(self) -> dict[str, Any]:
        """The meta plist (as a dict) this context reads back from."""
        meta: dict[str, Any] = {}
        for key, name in _TEXT_KEYS.items():
            value = getattr(self, name)
            if value is not None:
                meta[key] = value
        if self.private:
            meta["private"] = True
        choice = self.choice
        for key in ("model", "system"):
            if getattr(choice, key) is not None:
                meta[key] = getattr(choice, key)
        if self.reflex or choice.tier is not None:
            meta["tier"] = "reflex" if self.reflex else choice.tier
        if choice.tools is not None:
            meta["tools"] = sorted(choice.tools)
        if choice.budget is not None:
            meta["budget"] = choice.budget
        meta.update(self.extra)
        return meta

    @property
    def tier(self) -> str | None:
        """The tier the turn asks for: a reflex job's, or the person's choice."""
        return "reflex" if self.reflex else self.choice.tier

    @property
    def kind(self) -> str:
        """What kind of stimulus this is: its origin, else a chat when it has a session,
        else its sender when that is a job (cron, hook, heartbeat), else background."""
        if self.origin:
            return self.origin
        if self.session_id:
            return "chat"
        return self.face if self.face in ("cron", "hook", "heartbeat") else "background"

    @property
    def background(self) -> bool:
        """No person is waiting on this turn: nobody to ask now."""
        return self.face in BACKGROUND_SENDERS or self.origin in BACKGROUND_SENDERS


def _text(meta: Mapping[str, Any], key: str, *, ids: bool = False) -> str | None:
    value = meta.get(key)
    if value is None or value == "":
        return None
    if ids and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ProtocolError(f":{key} must be a string")
    if ids:
        return str(value)
    return value.strip() or None


def _tier(meta: Mapping[str, Any]) -> str | None:
    tier = _text(meta, "tier")
    if tier is not None and tier not in TIERS:
        raise ProtocolError(f":tier must be one of {', '.join(CHOSEN_TIERS)}, not {tier!r}")
    return tier


def _tools(meta: Mapping[str, Any]) -> frozenset[str] | None:
    value = meta.get("tools")
    if value is None:
        return None
    if isinstance(value, str):
        value = value.split()
    if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
        raise ProtocolError(":tools must be a list of tool names")
    return frozenset(str(t) for t in value)


def _budget(meta: Mapping[str, Any]) -> float | None:
    value = meta.get("budget")
    if value is None or value == "":
        return None
    if isinstance(value, str):
        from passepartout.llm.budget import parse_amount

        try:
            value = parse_amount(value)
        except ValueError as err:
            raise ProtocolError(f":budget: {err}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ProtocolError(":budget must be a non-negative amount in USD")
    return float(value)
