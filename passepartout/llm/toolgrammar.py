"""A llama.cpp grammar (GBNF) for the local model's turn: one tool call or a plain answer.

Built from the tools the turn allows (their names and JSON schemas): a call is
``{"name": "<tool>", "arguments": {...}}`` where the arguments follow that tool's own
schema (no property it does not declare, every required one present), so every call
the model can emit under the grammar is valid JSON naming an allowed tool.  An answer
is any text that starts with neither ``{`` nor a blank; the model chooses by its first token.

The schema-to-GBNF conversion is llama.cpp's own converter, which cyllama ships.
Nothing heavy is imported until a grammar is built.
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

log = logging.getLogger(__name__)

# A string argument longer than this is cut by the grammar: a tiny model that rambles
# inside a string would otherwise run out of tokens before closing the JSON.
MAX_STRING = 160
# Root of the answer-or-call grammar; "call" is the converter's root renamed.
# An answer starts with neither "{" nor a blank, so a text that starts with "{" is a call.
_ROOT = 'root ::= call | answer\nanswer ::= [^{\\x00-\\x20] [^\\x00]*\n'


@dataclass(frozen=True)
class ToolSpec:
    """What the grammar and the prompt need of one tool."""

    name: str
    description: str
    parameters: dict[str, Any]

    @classmethod
    def from_schema(cls, schema: dict[str, Any]) -> ToolSpec:
        """From an OpenAI-style tool schema (``{"type": "function", "function": ...}``)."""
        fn = schema.get("function", schema)
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"a tool schema without a name: {schema!r}")
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        return cls(name, str(fn.get("description") or ""), params)


@dataclass(frozen=True)
class ToolCall:
    """A call parsed from the model's output."""

    name: str
    arguments: dict[str, Any]


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy that allows no undeclared property and bounds every string."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        if node.get("type") == "object" or "properties" in node:
            node.setdefault("type", "object")
            node["additionalProperties"] = False
        if node.get("type") == "string" and "enum" not in node and "pattern" not in node:
            node["maxLength"] = min(int(node.get("maxLength", MAX_STRING)), MAX_STRING)
        for key in ("properties", "$defs", "definitions"):
            for child in (node.get(key) or {}).values():
                walk(child)
        for key in ("items", "additionalItems"):
            walk(node.get(key))
        for key in ("anyOf", "oneOf", "allOf"):
            for child in node.get(key) or []:
                walk(child)

    walk(out)
    return out


def call_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """The JSON schema of one call to any of ``tools``."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": t.name},
                    "arguments": _strict(t.parameters),
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }


def grammar_for(tools: list[ToolSpec]) -> str:
    """The GBNF of "one call to one of ``tools``, or a plain answer"."""
    key = json.dumps([[t.name, t.parameters] for t in tools], sort_keys=True)
    return _grammar(key)


@lru_cache(maxsize=32)
def _grammar(key: str) -> str:
    from cyllama.utils.json_schema_to_grammar import json_schema_to_grammar

    tools = [ToolSpec(name, "", params) for name, params in json.loads(key)]
    converted = json_schema_to_grammar(call_schema(tools))
    lines = []
    for line in converted.splitlines():
        if line.startswith("root ::="):
            line = "call ::=" + line[len("root ::="):]
        lines.append(line)
    return _ROOT + "\n".join(lines) + "\n"


def parse_output(text: str, tools: list[ToolSpec]) -> ToolCall | None:
    """The call in ``text``, or None when it is a plain answer.

    Raises ValueError when ``text`` starts as a call but is not a valid one (the
    generation was cut short): the grammar allows nothing else.
    """
    if not text.startswith("{"):
        return None
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as err:
        raise ValueError(f"an unfinished tool call: {err}") from None
    names = {t.name for t in tools}
    if (
        not isinstance(value, dict)
        or value.get("name") not in names
        or not isinstance(value.get("arguments"), dict)
    ):
        raise ValueError(f"not a call to an allowed tool: {stripped[:200]!r}")
    return ToolCall(str(value["name"]), value["arguments"])


def describe(tools: list[ToolSpec]) -> str:
    """One line a tool for the prompt: its name, arguments and first sentence."""
    lines = []
    for t in tools:
        props = t.parameters.get("properties") or {}
        required = set(t.parameters.get("required") or [])
        args = ", ".join(p if p in required else f"{p}?" for p in props)
        first = t.description.split(". ")[0].split("\n")[0].rstrip(".")
        lines.append(f"- {t.name}({args}): {first}")
    return "\n".join(lines)
