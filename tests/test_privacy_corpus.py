"""The privacy filter withholds private text and nothing else, measured on generated
memexes (tests/privacycorpus_gen.py): public lines withheld 0, private lines leaked 0,
on the seeds the filter was built with and on the held-out ones."""

from __future__ import annotations

from pathlib import Path

import pytest
from passepartout.security.privacy.index import PrivateIndex, fragment
from privacycorpus_gen import HELD_OUT, TUNING, Figures, measure

pytestmark = pytest.mark.attack


@pytest.mark.parametrize("half", ["tuning", "held-out"])
def test_public_text_is_never_withheld_and_private_never_leaks(
    tmp_path: Path, half: str
) -> None:
    total = Figures()
    examples: list[str] = []
    for seed in TUNING if half == "tuning" else HELD_OUT:
        figures = measure(seed, str(tmp_path / str(seed)))
        total.add(figures)
        examples += figures.examples or []
    assert total.public > 1000 and total.private > 300
    assert (total.public_withheld, total.private_leaked) == (0, 0), examples[:10]


def test_what_every_org_file_has_is_never_learned() -> None:
    for line in ("DEADLINE: <2026-05-02 Sat>", "SCHEDULED: <2026-05-02 Sat 10:00 +1w>",
                 "CLOSED: [2026-01-01 Thu 09:12]", ":TIER: reasoning", ":CREATED: [2026-01-01]",
                 "<2026-05-02 Sat>", "reasoning", "Tomorrow"):
        assert fragment(line) is None, line
    assert fragment(":PHONE: +41 79 555 12 34") == "41 79 555 12 34"
    assert fragment("Call Dr. Hamilton <2026-05-02 Sat 10:00>") == "call dr hamilton"


def test_a_private_line_public_text_shares_is_not_withheld_alone() -> None:
    index = PrivateIndex()
    index.learn("a.org", ["Weekly review of the roadmap", "Dr. Hamilton, biopsy results 4411"],
                public=["Weekly review of the roadmap", "Team notes"])
    assert index.withhold("Weekly review of the roadmap") == "Weekly review of the roadmap"
    assert "hamilton" not in index.withhold("x Dr. Hamilton, biopsy results 4411 y").lower()


def test_public_text_between_two_private_lines_stays() -> None:
    index = PrivateIndex()
    index.learn("a.org", ["Dr. Hamilton, biopsy results 4411", "Mortgage overdraft 9921 letter"])
    out = index.withhold(
        "Dr. Hamilton, biopsy results 4411\nok fine\nMortgage overdraft 9921 letter")
    assert "ok fine" in out and "hamilton" not in out.lower() and "9921" not in out
