"""Putting a secret into a shell command without changing how bash reads it.

The gates judged the command with its ``{{secret:NAME}}`` placeholders; the value put
in their place must not make it another command.  A value of letters, digits and
``_@%+=:,./-`` means nothing to bash anywhere in a word, so it goes in as it is.  Any
other value (a space, a quote, ``$``, ``;``, a glob) goes in only where the placeholder
is a word of its own, single-quoted (``shlex.quote``); elsewhere (inside quotes, glued
to other text) the command is refused with a clear message, never run altered.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from passepartout.errors import PipelineError
from passepartout.security.shell.bashparse import parse
from passepartout.security.vault import PLACEHOLDER, Vault

_INERT = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


def inject_secrets(cmd: str, vault: Vault) -> str:
    """``cmd`` with each placeholder replaced by its secret, safely (see above)."""
    found = list(PLACEHOLDER.finditer(cmd))
    if not found:
        return cmd
    values = {m.group(1): vault.get(m.group(1)) for m in found}
    if all(_INERT.fullmatch(v) for v in values.values()):
        return vault.inject(cmd)
    words = _word_spans(cmd)
    out, done = [], 0
    for m in found:
        value = values[m.group(1)]
        if _INERT.fullmatch(value):
            text = value
        elif m.span() in words:
            text = shlex.quote(value)
        else:
            raise PipelineError(
                f"the secret {m.group(1)} holds characters the shell would read (spaces, "
                "quotes, $, ; ...): write {{secret:" + m.group(1) + "}} as a word of its "
                "own, outside quotes, and it is passed quoted"
            )
        out += [cmd[done : m.start()], text]
        done = m.end()
    out.append(cmd[done:])
    return "".join(out)


def _word_spans(cmd: str) -> set[tuple[int, int]]:
    """Where bashlex sees plain words (no quotes, no expansion) in ``cmd``."""
    try:
        trees = parse(cmd)
    except Exception:  # bashlex raises many types: no word is known to be plain
        return set()
    spans: set[tuple[int, int]] = set()
    stack: list[Any] = list(trees)
    while stack:
        node = stack.pop()
        if getattr(node, "kind", "") == "word" and not getattr(node, "parts", None):
            start, end = node.pos
            if cmd[start:end] == node.word:  # no quote or escape was removed
                spans.add((start, end))
        for attr in ("parts", "list", "command"):
            child = getattr(node, attr, None)
            if isinstance(child, list):
                stack.extend(child)
            elif child is not None and hasattr(child, "kind"):
                stack.append(child)
    return spans
