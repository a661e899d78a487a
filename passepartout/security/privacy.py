"""Privacy: org subtrees tagged ``@personal`` (configurable) never go to a remote model.

Which lines are private is decided by one reader, :mod:`passepartout.org.private`
(checked against org-mode itself).  Tools call :func:`redact_file_text` on what they
read; every file read that way, and every org file of the memex, teaches the private
text index (:mod:`passepartout.security.privacy.index`), whose filter every request to
a remote model passes at the provider: a tool's courtesy is not the guarantee.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passepartout.org import private as orgprivacy
from passepartout.org.private import DEFAULT_TAG, MARKER
from passepartout.security.privacy import index as privateindex

__all__ = [
    "DEFAULT_TAG",
    "MARKER",
    "file_is_private",
    "heading_tags",
    "is_private",
    "node_is_private",
    "private_tag",
    "redact_file_text",
    "redact_private",
]


def heading_tags(line: str) -> set[str]:
    """The tags at the end of an org headline (``* Title :a:b:`` -> ``{"a", "b"}``)."""
    return set(orgprivacy.heading_tags(line))


def file_is_private(org_text: str, tag: str = DEFAULT_TAG) -> bool:
    """Whether the text's ``#+FILETAGS:`` carry ``tag`` (the whole file is private)."""
    return tag in orgprivacy.filetags(org_text)


def redact_private(org_text: str, tag: str = DEFAULT_TAG) -> str:
    """``org_text`` with each private run of lines replaced by ``[private: withheld]``."""
    return orgprivacy.redact(org_text, tag)


def redact_file_text(path: str | Path, text: str, tag: str = DEFAULT_TAG, *,
                     per_line: bool = False) -> str:
    """What a tool that read ``path`` may return of its ``text``.

    Judged on the content, not on the path string: any text that holds ``tag`` is read
    as org (org's own rules, ``.org``, ``.org_archive`` or a mode line, only widen
    what the index scans), its private lines are learned by the index (keyed on the
    real file) and replaced by the marker.
    """
    if tag not in text:
        return text
    reading = orgprivacy.read_private(text, tag)
    if not reading.any_private():
        return text
    try:
        source = os.path.realpath(path)
    except (OSError, ValueError):
        source = str(path)
    privateindex.current().add(source, reading.private_text(), tag)
    return orgprivacy.redact(text, tag, per_line=per_line)


def is_private(tags: set[str] | list[str] | tuple[str, ...], tag: str = DEFAULT_TAG) -> bool:
    """For stores that keep tags apart (memory nodes): does this node's tag set hide it?"""
    return tag in set(tags)


def private_tag(services: Mapping[str, Any]) -> str:
    """The tag that makes a subtree private for an agent: its security layer's, else
    the default."""
    return getattr(services.get("security"), "private_tag", None) or DEFAULT_TAG


def node_is_private(store: Any, node_id: str, tag: str = DEFAULT_TAG) -> bool:
    """Whether a memory node is private: inside a subtree tagged ``tag`` (its own tags,
    or any ancestor's: a file's ``#+FILETAGS`` live on the file node), or holding text
    the private index knows (memory's outline parser may cut a subtree where org does
    not, e.g. at a ``*``-and-tab line)."""
    node = store.get(node_id)
    if node is None:
        return False
    if is_private(node.tags, tag):
        return True
    if any(is_private(a.tags, tag) for a in store.ancestors(node_id)):
        return True
    index = privateindex.current()
    return index.contains_private(str(node.title)) or index.contains_private(
        str(getattr(node, "body", "") or ""))


def org_node_private(file: str | Path | None, node_text: str, tag: str = DEFAULT_TAG) -> bool:
    """Whether the heading whose text (heading line through body) is ``node_text`` lies
    in a private subtree of ``file`` as it is on disk.  When the file cannot be read or
    no longer holds that text, the node's own tags and the private index decide."""
    heading = node_text.split("\n", 1)[0]
    if file:
        try:
            text = Path(file).read_bytes().decode("utf-8", "replace")
        except (OSError, ValueError):
            text = ""
        at = text.find(node_text) if node_text else -1
        if at >= 0:
            line = text.count("\n", 0, at)
            return orgprivacy.read_private(text, tag).private[line]
    if orgprivacy.read_private(node_text, tag).private[:1] == [True]:
        return True
    return privateindex.current().contains_private(heading)


def heading_private_in_file(file: str | Path, heading: str | None,
                            outline: tuple[str, ...] = (), tag: str = DEFAULT_TAG) -> bool:
    """Whether a heading Emacs reported by title (and outline path) lies in a private
    subtree of ``file``: any heading of that title, or of an ancestor's title, that
    org reads as private.  A file that exists but cannot be read counts as private; one
    not on disk (a buffer never saved) has no private subtree anyone could read."""
    from passepartout.events.scan import clean_title, todo_keywords

    try:
        text = Path(file).expanduser().read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True
    if tag not in text:
        return False
    reading = orgprivacy.read_private(text, tag)
    wanted = {t.strip() for t in (heading or "", *outline) if t and t.strip()}
    keywords = todo_keywords(text)
    for line, hidden in zip(reading.lines, reading.private, strict=True):
        if hidden and orgprivacy.heading_level(line):
            title = clean_title(line[orgprivacy.heading_level(line) + 1:], keywords)
            if title in wanted:
                return True
    return False
