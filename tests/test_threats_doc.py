"""THREATS.md names, for each place, the test that proves its control: every test it
names exists (a renamed or removed test would leave a row proving nothing)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_REF = re.compile(r"((?:tests|elisp/test)/[\w./-]+\.(?:py|el))((?:(?:::|, ::)[\w-]+)*)")


def test_every_test_threats_md_names_exists() -> None:
    text = (ROOT / "THREATS.md").read_text(encoding="utf-8")
    missing: list[str] = []
    refs = 0
    for match in _REF.finditer(text):
        path = ROOT / match.group(1)
        if not path.exists():
            missing.append(match.group(1))
            continue
        source = path.read_text(encoding="utf-8")
        for name in re.findall(r"::([\w-]+)", match.group(2)):
            refs += 1
            defined = (f"def {name}(" in source if path.suffix == ".py"
                       else f"(ert-deftest {name} " in source)
            if not defined:
                missing.append(f"{match.group(1)}::{name}")
    assert refs > 40
    assert not missing, missing
