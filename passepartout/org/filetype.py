"""Which files are org files, by org-mode's own rules: the file's name (as
``auto-mode-alist`` has it) or the mode its content asks for (a ``-*- mode: org -*-``
line, a Local Variables list)."""

from __future__ import annotations

import os
import re
from pathlib import Path

_ORG_NAME = re.compile(r"\.org(?:_archive)?(?:\.~\d+~|~)?\Z", re.IGNORECASE)
_MODE_LINE = re.compile(r"-\*-(.*?)-\*-")
_MODE_ORG = re.compile(r"(?:^|;)\s*(?:mode:\s*)?org\s*(?:;|$)", re.IGNORECASE)
_LOCAL_MODE = re.compile(r"^.*\bmode:\s*org\s*$", re.IGNORECASE | re.MULTILINE)


def org_by_name(path: str | Path) -> bool:
    """Whether Emacs opens a file of this name in org-mode (``.org``, ``.org_archive``,
    any case, with a backup suffix), judged on the file's own name."""
    return bool(_ORG_NAME.search(os.path.basename(os.path.normpath(str(path)))))


def org_by_content(head: str, tail: str = "") -> bool:
    """Whether a file's first lines carry ``-*- mode: org -*-`` (the second line after a
    ``#!`` line), or its last 3000 characters a Local Variables ``mode: org``."""
    first = head.split("\n", 2)
    lines = first[:2] if first and first[0].startswith("#!") else first[:1]
    for line in lines:
        match = _MODE_LINE.search(line)
        if match and _MODE_ORG.search(match.group(1).strip()):
            return True
    return "Local Variables:" in tail and bool(_LOCAL_MODE.search(tail))


def is_org_file(path: str | Path, text: str | None = None) -> bool:
    """Org by org's rules: the real file's name, or the mode its content asks for."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = str(path)
    if org_by_name(real):
        return True
    if text is None:
        try:
            with open(real, "rb") as handle:
                head = handle.read(4096).decode("utf-8", "replace")
        except OSError:
            return False
        return org_by_content(head)
    return org_by_content(text[:4096], text[-3000:])
