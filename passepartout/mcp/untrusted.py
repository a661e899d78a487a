"""What an MCP server says is data, not instructions: its tool descriptions are read for
text aimed at the model (a "tool poisoning" attack hides orders there, since the model
reads every description), and what is offered is cleaned and labelled.

This check is the second line: the first is the person, who approves each tool's exact
card before it is offered (:mod:`passepartout.mcp.pins`).  Every string of a tool is
checked (its name, description, and every key and string value of its schema: titles,
defaults, enum values, examples, nested), each first brought to a skeleton: NFKC,
accents dropped, look-alike letters of other scripts (Cyrillic, Greek, Armenian,
Cherokee) read as the Latin ones, invisible characters (zero-width, bidi controls,
Unicode tags, soft hyphens) removed, case folded, spaces collapsed.  Text that speaks to
the model (override its instructions, keep something from the person, reach for keys
and credentials, call other tools first) or hides characters withholds that tool: it is
not offered, and the status says why.  The rest is shown on one line, at most
:data:`MAX_DESCRIPTION` characters, after ``[MCP server NAME]``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from passepartout.text import one_line

MAX_DESCRIPTION = 400
MAX_PARAM_DESCRIPTION = 200

_OVERRIDE_VERB = (r"(ignore|disregard|forget|override|overrule|bypass|abandon|discard|drop|"
                  r"pay no (attention|heed|mind) to|set aside|put aside|do not follow|"
                  r"don't follow|stop following|no longer follow)")
_EARLIER = r"(previous|prior|above|earlier|preceding|former|all|any|other|system|original|your)"
_ORDERS = (r"(instructions?|prompts?|rules?|messages?|guidance|guidelines?|directions?|"
           r"directives?|orders?|constraints?|polic(y|ies)|safeguards?|restrictions?)")
_PERSON = r"(the )?(user|person|human|owner|operator)('?s)?"
# Each: (what it is, a pattern on the skeleton).  Worded for instructions, not for
# topics: a weather tool that mentions "the user's city" passes; "do not tell the user"
# does not.
_AIMED = (
    ("an override of the model's instructions", re.compile(
        rf"\b{_OVERRIDE_VERB}\b[^.\n]{{0,40}}(\b{_EARLIER}\b[^.\n]{{0,30}}\b{_ORDERS}\b|"
        rf"\b{_ORDERS}\b[^.\n]{{0,30}}\b(earlier|before|previously|so far|above|"
        r"you (were|have been|'ve been) given|you (have )?(received|got)))")),
    ("a message posing as the system", re.compile(
        r"(</?\s*(system|instructions?|important|secret|hidden|admin)\s*>|\bsystem prompt\b|"
        r"\byou are now\b|\bnew instructions\b|\bas an ai\b|<\|im_start\|>|\[inst\]|"
        r"#+\s*system\b|\b(the )?(assistant|ai|model|llm|agent) (must|should|shall|has to|"
        r"needs to) (always|never|first|secretly|quietly)\b)")),
    ("an order to keep something from the person", re.compile(
        rf"(\b(do not|don't|never|without)\b[^.\n]{{0,30}}\b(tell|inform|mention|show|reveal|"
        rf"notify|alert|asking|warn|letting|telling)\b[^.\n]{{0,20}}\b{_PERSON}|"
        r"\b(secretly|silently|quietly|covertly|discreetly|stealthily|surreptitiously|"
        r"behind (the|their) back)\b|\bkeep (this|it|that)\b[^.\n]{0,20}\b(hidden|secret|"
        r"private|confidential)\b|"
        rf"\bwithout (the )?{_PERSON}[^.\n]{{0,10}}\b(knowing|noticing|seeing|consent)\b)")),
    ("a reach for credentials", re.compile(
        r"(~/\.(ssh|aws|gnupg|netrc|config)|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|"
        r"\.netrc\b|\bmcp\.json\b|/etc/(passwd|shadow)\b|"
        r"\b(read|send|include|pass|copy|upload|attach|append|add|forward|post|leak|share|"
        r"exfiltrate|embed|paste|put|dump|collect|gather|fetch|grab|give)\b[^.\n]{0,40}"
        r"(\.env\b|\bapi[_ -]?keys?\b|\bpasswords?\b|\bpassphrases?\b|\bprivate keys?\b|"
        r"\bssh keys?\b|\bsecret keys?\b|\bsecrets\b|\bcredentials?\b|\btokens?\b|"
        r"\bcookies?\b|\bkeys?\b))")),
    ("an order to use other tools", re.compile(
        r"\b(before|after|first|prior to)\b[^.\n]{0,40}\b(call|use|run|invoke|read|execute)\b"
        r"[^.\n]{0,30}\b(tool|file|command|shell)\b")),
)
_HIDDEN = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
                     "\U000e0000-\U000e007f]")

# Letters of other scripts that read as Latin ones (after NFKC, which already folds
# fullwidth and mathematical letters); a small table from Unicode's confusables, for
# the letters words are made of.
_LOOKALIKE = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ѐ": "e", "ё": "e", "к": "k", "м": "m", "н": "h",
    "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i",
    "ї": "i", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ү": "y", "ӏ": "l",
    "ɡ": "g", "ь": "b", "п": "n", "г": "r", "ш": "w", "л": "n",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ү": "Y",
    "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    # Greek
    "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "Ϲ": "C",
    # Armenian
    "ա": "w", "հ": "h", "ո": "n", "ս": "u", "ց": "g", "օ": "o", "զ": "q", "ե": "t",
    # Latin letters that look like others
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɩ": "i", "ʀ": "r", "ʏ": "y", "ɢ": "g", "ʜ": "h",
    "ɪ": "i", "ʟ": "l", "ɴ": "n", "ᴀ": "a", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ᴊ": "j",
    "ᴋ": "k", "ᴍ": "m", "ᴏ": "o", "ᴘ": "p", "ᴛ": "t", "ᴜ": "u", "ᴠ": "v", "ᴡ": "w",
    "ᴢ": "z", "ꜱ": "s", "ƅ": "b", "ǀ": "l", "ℓ": "l",
    # Cherokee capitals
    "Ꭺ": "A", "Ᏼ": "B", "Ꮯ": "C", "Ꭼ": "E", "Ꮋ": "H", "Ꭻ": "J", "Ꮶ": "K", "Ꮇ": "M",
    "Ꮲ": "P", "Ꮪ": "S", "Ꭲ": "T", "Ꮃ": "W", "Ꮓ": "Z",
})


def skeleton(text: str) -> str:
    """``text`` as the word check reads it: NFKC, accents and invisible characters
    dropped, look-alike letters made Latin, case folded, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    text = unicodedata.normalize("NFKC", text.translate(_LOOKALIKE).casefold())
    text = "".join(" " if unicodedata.category(c)[0] in "CZ" else c for c in text)
    return " ".join(text.split())


def aimed_at_model(text: str) -> str | None:
    """Why ``text`` reads as instructions to the model, or None."""
    folded = skeleton(text)
    for what, pattern in _AIMED:
        if pattern.search(folded):
            return what
    if _HIDDEN.search(text):
        return "hidden characters"
    return None


def schema_texts(schema: Any) -> Iterator[str]:
    """Every string of a JSON schema, keys included (the model reads them all:
    descriptions, titles, defaults, enum values, examples, at any depth)."""
    if isinstance(schema, str):
        yield schema
    elif isinstance(schema, dict):
        for key, value in schema.items():
            yield str(key)
            yield from schema_texts(value)
    elif isinstance(schema, list | tuple):
        for item in schema:
            yield from schema_texts(item)


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
