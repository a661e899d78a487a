"""A chat skill for the wire tests: every prompt and tool result goes to ``think``,
and one high-impact tool, so that the dispatcher asks the person."""

from __future__ import annotations

from passepartout.api import Prompt, Signal, defskill, make_tool


def wirechat_trigger(signal: Signal) -> bool:
    return signal.sensor in ("user-input", "tool-output")


def wirechat_prompt(signal: Signal) -> Prompt:
    return Prompt(str(signal.payload.get("text", "")))


def wirechat_touch(label: str) -> str:
    """Pretend to change something.

    Args:
        label: what to change.
    """
    return f"touched {label}"


defskill("wirechat", priority=1, trigger=wirechat_trigger, prompt=wirechat_prompt,
         tools=[make_tool(wirechat_touch, name="wire-touch", impact="high")])
