"""Generated org files and edits for the org editing tools, and org-mode's own answer
for each (tests/emacs/org_edit_oracle.el in ``emacs --batch``, clock pinned by
libfaketime)."""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

ORACLE = Path(__file__).parent / "emacs" / "org_edit_oracle.el"
ZONE = "Europe/Berlin"
NOW = dt.datetime(2026, 11, 23, 18, 0, tzinfo=ZoneInfo(ZONE))
WORDS = ["Alpha", "Beta", "Gamma", "Delta", "Projects", "Inbox", "Notes", "Tasks",
         "Errands", "Reading", "Garden", "Work", "Home", "Ideas", "Later"]
STAMPS = ["<2026-11-20 Fri 09:00 +1d>", "<2026-11-16 Mon ++1w>", "<2026-11-21 Sat .+2d>",
          "<2026-10-31 Sat +1m>", "<2026-11-25 Wed 10:00>", "<2026-11-22 Sun 08:30 ++1d>"]


@dataclass
class Spot:
    """A heading of a generated file: how the tools and the oracle address it."""

    path: str
    ident: str | None
    level: int

    @property
    def address(self) -> str:
        return f"id:{self.ident}" if self.ident else self.path


@dataclass
class Generated:
    text: str
    spots: list[Spot] = field(default_factory=list)


def org_file(rng: random.Random, prefix: str = "", keywords: bool = True) -> Generated:
    """An org file of two or three levels with TODO keywords, tags, priorities,
    planning lines (some repeated), property drawers (some with IDs), bodies, notes
    and blank lines."""
    out = Generated("")
    lines: list[str] = []
    custom = keywords and rng.random() < 0.3
    if rng.random() < 0.5:
        lines.append("#+TITLE: generated\n")
    if custom:
        lines.append("#+TODO: TODO NEXT | DONE CANCELLED\n")
    states = ["TODO", "NEXT", "DONE", "CANCELLED"] if custom else ["TODO", "DONE"]
    names = iter(rng.sample(WORDS, len(WORDS)))
    counter = iter(range(1000))

    def entry(level: int, parents: list[str]) -> None:
        title = prefix + next(names, f"H{next(counter)}")
        keyword = rng.choice([None, None, *states])
        tags = rng.sample(["work", "home", "x", "@office"], rng.choice([0, 0, 1, 2]))
        head = "*" * level + (f" {keyword}" if keyword else "")
        head += " [#A]" if rng.random() < 0.1 else ""
        head += f" {title}"
        if tags:
            tagtext = ":" + ":".join(tags) + ":"
            head += " " * max(1, 77 - len(head) - len(tagtext)) + tagtext
        lines.append(head + "\n")
        if rng.random() < 0.4:
            word = rng.choice(["SCHEDULED", "DEADLINE"])
            lines.append(f"{word}: {rng.choice(STAMPS)}\n")
        ident = None
        if rng.random() < 0.5:
            lines.append(":PROPERTIES:\n")
            if rng.random() < 0.6:
                ident = f"{prefix}id-{next(counter)}"
                lines.append(f":ID:       {ident}\n")
            if rng.random() < 0.5:
                lines.append(":EFFORT:   1:00\n")
            lines.append(":END:\n")
        if rng.random() < 0.25:
            lines.append("- Note taken on [2026-11-01 Sun 10:00] \\\\\n  an older note\n")
        if rng.random() < 0.5:
            lines.append(rng.choice(["Some text.\n", "Two lines\nof text.\n",
                                     "- a list item\n"]))
        if rng.random() < 0.25:
            lines.append("\n")
        path = [*parents, title]
        out.spots.append(Spot("/".join(path), ident, level))
        if level < 3:
            for _ in range(rng.choice([0, 1, 2])):
                entry(level + 1, path)

    for _ in range(rng.choice([2, 3])):
        entry(1, [])
    out.text = "".join(lines)
    return out


def _libfaketime() -> str:
    for pattern in ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    pytest.fail("libfaketime not found: install Debian's faketime package")


def run_oracle(root: Path, cases: list[dict[str, Any]]) -> tuple[str, dict[str, str]]:
    """Run every case in one Emacs; the org version and each case's OK or error."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    cases_file = root / "cases.json"
    cases_file.write_text(json.dumps(cases), encoding="utf-8")
    home = root / "home"
    home.mkdir(exist_ok=True)
    # NO_FAKE_STAT: a frozen clock would shift the files' times by a growing offset,
    # and Emacs would take every file for changed on disk
    env = dict(os.environ, LD_PRELOAD=_libfaketime(), FAKETIME=NOW.strftime("%Y-%m-%d %H:%M:%S"),
               NO_FAKE_STAT="1", TZ=ZONE, HOME=str(home))
    proc = subprocess.run([emacs, "--batch", "-Q", "-l", str(ORACLE), str(cases_file)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines and lines[0].startswith("ORG\t"), proc.stderr[-3000:]
    status: dict[str, str] = {}
    for line in lines[1:]:
        kind, _, rest = line.partition("\t")
        where, _, message = rest.partition("\t")
        status[where.rstrip("/")] = "OK" if kind == "OK" else f"error: {message}"
    return lines[0].split("\t")[1], status
