"""What an MCP server says is data, not instructions: its tool descriptions are read for
text aimed at the model (a "tool poisoning" attack hides orders there, since the model
reads every description), and what is offered is cleaned and labelled.

A description (or a parameter's) that speaks to the model (override its instructions,
keep something from the person, reach for keys and credentials, call other tools first)
or hides characters (zero-width, bidi controls, Unicode tags) withholds that tool: it is
not offered, and the status says why.  The rest is shown on one line, at most
:data:`MAX_DESCRIPTION` characters, after ``[MCP server NAME]``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

MAX_DESCRIPTION = 400
MAX_PARAM_DESCRIPTION = 200

# Each: (what it is, a pattern).  Worded for instructions, not for topics: a weather
# tool that mentions "the user's city" passes; "do not tell the user" does not.
_AIMED = (
    ("an override of the model's instructions", re.compile(
        r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|"
        r"all|other|system)\b[^.\n]{0,20}\b(instructions?|prompts?|rules?|messages?)\b", re.I)),
    ("a message posing as the system", re.compile(
        r"(</?\s*(system|instructions?|important|secret|hidden)\s*>|\bsystem prompt\b|"
        r"\byou are now\b|\bnew instructions\b|\bas an ai\b)", re.I)),
    ("an order to keep something from the person", re.compile(
        r"\b(do not|don't|never|without)\b[^.\n]{0,30}\b(tell|inform|mention|show|reveal|"
        r"notify|alert|asking)\b[^.\n]{0,20}\b(the )?(user|person|human)\b", re.I)),
    ("a reach for credentials", re.compile(
        r"(~/\.ssh|id_rsa|id_ed25519|\.aws/credentials|\.netrc|mcp\.json|\b(read|send|include|"
        r"pass|copy|upload|attach|append|add)\b[^.\n]{0,40}(\.env\b|\bapi[_ -]?keys?\b|"
        r"\bpasswords?\b|\bprivate keys?\b|\bcredentials\b|\btokens?\b))", re.I)),
    ("an order to use other tools", re.compile(
        r"\b(before|after|first)\b[^.\n]{0,40}\b(call|use|run|invoke|read)\b[^.\n]{0,30}"
        r"\b(tool|file|command|shell)\b", re.I)),
)
_HIDDEN = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                     "\U000e0000-\U000e007f]")


def aimed_at_model(text: str) -> str | None:
    """Why ``text`` reads as instructions to the model, or None."""
    if _HIDDEN.search(text):
        return "hidden characters"
    folded = unicodedata.normalize("NFKC", text)
    for what, pattern in _AIMED:
        if pattern.search(folded):
            return what
    return None


def schema_texts(schema: Any) -> Iterator[str]:
    """Every description, title and enum text of a JSON schema (the model reads them all)."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("description", "title") and isinstance(value, str):
                yield value
            elif key == "properties" and isinstance(value, dict):
                yield from (str(k) for k in value)
                yield from schema_texts(value)
            else:
                yield from schema_texts(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from (item,) if isinstance(item, str) else schema_texts(item)


def one_line(text: str, limit: int) -> str:
    """``text`` without control characters, on one line, cut at ``limit``."""
    flat = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    flat = " ".join(flat.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def clean_schema(schema: Any) -> dict[str, Any]:
    """The input schema offered to the model: titles dropped, descriptions cut short."""
    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in node.items():
                if key == "title":
                    continue
                if key == "description" and isinstance(value, str):
                    out[key] = one_line(value, MAX_PARAM_DESCRIPTION)
                elif key == "properties" and isinstance(value, dict):
                    out[key] = {str(k): walk(v) for k, v in value.items()}
                else:
                    out[key] = walk(value)
            return out
        if isinstance(node, list):
            return [walk(x) for x in node]
        return node

    cleaned = walk(schema) if isinstance(schema, dict) else {}
    cleaned["type"] = "object"
    cleaned.setdefault("properties", {})
    return cleaned
