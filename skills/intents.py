"""Intents: the commonest org requests read as tool calls, with no model (the reflex tier).

"note: buy milk", "every Monday at 9 remind me to ...", "what is due today", "search my
notes for X" become calls of ``remember``, ``schedule``, ``agenda``, ``memory-search`` or
``grep-search`` (:mod:`passepartout.llm.intents` reads them).  Such a call is a proposal
like a model's: every gate judges it, and a refused one is refused.  Its result is the
reply, as it is.  A request is read only when the tool it names is loaded and the
person has not set ``PASSEPARTOUT_INTENTS=off``.  The ``agenda`` tool lives here too: the
intents ask for it, and so may any model.

Some requests are answered in words, with no tool: a request to show a secret is
refused, whatever the model; a reminder with no clear date asks when; and when the
turn's model is the local one, any other request that names a secret is refused (a note
or reminder about one without its value is not), a destructive request is asked about,
a file asked for without its name is asked which, and a request for what no offline
tool does says so, instead of letting a 135M model attempt them (a provider's model
proposes, and the gates ask as for any call; it may know from the conversation which
file is meant).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from passepartout.api import Action, Signal, Tool, defskill, host
from passepartout.events.agenda import agenda_tool
from passepartout.llm import intents
from passepartout.security.privacy import private_tag
from passepartout.signals import plist_to_dict

HOST = host()
AGENT = HOST.agent if HOST is not None else None
INTENT_CALL = "intent-"  # the call id of a tool call read from the person's words


def intents_read(signal: Signal) -> intents.Intent | None:
    """The tool call a user input asks for in so many words, or None."""
    if signal.sensor != "user-input" or AGENT is None:
        return None
    # What a person types, not a job's prompt: a cron or hook heading is an instruction
    # for its model ("A reminder ... in the evening" once scheduled a job of its own).
    if signal.turn.origin in ("cron", "hook"):
        return None
    if str(AGENT.config.extra.get("PASSEPARTOUT_INTENTS", "on")).strip().lower() in (
            "off", "0", "no", "false"):
        return None
    intent = intents.parse(str(signal.payload.get("text", "")))
    if intent is None:
        return None
    if intent.reply:
        offline_only = ("decline", "destroy", "which", "secret")
        return intent if intent.kind not in offline_only or _offline() else None
    if AGENT.tool(intent.tool) is None:
        return None
    return intent


def _offline() -> bool:
    """Whether the turn's model is the local one (or none is configured at all)."""
    assert AGENT is not None
    from passepartout.errors import ConfigError
    from passepartout.llm.models import LOCAL_MODEL, default_model

    try:
        return default_model(AGENT.config) == LOCAL_MODEL
    except ConfigError:
        return True


def intents_result(signal: Signal) -> str | None:
    """The output of the tool calls an intent made (the step after them), or None."""
    if signal.sensor != "tool-output":
        return None
    results = [dict(r) if isinstance(r, dict) else _plist(r)
               for r in signal.payload.get("results") or []]
    if not results or not all(str(r.get("call-id", "")).startswith(INTENT_CALL)
                              for r in results):
        return None
    return "\n\n".join(str(r.get("output") or "(no output)") for r in results)


def _plist(item: Any) -> dict[str, Any]:
    return plist_to_dict(item) if isinstance(item, list) else {}


def intents_trigger(signal: Signal) -> bool:
    return intents_result(signal) is not None or intents_read(signal) is not None


def intents_answer(signal: Signal) -> Action:
    result = intents_result(signal)
    if result is not None:
        return Action("chat", text=result)
    intent = intents_read(signal)
    if intent is None:
        return Action("chat", text="Nothing to do.")
    if intent.reply:
        return Action("chat", text=intent.reply)
    return Action("tool", intent.tool, dict(intent.args),
                  call_id=INTENT_CALL + uuid.uuid4().hex[:12])


def _agenda() -> Tool:
    assert AGENT is not None
    return agenda_tool(lambda: Path(AGENT.config.memex_dir).expanduser(),
                       lambda: private_tag(AGENT.services))


if AGENT is not None:  # imported by itself (its tests), it declares nothing
    defskill("intents", priority=50, trigger=intents_trigger, reflex=intents_answer,
             tools=[_agenda()])
