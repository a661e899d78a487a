"""An MCP server's input schema is data: it is checked against arguments with nothing
fetched, ever.

JSON Schema lets a schema point elsewhere (``$ref``, ``$dynamicRef``, an ``$id`` base,
``$schema``), and jsonschema's default registry follows such a pointer with ``urlopen``:
``file://`` reads a local file, ``http://`` connects where the server says, and what
comes back can surface in an error the model reads.  Here every reference must resolve
inside the schema itself (or to a meta-schema bundled with jsonschema); the registry's
retrieve refuses everything else, and a schema that points outside, or names a dialect
jsonschema does not ship, is unsupported: its tool is not offered, the status says why.
"""

from __future__ import annotations

from typing import Any, NoReturn

REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
MAX_DEPTH = 64  # nested subschemas a tool's schema may have


class UnsupportedSchema(ValueError):
    """Why a server's schema cannot be used safely (never with fetched content)."""


def _refuse(uri: str) -> NoReturn:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def registry() -> Any:
    """A registry that knows the schema at hand and fetches nothing."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


def _validator_class(schema: dict[str, Any]) -> Any:
    from jsonschema.validators import validator_for

    if "$schema" not in schema:
        return validator_for(schema)  # the latest dialect jsonschema knows
    unknown = object()
    try:
        cls = validator_for(schema, default=unknown)
    except Exception:  # a $schema that is not a string
        cls = unknown
    if cls is unknown:
        raise UnsupportedSchema(f"unsupported schema: $schema {_quote(schema.get('$schema'))} "
                                "is not a JSON Schema dialect known here")
    return cls


def validator(schema: Any) -> Any:
    """A validator for ``schema`` that resolves no reference outside it, or
    :class:`UnsupportedSchema` saying why the schema cannot be used."""
    if not isinstance(schema, dict):
        raise UnsupportedSchema("unsupported schema: it is not an object")
    cls = _validator_class(schema)
    checker = cls(schema, registry=registry())
    _check_references(schema, cls)
    return checker


def _check_references(schema: dict[str, Any], cls: Any) -> None:
    """Every reference of ``schema`` resolves within it (nothing is retrieved)."""
    import referencing.jsonschema
    from jsonschema_specifications import REGISTRY
    from referencing.exceptions import Unresolvable

    specification = referencing.jsonschema.specification_with(
        cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect",
        default=referencing.jsonschema.DRAFT202012)
    root = specification.create_resource(schema)
    resolver = REGISTRY.combine(registry()).resolver_with_root(root)

    def walk(resource: Any, resolver: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise UnsupportedSchema(f"unsupported schema: nested deeper than {MAX_DEPTH}")
        resolver = resolver.in_subresource(resource)
        contents = resource.contents
        if isinstance(contents, dict):
            if "$schema" in contents and depth:
                _validator_class(contents)
            for key in REFERENCES:
                ref = contents.get(key)
                if ref is None:
                    continue
                if not isinstance(ref, str):
                    raise UnsupportedSchema(f"unsupported schema: {key} is not a string")
                try:
                    resolver.lookup(ref)
                except Unresolvable:
                    raise UnsupportedSchema(
                        f"unsupported schema: {key} {_quote(ref)} does not resolve within "
                        "the schema (nothing is fetched)") from None
        for sub in resource.subresources():
            walk(sub, resolver, depth + 1)

    try:
        walk(root, resolver, 0)
    except RecursionError:
        raise UnsupportedSchema("unsupported schema: nested too deep") from None


def _quote(value: Any) -> str:
    from passepartout.text import one_line

    return repr(one_line(str(value), 80))
