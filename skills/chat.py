"""The chat skill: a person's message, and each tool result after it, go to the model.

It owns ``:user-input`` (what no higher skill, such as the reflexes, answered),
``:tool-output`` (the next step of a multi-step turn) and, in a chat, ``:loop-error``
when the model can usefully explain what went wrong.  The tier comes from the turn's
context, else a ``classifier`` service, else seed 000's keyword rule.  The built-in tools
(read-file, write-file, grep-search, memory-search, schedule, eval, emacs-eval, shell)
come with this skill; every call they get still passes the gates.
"""

from __future__ import annotations

from passepartout.api import Prompt, Signal, defskill, host
from passepartout.llm import install
from passepartout.llm.builtin_tools import builtin_tools
from passepartout.llm.models import TIERS, classify_tier
from passepartout.llm.think import ModelLayer

DEPENDS_ON = ["policy", "dispatcher"]

HOST = host()
AGENT = HOST.agent if HOST is not None else None
LAYER: ModelLayer | None = None  # plugged in when the engine starts the skill


def chat_start() -> None:
    """Plug the model layer into the agent (litellm warms up in the background)."""
    global LAYER
    assert AGENT is not None
    LAYER = install(AGENT)


def chat_text(signal: Signal) -> str:
    return str(signal.payload.get("text") or "").strip()


def chat_trigger(signal: Signal) -> bool:
    if signal.turn.reflex:
        return False  # the orchestrator runs reflex jobs without a model
    sensor = signal.sensor
    if sensor == "user-input":  # a client's tool results may come without a text
        return bool(chat_text(signal) or signal.turn.extra.get("client-results"))
    if sensor == "tool-output":
        return True
    if sensor == "loop-error":
        message = str(signal.payload.get("message") or "")
        known = LAYER is not None and message in LAYER.failures
        return signal.session_id is not None and bool(message) and not known
    return False


def chat_tier(signal: Signal, text: str) -> str:
    tier = signal.turn.choice.tier  # cognition or reasoning, never a reflex job's
    if tier in TIERS:
        return tier
    classifier = AGENT.services.classifier if AGENT is not None else None
    if callable(classifier):
        chosen = str(classifier(text))
        if chosen in ("cognition", "reasoning"):
            return chosen
    return classify_tier(text)


def chat_prompt(signal: Signal) -> Prompt:
    if signal.sensor == "loop-error":
        message = str(signal.payload.get("message") or "")
        note = (f"(note from the agent runtime) The last step failed: {message}\n"
                "Explain to the person in one or two sentences what went wrong and what "
                "they can do about it.")
        return Prompt(note, tier="cognition", use_tools=False)
    text = chat_text(signal)
    return Prompt(text, tier=chat_tier(signal, text))


def chat_augment(signal: Signal) -> str:
    """The tool belt, one line a tool (stable text, so the prompt prefix caches): the
    tools this turn offers, so a preset's short list is the list the model reads."""
    if AGENT is None:
        return ""
    choice = signal.turn.choice
    lines = [f"- {t.name}{' (asks the person first)' if t.impact == 'high' else ''}: "
             f"{t.description}" for t in AGENT.tools()
             if getattr(t, "offered", True) and choice.allows(t.name)]
    return "Tools you can call:\n" + "\n".join(lines) if lines else ""


defskill(
    "chat",
    priority=10,
    depends_on=DEPENDS_ON,
    trigger=chat_trigger,
    prompt=chat_prompt,
    augment=chat_augment,
    tools=builtin_tools(AGENT) if AGENT is not None else [],
    start=chat_start if AGENT is not None else None,
)
