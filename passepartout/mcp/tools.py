"""An MCP server's tools as the agent's tools: ``mcp__SERVER__TOOL``, high impact (so
the dispatcher asks unless a grant allows it: ``--tool 'mcp__SERVER__*'`` for a whole
server, ``--tool mcp__SERVER__TOOL`` for one tool), described as untrusted text, their
arguments checked against the server's own schema before the call leaves."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from passepartout.errors import PipelineError
from passepartout.mcp.untrusted import (
    MAX_DESCRIPTION,
    aimed_at_model,
    clean_schema,
    one_line,
    schema_texts,
)
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


@dataclass(frozen=True)
class Offer:
    """What one listed tool became: a tool, or the reason it is withheld."""

    server: str
    remote: str
    tool: Tool | None
    withheld: str | None = None


class McpTool(Tool):
    """A tool whose arguments a JSON schema (the server's) checks, not a signature."""

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        import jsonschema

        if not isinstance(args, dict):
            raise PipelineError(f"bad arguments for {self.name}: an object is needed")
        try:
            jsonschema.validate(args, self.parameters)
        except jsonschema.ValidationError as err:
            where = ".".join(str(p) for p in err.absolute_path) or "arguments"
            raise PipelineError(f"bad arguments for {self.name}: {where}: "
                                f"{one_line(err.message, 200)}") from None
        except jsonschema.SchemaError:
            pass  # the server's schema is its own problem; the server checks again
        return dict(args)


def offer(server: str, listed: Any, call: Callable[[str, str, dict[str, Any]], str]) -> Offer:
    """The agent's tool for one entry of a server's ``tools/list`` (an ``mcp.types.Tool``)."""
    remote = str(listed.name)
    texts = [remote, str(listed.description or ""), *schema_texts(listed.input_schema)]
    for text in texts:
        why = aimed_at_model(text)
        if why is not None:
            return Offer(server, remote, None, f"its description holds {why}")
    description = one_line(str(listed.description or remote), MAX_DESCRIPTION)
    name = tool_name(server, remote)

    def run(**args: Any) -> str:
        return call(server, remote, args)

    tool = McpTool(name, run, f"[MCP server {server}] {description}",
                   clean_schema(listed.input_schema), "high")
    return Offer(server, remote, tool)


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
