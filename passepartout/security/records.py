"""The JSON files that keep what the person approved or trusts (skills by hash, MCP
tool pins, job approvals): read failing closed, written atomically and private.

Each record in them carries the agent's seal (:mod:`passepartout.security.trust.seal`); this
module only reads and writes the files: an unreadable one counts as empty (nothing is
approved), never as an error that stops the agent.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from passepartout.fsutil import atomic_write

log = logging.getLogger(__name__)


def read_records(path: Path, what: str) -> Any:
    """The JSON value in ``path``; None when the file is missing or unreadable (logged:
    ``what`` names the file for a person)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError) as err:
        log.error("%s %s are unreadable (%s): none counts", what, path, err)
        return None


def record_list(path: Path, what: str, key: str) -> list[dict[str, Any]]:
    """The dicts under ``key`` of the file's top-level object (anything else left out)."""
    data = read_records(path, what)
    entries = data.get(key) if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def write_records(path: Path, data: Any) -> None:
    """``data`` as the file's new content: atomically, 0600."""
    atomic_write(Path(path), json.dumps(data, indent=1, sort_keys=True) + "\n", mode=0o600)
