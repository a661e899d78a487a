"""The cron and hook scanner against org-mode itself: for generated org files, the
headings the scanner makes jobs and hooks of (and their :CRON: and :HOOK: values) are
those where ``org-entry-get`` finds them in ``emacs --batch``, skipping what org's
agenda skips (COMMENT and ARCHIVE subtrees); and each lies in a property drawer of
org-element's parse tree.

``PASSEPARTOUT_DIFF_CASES`` sets the number of documents (a longer run:
``PASSEPARTOUT_DIFF_CASES=20000``); the seed is fixed, so a run is repeatable.
Needs Debian's emacs-nox: the test fails, not skips, when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from orgdrawers_gen import documents

from passepartout.events.scan import decode_org, located_nodes, scan_bytes

ORACLE = Path(__file__).parent / "emacs" / "org_drawers_oracle.el"
CASES = int(os.environ.get("PASSEPARTOUT_DIFF_CASES", "400"))
SEED = 20260521
BATCH = 2000  # documents per Emacs


def _org(tmp_path: Path, datas: list[bytes]) -> tuple[str, dict[str, Any]]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    names = []
    for index, data in enumerate(datas):
        name = f"doc{index:06d}.org"
        (tmp_path / name).write_bytes(data)
        names.append(name)
    version, answers = "", {}
    for start in range(0, len(names), BATCH):
        proc = subprocess.run(
            [emacs, "--batch", "-Q", "-l", str(ORACLE), *names[start:start + BATCH]],
            capture_output=True, env={**os.environ, "HOME": str(tmp_path)},
            timeout=900, check=False, cwd=tmp_path,
        )
        lines = proc.stdout.decode("utf-8").split("\n")
        assert proc.returncode == 0 and lines[0].startswith("ORG\t"), proc.stderr[-2000:]
        version = lines[0].split("\t")[1]
        for line in lines[1:]:
            if line:
                name, answer = line.split("\t", 1)
                answers[name] = json.loads(answer)
    return version, answers


def _ours(data: bytes, file: str) -> list[list[Any]]:
    text = decode_org(data)
    located = located_nodes(text, file)
    # the located nodes are the scan's own
    assert [node for _, node in located] == scan_bytes(data, file).nodes
    return [[line, node.cron, node.properties.get("HOOK")] for line, node in located]


@pytest.mark.emacs
def test_jobs_are_where_org_mode_sees_them(tmp_path: Path) -> None:
    datas = [text.encode("utf-8") for text in documents(SEED, CASES)]
    version, answers = _org(tmp_path, datas)
    assert len(answers) == len(datas)
    mismatches, outside = [], []
    jobs = headings_skipped = unparsed = 0
    for index, data in enumerate(datas):
        name = f"doc{index:06d}.org"
        theirs = answers[name]
        ours = _ours(data, name)
        jobs += len(ours)
        if ours != theirs["jobs"]:
            mismatches.append(f"doc {index}: org {theirs['jobs']} ours {ours}\n{data!r}")
        if theirs["element"] is None:
            unparsed += 1
            continue
        drawers = {row[0]: {k.upper().rstrip("+") for k in row[1:]} for row in theirs["element"]}
        for line, cron, hook in ours:
            wanted = {k for k, v in (("CRON", cron), ("HOOK", hook)) if v is not None}
            if not wanted <= drawers.get(line, set()):
                outside.append(f"doc {index} line {line}: no such drawer for org-element\n{data!r}")
        headings_skipped += len(theirs["element"])
    print(f"org {version}: {len(datas)} documents, {jobs} jobs and hooks, "
          f"{headings_skipped} property drawers for org-element "
          f"({unparsed} documents its parser fails on)")
    assert not mismatches, f"{len(mismatches)} of {len(datas)}:\n" + "\n".join(mismatches[:6])
    assert not outside, "\n".join(outside[:6])
    # the generator does reach both answers, and in quantity
    assert jobs > len(datas) // 4
    assert unparsed < len(datas) // 100 + 1
