"""Small pieces of org syntax for the files the security layer writes (the audit log,
the approvals file): text from a model must never become a heading or end a block."""

from __future__ import annotations

import datetime as dt
import re

_NEEDS_COMMA = re.compile(r"^(\s*)(,*(?:\*|#\+))", re.MULTILINE)
_UNESCAPE = re.compile(r"^(\s*),(,*(?:\*|#\+))", re.MULTILINE)


def escape_block(text: str) -> str:
    """Org's own escaping for block contents: a comma before ``*`` and ``#+`` lines."""
    return _NEEDS_COMMA.sub(r"\1,\2", text)


def unescape_block(text: str) -> str:
    return _UNESCAPE.sub(r"\1\2", text)


def one_line(text: str, limit: int = 100) -> str:
    """``text`` fit for a headline or a property value: one line, bounded."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def timestamp(moment: dt.datetime | None = None) -> str:
    """An inactive org timestamp with seconds, e.g. ``[2025-03-01 Sat 14:03:07]``."""
    moment = moment or dt.datetime.now().astimezone()
    return moment.strftime("[%Y-%m-%d %a %H:%M:%S]")


def src_block(text: str, language: str = "json", indent: str = "") -> str:
    body = "\n".join(indent + line for line in escape_block(text).splitlines())
    return f"{indent}#+begin_src {language}\n{body}\n{indent}#+end_src\n"


def drawer(properties: dict[str, str], indent: str = "") -> str:
    lines = [f"{indent}:PROPERTIES:"]
    lines += [f"{indent}:{key}: {one_line(value, 400)}" for key, value in properties.items()]
    lines.append(f"{indent}:END:")
    return "\n".join(lines) + "\n"
