"""Privacy: org subtrees tagged ``@personal`` (configurable) never go to a model.

:func:`redact_private` removes each heading that carries the tag, with its whole
subtree, and a whole file whose ``#+FILETAGS:`` carry it.  The context assembly calls
it on every org text bound for a model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

DEFAULT_TAG = "@personal"
_HEADING = re.compile(r"^(\*+)\s")
_TAGS = re.compile(r"\s:([\w@#%:]+):\s*$")
_FILETAGS = re.compile(r"^#\+FILETAGS:\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_BLOCK = re.compile(r"^\s*#\+(begin|end)_", re.IGNORECASE)


def heading_tags(line: str) -> set[str]:
    """The tags at the end of an org headline (``* Title :a:b:`` -> ``{"a", "b"}``)."""
    match = _TAGS.search(line)
    return {t for t in match.group(1).split(":") if t} if match else set()


def file_is_private(org_text: str, tag: str = DEFAULT_TAG) -> bool:
    for match in _FILETAGS.finditer(org_text):
        value = match.group(1)
        if tag in {t for t in re.split(r"[:\s]+", value) if t}:
            return True
    return False


def redact_private(org_text: str, tag: str = DEFAULT_TAG) -> str:
    """``org_text`` without the subtrees tagged ``tag`` (nor the file, if it is tagged)."""
    if tag not in org_text:
        return org_text
    if file_is_private(org_text, tag):
        return ""
    kept: list[str] = []
    skip_level: int | None = None
    in_block = False
    for line in org_text.splitlines(keepends=True):
        block = _BLOCK.match(line)
        if block is not None:
            in_block = block.group(1).lower() == "begin"
        heading = None if in_block and block is None else _HEADING.match(line)
        if heading is not None:
            level = len(heading.group(1))
            if skip_level is not None and level <= skip_level:
                skip_level = None
            if skip_level is None and tag in heading_tags(line):
                skip_level = level
        if skip_level is None:
            kept.append(line)
    return "".join(kept)


def is_private(tags: set[str] | list[str] | tuple[str, ...], tag: str = DEFAULT_TAG) -> bool:
    """For stores that keep tags apart (memory nodes): does this node's tag set hide it?"""
    return tag in set(tags)


def private_tag(services: Mapping[str, Any]) -> str:
    """The tag that makes a subtree private for an agent: its security layer's, else
    the default."""
    return getattr(services.get("security"), "private_tag", None) or DEFAULT_TAG


def node_is_private(store: Any, node_id: str, tag: str = DEFAULT_TAG) -> bool:
    """Whether a memory node is inside a subtree tagged ``tag`` (its own tags, or any
    ancestor's: a file's ``#+FILETAGS`` live on the file node)."""
    node = store.get(node_id)
    if node is None:
        return False
    if is_private(node.tags, tag):
        return True
    return any(is_private(a.tags, tag) for a in store.ancestors(node_id))
