"""The org module reads headings and property drawers as org-mode itself does: the same
files go through passepartout.org and through org-element in ``emacs --batch``."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from passepartout.org.outline import todo_keywords

from passepartout.org.drawer import property_drawer
from passepartout.org.heading import PLANNING, read_heading
from tests.orgedit_gen import org_file

ORACLE = Path(__file__).parent / "emacs" / "org_reading_oracle.el"

TRICKY = """\
#+TODO: TODO NEXT | DONE
* TODO [#A] Call the bank   :work:@home:
:PROPERTIES:
:ID:       abc
:TAGS+: x
:EMPTY:
:END:
** DONE
*** |
* :only:
*bold* is no heading
 * nor is this
* NEXT thing with a colon: inside :a_b:c#d:
SCHEDULED: <2026-01-01 Thu>
  :properties:
  :A: 1
  :end:
* Not a drawer
:PROPERTIES:
text
:END:
* Drawer not first
body
:PROPERTIES:
:B: 2
:END:
* WAIT keyword of no sequence [#B]
* Unclosed
:PROPERTIES:
:C: 3
""".replace("|\n", "\n")  # "|" ends a line that ends in a space


def _ours(text: str) -> list[list[Any]]:
    sequences, _done, _types = todo_keywords(text)
    keywords = {w for seq in sequences for w in seq}
    lines = text.splitlines(keepends=True)
    heads = [(i, h) for i, line in enumerate(lines) if (h := read_heading(line, keywords))]
    out: list[list[Any]] = []
    for n, (i, head) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        at = i + 1 + (i + 1 < end and PLANNING.match(lines[i + 1]) is not None)
        drawer = property_drawer(lines, at, end)
        props: Any = [[k, v] for k, v in drawer.properties.items()] if drawer else False
        out.append([i, head.level, head.keyword or False, head.title, list(head.tags), props])
    return out


def test_headings_and_drawers_read_as_org_reads_them(tmp_path: Path) -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    rng = random.Random(7)
    texts = [TRICKY, *(org_file(rng).text for _ in range(20))]
    files = []
    for n, text in enumerate(texts):
        files.append(tmp_path / f"f{n}.org")
        files[-1].write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run([emacs, "--batch", "-Q", "-l", str(ORACLE), *map(str, files)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    theirs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(theirs) == len(texts)
    assert sum(len(t) for t in theirs) > 100  # the generated files hold many headings
    for text, org in zip(texts, theirs, strict=True):
        assert _ours(text) == org, text
