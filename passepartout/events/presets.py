"""The presets the daemon knows, for the jobs and hooks under a subtree that names one.

A subtree chooses a preset with ``:PASSEPARTOUT_PRESET:`` (inherited as org reads it).
Emacs defines its presets itself (``passepartout-presets``, ``passepartout-presets-file``);
a job runs in the daemon, with no Emacs to ask, so the daemon reads its own: the org
file ``PASSEPARTOUT_PRESETS_FILE``, by default ``presets.org`` in the configuration
directory, in the format of ``passepartout-presets-file`` (point that option at the same
file and both know the same presets): one top-level heading per preset, named by its
title, with the properties MODEL, TIER, TOOLS (names separated by spaces) and BUDGET, and
the heading's text as the system prompt's addition.

What a preset holds is part of what the person approves for a job (its content is in
the job's hash, see :func:`passepartout.events.approval.job_hash`): a preset changed
later holds the job until it is approved again.  A job that names a preset the daemon
does not know does not run, and says why.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from passepartout.config import Config
from passepartout.errors import ProtocolError
from passepartout.turn import TurnChoice

log = logging.getLogger(__name__)

PRESETS_FILE = "presets.org"
PRESETS_MAX_BYTES = 256 * 1024

_HEADING = re.compile(r"^(\*+)\s+(.*?)\s*$")
_TAGS = re.compile(r"\s+:[\w@#%:]+:\s*$")
_PROPERTY = re.compile(r"^\s*:([^:\s]+):\s*(.*?)\s*$")
_PLANNING = re.compile(r"^\s*(SCHEDULED|DEADLINE|CLOSED):")
_DRAWER = re.compile(r"^\s*:[\w-]+:\s*$")
_END = re.compile(r"^\s*:END:\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Preset:
    """One preset: its name and the choice it makes for a turn."""

    name: str
    choice: TurnChoice

    def canonical(self) -> dict[str, Any]:
        """What the preset holds, as the job's hash takes it."""
        c = self.choice
        return {"name": self.name, "model": c.model, "tier": c.tier, "system": c.system,
                "tools": sorted(c.tools) if c.tools is not None else None,
                "budget": c.budget}

    def describe(self) -> str:
        """The preset in a few words, for the person approving a job."""
        c = self.choice
        parts = [f"preset {self.name}"]
        if c.model:
            parts.append(f"model {c.model}")
        if c.tier:
            parts.append(f"{c.tier} tier")
        if c.tools is not None:
            parts.append("tools " + (" ".join(sorted(c.tools)) or "none"))
        if c.budget is not None:
            parts.append(f"budget ${c.budget:g}")
        if c.system:
            parts.append("a system addition")
        return parts[0] + (f" ({', '.join(parts[1:])})" if len(parts) > 1 else "")


def presets_path(config: Config) -> Path:
    """Where the daemon's presets are read from."""
    named = str(config.extra.get("PASSEPARTOUT_PRESETS_FILE") or "").strip()
    return Path(named).expanduser() if named else Path(config.config_dir) / PRESETS_FILE


def read_presets(path: Path, problems: dict[str, str] | None = None) -> dict[str, Preset]:
    """The presets of the org file ``path`` ({} when there is none); a preset whose
    fields are malformed is left out, said in the log and in ``problems`` (name ->
    what is wrong)."""
    try:
        if path.stat().st_size > PRESETS_MAX_BYTES:
            log.warning("presets file %s is larger than %d bytes: not read", path,
                        PRESETS_MAX_BYTES)
            return {}
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return {}
    except OSError as err:
        log.warning("presets file %s unreadable: %s", path, err)
        return {}
    return parse_presets(text, str(path), problems)


def parse_presets(text: str, where: str = "the presets file",
                  problems: dict[str, str] | None = None) -> dict[str, Preset]:
    """The presets of org ``text``: each top-level heading, as Emacs reads the file."""
    found: dict[str, Preset] = {}
    for name, properties, body in _entries(text.splitlines()):
        meta: dict[str, Any] = {"model": properties.get("MODEL"),
                                "tier": properties.get("TIER"),
                                "system": body or None,
                                "tools": properties.get("TOOLS"),
                                "budget": properties.get("BUDGET")}
        try:
            choice = TurnChoice.from_meta({k: v for k, v in meta.items() if v})
        except ProtocolError as err:
            log.warning("%s: preset %r left out: %s", where, name, err.message)
            if problems is not None:
                problems.setdefault(name, err.message)
            continue
        if "TOOLS" in properties and choice.tools is None:
            choice = TurnChoice(choice.model, choice.tier, choice.system, frozenset(),
                                choice.budget)  # TOOLS with no name allows no tool
        found.setdefault(name, Preset(name, choice))
    return found


def _entries(lines: list[str]) -> list[tuple[str, dict[str, str], str]]:
    """Each top-level heading's title, properties and text (without planning lines and
    drawers); the text ends at the next heading of any level, as Emacs reads it."""
    entries: list[tuple[str, dict[str, str], str]] = []
    i = 0
    while i < len(lines):
        match = _HEADING.match(lines[i])
        i += 1
        if match is None or len(match.group(1)) != 1:
            continue
        title = _TAGS.sub("", match.group(2)).strip()
        properties: dict[str, str] = {}
        while i < len(lines) and _PLANNING.match(lines[i]):
            i += 1
        while i < len(lines) and _DRAWER.match(lines[i]):
            drawer = lines[i].strip().upper()
            i += 1
            while i < len(lines) and not _END.match(lines[i]) and not _HEADING.match(lines[i]):
                if drawer == ":PROPERTIES:":
                    prop = _PROPERTY.match(lines[i])
                    if prop:
                        properties.setdefault(prop.group(1).upper(), prop.group(2))
                i += 1
            if i < len(lines) and _END.match(lines[i]):
                i += 1
        start = i
        while i < len(lines) and not _HEADING.match(lines[i]):
            i += 1
        if title:
            entries.append((title, properties, "\n".join(lines[start:i]).strip()))
    return entries
