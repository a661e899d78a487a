"""An MCP server's tools as the agent's tools: ``mcp__SERVER__TOOL``, high impact (so
the dispatcher asks unless a grant allows it: ``--tool 'mcp__SERVER__*'`` for a whole
server, ``--tool mcp__SERVER__TOOL`` for one tool), described as untrusted text, their
arguments checked against the server's own schema before the call leaves (a schema that
points outside itself is unsupported: nothing is fetched, :mod:`.schema`).

A tool is offered only when the person approved its exact card (name, description,
schema: :mod:`.pins`) and the word check (:mod:`.untrusted`) finds nothing aimed at
the model in any of its strings."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from passepartout.errors import PipelineError
from passepartout.mcp.pins import APPROVED, CHANGED, DECLINED, Card, PinStore
from passepartout.mcp.schema import UnsupportedSchema, validator
from passepartout.mcp.untrusted import MAX_DESCRIPTION, aimed_at_model, clean_schema, schema_texts
from passepartout.text import one_line
from passepartout.tools import Tool

PREFIX = "mcp__"
MAX_NAME = 64  # what providers accept as a function name
MAX_RESULT = 40_000  # characters of a result given back to the model


def tool_name(server: str, tool: str) -> str:
    """The agent's name for ``tool`` of ``server`` (safe for every provider)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{PREFIX}{server}__{tool}")
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


WAITING = {
    "new": "new: waiting for your approval",
    CHANGED: "changed since you approved it: waiting for your approval",
    DECLINED: "declined by you",
}


@dataclass(frozen=True)
class Offer:
    """What one listed tool became: a tool, or the reason it is withheld (and whether
    it waits for the person's approval of its card)."""

    server: str
    remote: str
    tool: Tool | None
    withheld: str | None = None
    card: Card | None = None
    waiting: bool = False

    def key(self) -> tuple[str, str | None, str | None]:
        """What changes when the tool offered changes (its card, or why it is not)."""
        return (self.remote, self.card.sha256 if self.card else None, self.withheld)


class McpTool(Tool):
    """A tool whose arguments a JSON schema (the server's) checks, not a signature."""

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        import jsonschema
        from referencing.exceptions import Unresolvable

        if not isinstance(args, dict):
            raise PipelineError(f"bad arguments for {self.name}: an object is needed")
        try:
            validator(self.parameters).validate(args)
        except jsonschema.ValidationError as err:
            where = ".".join(str(p) for p in err.absolute_path) or "arguments"
            raise PipelineError(f"bad arguments for {self.name}: {where}: "
                                f"{one_line(err.message, 200)}") from None
        except UnsupportedSchema as err:
            raise PipelineError(f"{self.name}: {err}") from None
        except Unresolvable:
            raise PipelineError(f"{self.name}: unsupported schema: a reference does not "
                                "resolve within the schema (nothing is fetched)") from None
        except jsonschema.SchemaError:
            pass  # the server's schema is its own problem; the server checks again
        except RecursionError:
            raise PipelineError(f"{self.name}: unsupported schema: it nests too deep") from None
        return dict(args)


def offer(server: str, listed: Any, call: Callable[[str, str, dict[str, Any]], str],
          pins: PinStore | None = None) -> Offer:
    """The agent's tool for one entry of a server's ``tools/list`` (an ``mcp.types.Tool``):
    withheld when its schema points outside itself, when a string of it speaks to the
    model, or when the person has not approved its exact card (``pins``; none: nothing
    is approved)."""
    remote = str(listed.name)
    card = Card(server, remote, str(listed.description or ""), listed.input_schema)
    try:
        validator(listed.input_schema)
    except UnsupportedSchema as err:
        return Offer(server, remote, None, str(err), card)
    texts = [remote, card.description, *schema_texts(listed.input_schema)]
    for text in texts:
        why = aimed_at_model(text)
        if why is not None:
            return Offer(server, remote, None, f"its description holds {why}", card)
    state = pins.state(card) if pins is not None else "new"
    if state != APPROVED:
        return Offer(server, remote, None, WAITING[state], card, waiting=state != DECLINED)
    description = one_line(card.description or remote, MAX_DESCRIPTION)
    name = tool_name(server, remote)

    def run(**args: Any) -> str:
        return call(server, remote, args)

    tool = McpTool(name, run, f"[MCP server {server}] {description}",
                   clean_schema(listed.input_schema), "high")
    return Offer(server, remote, tool, card=card)


def result_text(result: Any) -> str:
    """A ``CallToolResult`` as the text the model gets; an error result raises."""
    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "resource":
            inner = block.resource
            parts.append(str(getattr(inner, "text", None) or f"[resource {inner.uri}]"))
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}]")
        else:
            parts.append(f"[{kind or 'content'} {getattr(block, 'mime_type', '') or ''}]".strip())
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts) or "(no output)"
    if len(text) > MAX_RESULT:
        text = text[:MAX_RESULT] + f"\n[... {len(text) - MAX_RESULT} more characters]"
    if result.is_error:
        raise PipelineError(f"the MCP tool failed: {text}")
    return text
