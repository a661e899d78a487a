"""What the local model is shown when a turn offers it tools, and what it answers after one.

A 135M model lost in the agent's long system prompt picks tools at random; a short
prompt listing the allowed tools, with one worked example for each, and the person's
last request alone, lets it choose.  After a tool ran, the model is not asked to
summarise the result (it garbles it): the result is the answer, as it is.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from passepartout.llm.toolgrammar import ToolSpec, describe

# One example a tool: a request and the call it should make (shown only when offered).
EXAMPLES: dict[str, tuple[str, dict[str, Any]]] = {
    "remember": ("note: call the plumber", {"title": "call the plumber"}),
    "memory-search": ("what did I write about the garden?", {"query": "garden"}),
    "grep-search": ("find TODO in ~/src", {"pattern": "TODO", "dir": "~/src"}),
    "schedule": (
        "every day at 8 remind me to stretch",
        {"name": "stretch", "timestamp": "<{today} 08:00 +1d>", "prompt": "remind me to stretch"},
    ),
    "agenda": ("what is due today?", {"day": "today"}),
    "read-file": ("show me notes/todo.org", {"path": "notes/todo.org"}),
    "eval": ("compute 12345 * 6789 in python", {"code": "12345 * 6789"}),
    "shell": ("list the files in ~/org", {"cmd": "ls ~/org"}),
}
ANSWER_EXAMPLES = (
    ("What is the capital of France?", "The capital of France is Paris."),
    ("Thanks!", "You are welcome."),
)

# The date the prompt names (a test pins it: the model's choice depends on the prompt).
today = dt.date.today

_CONTEXT = re.compile(r"^<context>.*?</context>\s*", re.DOTALL)


def offered(params: dict[str, Any]) -> list[ToolSpec]:
    """The tools of the request (none when tool_choice is "none")."""
    if params.get("tool_choice") == "none":
        return []
    out = []
    for schema in params.get("tools") or []:
        try:
            out.append(ToolSpec.from_schema(schema))
        except (ValueError, AttributeError):
            continue
    return out


def after_tool(messages: list[dict[str, Any]]) -> bool:
    """Whether the step answers tool results (the last message is one)."""
    return bool(messages) and messages[-1].get("role") == "tool"


def results_text(messages: list[dict[str, Any]]) -> str:
    """The results of the last step's tools, as the answer."""
    results: list[dict[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        results.append(message)
    results.reverse()
    if len(results) == 1:
        return text_of(results[0].get("content"))
    return "\n\n".join(
        f"{r.get('name') or 'tool'}: {text_of(r.get('content'))}" for r in results
    )


def last_request(messages: list[dict[str, Any]]) -> str:
    """The person's last message, without the context block the agent puts before it."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return _CONTEXT.sub("", text_of(message.get("content"))).strip()
    return ""


def tool_messages(
    messages: list[dict[str, Any]], tools: list[ToolSpec], when: dt.date | None = None
) -> list[dict[str, str]]:
    """The short chat the model decides on: tools, examples, and the last request."""
    day = when or today()
    stamp = f"{day.isoformat()} {day.strftime('%a')}"
    system = "\n".join([
        "You are Passepartout, a helpful assistant in Emacs org-mode.",
        f"Today is {day.strftime('%A')} {day.isoformat()}.",
        'To act, reply with one JSON tool call {"name": ..., "arguments": {...}}.',
        "Otherwise answer briefly in plain text.",
        "Tools:",
        describe(tools),
    ])
    chat = [{"role": "system", "content": system}]
    declared = {t.name: set(t.parameters.get("properties") or {}) for t in tools}
    shots = [(request, json.dumps({"name": name, "arguments": args}).replace("{today}", stamp))
             for name, (request, args) in EXAMPLES.items()
             if name in declared and set(args) <= declared[name]]
    for request, answer in [*shots, *ANSWER_EXAMPLES]:
        chat.append({"role": "user", "content": request})
        chat.append({"role": "assistant", "content": answer})
    chat.append({"role": "user", "content": last_request(messages)})
    return chat


def text_of(content: Any) -> str:
    """Message content as text: OpenAI allows a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)
