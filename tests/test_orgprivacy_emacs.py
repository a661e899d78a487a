"""The privacy reader against org-mode itself: for each line of generated org text,
"private or not" from passepartout.org.private and from ``org-get-tags``
(with inheritance and file tags) in ``emacs --batch``, one Emacs for every document.

``PASSEPARTOUT_ORG_PRIVACY_CASES`` sets the number of documents (a longer run:
``PASSEPARTOUT_ORG_PRIVACY_CASES=20000``); the seed is fixed, so a run is repeatable.
Needs Debian's emacs-nox: the test fails, not skips, when it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from orgprivacy_gen import TAG, documents
from passepartout.org.private import read_private

ORACLE = Path(__file__).parent / "emacs" / "org_privacy_oracle.el"
CASES = int(os.environ.get("PASSEPARTOUT_ORG_PRIVACY_CASES", "600"))
SEED = 20260512


BATCH = 2000  # documents per Emacs


def _org_bits(tmp_path: Path, texts: list[str]) -> tuple[str, dict[str, str]]:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.fail("emacs not found: install Debian's emacs-nox")
    names = []
    for index, text in enumerate(texts):
        name = f"doc{index:06d}.org"
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        names.append(name)
    version, answers = "", {}
    for start in range(0, len(names), BATCH):
        proc = subprocess.run(
            [emacs, "--batch", "-Q", "-l", str(ORACLE), TAG, *names[start:start + BATCH]],
            capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path)},
            timeout=600, check=False, cwd=tmp_path,
        )
        lines = proc.stdout.split("\n")
        assert proc.returncode == 0 and lines[0].startswith("ORG\t"), proc.stderr[-2000:]
        version = lines[0].split("\t")[1]
        answers.update(line.split("\t", 1) for line in lines[1:] if line)
    return version, answers


def _bits(text: str) -> str:
    return "".join("1" if p else "0" for p in read_private(text, TAG).private)


@pytest.mark.emacs
def test_private_lines_match_org_mode(tmp_path: Path) -> None:
    texts = documents(SEED, CASES)
    version, answers = _org_bits(tmp_path, texts)
    assert len(answers) == len(texts)
    mismatches = []
    lines = private = 0
    for index, text in enumerate(texts):
        theirs = answers[f"doc{index:06d}.org"]
        ours = _bits(text)
        lines += len(ours)
        private += ours.count("1")
        if ours != theirs:
            mismatches.append(f"doc {index}: org {theirs} ours {ours}\n{text!r}")
    print(f"org {version}: {len(texts)} documents, {lines} lines, {private} private")
    assert not mismatches, f"{len(mismatches)} of {len(texts)}:\n" + "\n".join(mismatches[:8])
    # the generator does reach both answers, and in quantity
    assert private > lines // 10 and private < lines - lines // 10
