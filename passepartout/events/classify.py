"""Which tier a job runs at when its heading does not say (seed 000's classifier).

The default is deliberately coarse keyword matching: file and shell work and checks
are reflexes (no model), summarizing, listing and searching need a light model, and
everything else the full one.  A person who wants more control sets their own
classifier (any function from the job's text to a tier) on the orchestrator.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from passepartout.events.jobs import Tier

Classifier = Callable[[str], "Tier | str"]

# Words, not substrings: "list" should not catch "listen", nor "rm " catch "farm ".
_REFLEX = re.compile(r"(?i)(?:^|\s)rm\s|\bwrite-file\b|\bshell\b|\bverify-")
_COGNITION = re.compile(r"(?i)\bsummari[sz]e|\blists?\b|\bfind\s|\bwhat is\b|\bsearch")


def default_classifier(text: str) -> Tier:
    """reflex for file/shell operations and checks, cognition for light text work,
    reasoning for everything else."""
    if _REFLEX.search(text):
        return Tier.REFLEX
    if _COGNITION.search(text):
        return Tier.COGNITION
    return Tier.REASONING


def classify(text: str, classifier: Classifier | None = None) -> Tier:
    """``classifier``'s tier for ``text`` (the default one when None).

    A custom classifier that fails or answers something that is not a tier is
    reported as a ValueError naming what it returned.
    """
    fn = classifier or default_classifier
    answer = fn(text)
    if isinstance(answer, Tier):
        return answer
    if isinstance(answer, str):
        return Tier.parse(answer)
    raise ValueError(f"the tier classifier returned {answer!r}, not a tier")
