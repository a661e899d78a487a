"""Tools the model may call: typed Python functions whose JSON schema is derived, not
written twice (the signature gives the types, the docstring the descriptions).

Arguments from the model are validated against the same signature before the tool runs,
so a bad argument is a clear error back to the model, never a crash.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from passepartout.errors import PipelineError

Impact = Literal["low", "high"]

_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.+)$")


@dataclass
class Tool:
    """A callable tool: its name for the model, its function, and what it may touch."""

    name: str
    fn: Callable[..., Any]
    description: str
    parameters: dict[str, Any]
    impact: Impact = "low"
    _model: Any = field(default=None, repr=False)
    # False: only the agent itself calls it (a hook's action, say); the model is not
    # offered its schema, which would cost tokens in every request and do nothing.
    offered: bool = True

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style tool schema (what litellm passes to every provider)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def validate(self, args: dict[str, Any]) -> dict[str, Any]:
        """Check and coerce the model's arguments; a mismatch is a PipelineError."""
        import pydantic

        try:
            parsed = self._model.model_validate(args or {})
        except pydantic.ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in err.errors()
            )
            raise PipelineError(f"bad arguments for {self.name}: {problems}") from None
        return dict(parsed)

    def run(self, args: dict[str, Any]) -> Any:
        return self.fn(**self.validate(args))


def tool(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, impact: Impact = "low"
) -> Any:
    """Make a :class:`Tool` of a typed function (usable bare or with arguments)."""

    def build(f: Callable[..., Any]) -> Tool:
        return make_tool(f, name=name, impact=impact)

    return build(fn) if fn is not None else build


def make_tool(
    fn: Callable[..., Any], *, name: str | None = None, impact: Impact = "low",
    offered: bool = True,
) -> Tool:
    import pydantic

    description, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    hints = inspect.get_annotations(fn, eval_str=True)
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(pname, str)
        default = ... if param.default is param.empty else param.default
        fields[pname] = (
            annotation,
            pydantic.Field(default, description=arg_docs.get(pname)),
        )
    tool_name = name or fn.__name__.replace("_", "-")
    model = pydantic.create_model(f"{fn.__name__}_args", **fields)
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema.setdefault("required", [])
    return Tool(tool_name, fn, description or tool_name, schema, impact, model, offered)


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary paragraph, and ``name: text`` lines of an ``Args:`` section."""
    summary, _, _rest = doc.partition("\n\n")
    args: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        if line.strip().lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args:
            match = _ARG_LINE.match(line)
            if match:
                args[match.group(1)] = match.group(2).strip()
            elif line.strip() and not line.startswith(" "):
                in_args = False
    if summary.strip().lower().startswith(("args:", "arguments:")):
        summary = ""
    return " ".join(summary.split()), args


class ToolBelt:
    """The tools in reach, by name (built-in ones plus every ready skill's)."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, *tools: Tool) -> None:
        for t in tools:
            self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def all(self) -> list[Tool]:
        return [self._tools[k] for k in sorted(self._tools)]

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self.all()]
