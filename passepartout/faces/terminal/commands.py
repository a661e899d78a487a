"""The terminal's own slash commands: ``/model``, ``/session``, ``/cost``.

They are answered by the chat process itself, without a model: ``/model`` shows the
model of each tier and the models of an Ollama or llama.cpp server on this machine,
and ``/model NAME`` chooses one for the rest of this chat (a name litellm knows, one
of the configured ones or one such a server serves; ``/model default`` goes back);
``/session`` names the current session, ``/session list`` lists the kept ones and
``/session ID`` switches; ``/cost`` shows this session's and today's calls, tokens and
cost from the ledger.  Other commands (``/help``, ``/skills`` ...) go to the agent's
reflexes as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.llm import localserver, models
from passepartout.org.escape import org_line as one_line
from passepartout.services import Services

COMMANDS = ("model", "session", "cost")
HELP = ("Terminal commands: /model [NAME|default], /session [list|ID], /cost, /quit; "
        "a prompt starting with a space is not kept in the history.")
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}")
LIST_LIMIT = 20


@dataclass
class ChatState:
    """What this chat has chosen: its session and, maybe, a model."""

    config: Config
    services: Services
    session: str
    model: str | None = None
    notes: list[str] = field(default_factory=list)
    # Attached to the daemon, the ledger is read through it (it holds the writer).
    usage: Callable[[str], dict[str, Any]] | None = None

    def meta(self) -> dict[str, Any]:
        """What each turn carries to the model layer."""
        return {"model": self.model} if self.model else {}


def command_word(text: str) -> tuple[str, str] | None:
    """("model", "gpt-4o") for "/model gpt-4o"; None when not a terminal command."""
    if not text.startswith("/"):
        return None
    word, _, rest = text[1:].partition(" ")
    word = word.lower()
    return (word, rest.strip()) if word in COMMANDS else None


def answer(state: ChatState, word: str, rest: str) -> str:
    if word == "model":
        return _model(state, rest)
    if word == "session":
        return _session(state, rest)
    return _cost(state)


# -- /model -------------------------------------------------------------------------


def _model(state: ChatState, name: str) -> str:
    if not name:
        return _show_models(state)
    if name.lower() in ("default", "off", "reset"):
        state.model = None
        return "This chat uses the configured models again.\n" + _show_models(state)
    if any(c.isspace() for c in name) or len(name) > 200:
        return f"Not a model name: {name!r}."
    why = _known(state.config, name)
    if why is None:
        return (f"Unknown model {name!r}: neither configured nor known to litellm; "
                "nothing changed.")
    state.model = name
    return f"This chat now uses {name} ({why}) for every tier."


def _show_models(state: ChatState) -> str:
    lines = []
    for tier in models.TIERS:
        if tier == "reflex":
            continue
        try:
            first = models.route(state.config, tier).primary
        except PassepartoutError as err:
            first = f"none ({err.message})"
        lines.append(f"{tier}: {first}")
    if state.config.fallback_models:
        lines.append("fallbacks: " + ", ".join(state.config.fallback_models))
    lines += [f"on this machine: {s.line()}" for s in localserver.detect()]
    if state.model:
        lines.append(f"this chat: {state.model} (chosen with /model; /model default undoes)")
    return "\n".join(lines)


def _configured(config: Config) -> list[str]:
    names = [config.model, config.model_cognition, config.model_reasoning,
             *config.fallback_models, models.LOCAL_MODEL]
    return [n for n in names if n]


def _known(config: Config, name: str) -> str | None:
    """Why ``name`` may be used: "configured", "known to litellm", or None."""
    if name in _configured(config):
        return "configured"
    server = next((s for s in localserver.detect() if name in s.models), None)
    if server is not None:
        return f"served by the {server.label} at {server.base}"
    from passepartout.llm.tokens import price

    return "known to litellm" if price(name).known else None


# -- /session -----------------------------------------------------------------------


def _session(state: ChatState, rest: str) -> str:
    kept = _sessions(state)
    if not rest:
        title = next((s["title"] for s in kept if s["id"] == state.session), "")
        return f"Session {state.session}: {title or '(no messages yet)'}"
    if rest.lower() == "list":
        if not kept:
            return "No kept sessions yet."
        lines = [f"{'*' if s['id'] == state.session else ' '} {s['id']}  "
                 f"{s['last-activity']}  {s['messages']} messages  {one_line(s['title'], 60)}"
                 for s in kept[:LIST_LIMIT]]
        more = f"\n  ... and {len(kept) - LIST_LIMIT} more" if len(kept) > LIST_LIMIT else ""
        return "Sessions (most recent first):\n" + "\n".join(lines) + more
    if not SESSION_ID.fullmatch(rest):
        return f"Not a session id: {rest!r} (letters, digits and . _ : @ -)."
    state.session = rest
    found = next((s for s in kept if s["id"] == rest), None)
    if found is None:
        return f"Switched to a new session {rest}."
    return f"Switched to session {rest}: {found['title']} ({found['messages']} messages)."


def _sessions(state: ChatState) -> list[dict[str, Any]]:
    from passepartout.views import sessions

    return sessions(state.config.home)


# -- /cost --------------------------------------------------------------------------


def _cost(state: ChatState) -> str:
    if state.usage is not None:
        try:
            usage = state.usage(state.session)
        except PassepartoutError as err:
            return f"No cost: {err.message}"
    else:
        ledger = getattr(state.services.llm, "ledger", None)
        if ledger is None:
            return "No ledger: the model layer is not loaded."
        usage = ledger.usage(state.session)
    lines = []
    for name, label in (("session", f"session {state.session}"), ("today", "today")):
        part = usage.get(name)
        if part is None:
            continue
        lines.append(f"{label}: ${float(part['cost']):.4f}, {part['calls']} calls, "
                     f"{part['tokens-in']} tokens in, {part['tokens-out']} out")
    return "\n".join(lines)
