"""Seeded memexes of public org files with private subtrees added, for measuring the
privacy filter: what it withholds of the public lines (must be nothing) and what it
lets through of the private ones (must be nothing that tells anything).

Public files are ordinary notes: headings with TODO keywords, planning lines, property
drawers (``:TIER:``, ``:CREATED:``, ``:ID:``), lists, links, tables and prose made of
a shared vocabulary. Private subtrees (``:@personal:``, their children, a file tagged
whole) are added among them, and share on purpose what notes share: the same dates
on their planning lines, the same drawer lines, the same TODO words, phrases of the
same vocabulary, a public sibling right after them or right before. Their own
sentences carry names, numbers and words no public line has.

Two halves: :data:`TUNING` seeds, used while the filter was built, and
:data:`HELD_OUT` seeds, written at the same time and never looked at while tuning.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

TAG = "@personal"
TUNING = tuple(range(0, 20))
HELD_OUT = tuple(range(1000, 1020))

WORDS = [
    "project",
    "review",
    "meeting",
    "notes",
    "draft",
    "plan",
    "team",
    "release",
    "budget",
    "design",
    "update",
    "report",
    "week",
    "month",
    "goal",
    "task",
    "idea",
    "follow",
    "read",
    "write",
    "email",
    "call",
    "list",
    "agenda",
    "summary",
    "status",
    "deadline",
    "migrate",
    "server",
    "deploy",
    "test",
    "docs",
    "customer",
    "feedback",
    "issue",
    "fix",
    "refactor",
    "weekly",
    "quarterly",
    "roadmap",
    "milestone",
    "sprint",
    "retro",
    "onboarding",
    "backlog",
    "priority",
]
PRIVATE_WORDS = [
    "Hamilton",
    "Okonkwo",
    "Varga",
    "Lindqvist",
    "Petrosyan",
    "allergist",
    "cardiology",
    "mortgage",
    "divorce",
    "custody",
    "therapist",
    "landlord",
    "overdraft",
    "biopsy",
    "inheritance",
    "probation",
    "Zanzibar",
    "Kilimanjaro",
    "orthodontist",
    "pharmacy",
    "salary",
    "bonus",
    "lawsuit",
    "sobriety",
]
KEYWORDS = ("TODO ", "DONE ", "NEXT ", "")
PROPERTIES = (
    ":TIER: reasoning",
    ":TIER: cognition",
    ":EFFORT: 1:00",
    ":CATEGORY: work",
    ":LOGGING: nil",
    ":VISIBILITY: folded",
)


@dataclass
class Memex:
    """Files (name -> text), and which of their lines are private."""

    files: dict[str, str]
    private: dict[str, list[bool]]


def _date(rng: random.Random) -> str:
    day = rng.randint(1, 28)
    month = rng.randint(1, 12)
    weekday = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[(day + month) % 7]
    return f"2026-{month:02d}-{day:02d} {weekday}"


def _sentence(rng: random.Random, words: tuple[str, ...] | list[str], n: int) -> str:
    return " ".join(rng.choice(words) for _ in range(n)).capitalize() + "."


def _private_sentence(rng: random.Random) -> str:
    mix = [rng.choice(PRIVATE_WORDS), rng.choice(PRIVATE_WORDS), *rng.sample(WORDS, 3)]
    rng.shuffle(mix)
    return f"{' '.join(mix).capitalize()} {rng.randint(100, 99999)}."


def _entry(
    rng: random.Random, level: int, *, private: bool, dates: list[str], props: list[str]
) -> list[str]:
    tag = f" :{TAG}:" if private else rng.choice(("", "", " :work:"))
    title = (
        f"{rng.choice(PRIVATE_WORDS)} {_sentence(rng, WORDS, 2)[:-1]}"
        if private
        else _sentence(rng, WORDS, rng.randint(2, 5))[:-1]
    )
    lines = [f"{'*' * level} {rng.choice(KEYWORDS)}{title}{tag}"]
    if rng.random() < 0.6:
        lines.append(f"{rng.choice(('DEADLINE', 'SCHEDULED'))}: <{rng.choice(dates)}>")
    if rng.random() < 0.6:
        lines += [":PROPERTIES:", *rng.sample(props, 2), ":END:"]
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if private and kind < 0.7:
            text = _private_sentence(rng)
        else:
            text = _sentence(rng, WORDS, rng.randint(4, 12))
        if kind > 0.8:
            text = f"- {text}"
        elif kind > 0.7:
            text = f"Seen on <{rng.choice(dates)}>: {text}"
        lines.append(text)
    return lines


def memex(seed: int, files: int = 6) -> Memex:
    rng = random.Random(seed)
    dates = [_date(rng) for _ in range(6)]  # few: public and private headings share them
    props = [*PROPERTIES, f":CREATED: [{rng.choice(dates)}]"]
    out: dict[str, str] = {}
    private: dict[str, list[bool]] = {}
    for n in range(files):
        lines: list[str] = ["#+TITLE: " + _sentence(rng, WORDS, 3)[:-1], ""]
        flags: list[bool] = [False, False]
        whole = rng.random() < 0.1
        if whole:
            lines.insert(1, f"#+FILETAGS: :{TAG}:")
            flags.append(True)
        for _ in range(rng.randint(3, 8)):
            hidden = whole or rng.random() < 0.35
            entry = _entry(rng, 1, private=hidden, dates=dates, props=props)
            lines += entry
            flags += [hidden] * len(entry)
            for _ in range(rng.randint(0, 2)):
                child = _entry(
                    rng, 2, private=hidden or rng.random() < 0.2, dates=dates, props=props
                )
                child_hidden = hidden or TAG in child[0]
                lines += child
                flags += [child_hidden] * len(child)
        if whole:
            flags = [True] * len(lines)
        out[f"notes{n}.org"] = "\n".join(lines) + "\n"
        private[f"notes{n}.org"] = flags
    return Memex(out, private)


@dataclass
class Figures:
    """What the filter did to one memex's lines, each sent alone and in a longer text."""

    public: int = 0
    public_withheld: int = 0
    private: int = 0
    private_leaked: int = 0
    examples: list[str] | None = None

    def add(self, other: Figures) -> None:
        self.public += other.public
        self.public_withheld += other.public_withheld
        self.private += other.private
        self.private_leaked += other.private_leaked


def measure(seed: int, where: str) -> Figures:
    """Scan a generated memex into a fresh index (as the agent's start does) and send
    its lines through the filter: public lines must come back unchanged, and no line
    of a private subtree may keep a word that tells (a name, a number of its own)."""
    import os

    from passepartout.security.privacy.index import PrivateIndex

    made = memex(seed)
    os.makedirs(where, exist_ok=True)
    for name, text in made.files.items():
        with open(os.path.join(where, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    index = PrivateIndex()
    index.scan([where])
    figures = Figures(examples=[])
    assert figures.examples is not None
    telling = {w.lower() for w in PRIVATE_WORDS}
    for name, text in made.files.items():
        lines = text.split("\n")
        flags = made.private[name]
        run: list[str] = []
        for line, hidden in zip(lines, [*flags, False], strict=False):
            if not hidden:
                run.append(line)
                if line.strip():
                    figures.public += 1
                    if index.withhold(line) != line:
                        figures.public_withheld += 1
                        figures.examples.append(f"public withheld: {line!r}")
                continue
            if run and index.withhold("\n".join(run)) != "\n".join(run):
                figures.examples.append(f"public run withheld: {run[-1]!r}")
                figures.public_withheld += 1
            run = []
            words = {w.strip(".,:").lower() for w in line.split()}
            if not words & telling:
                continue
            figures.private += 1
            for sent in (line, f"grep: {name}:7:{line} (end)"):
                out = index.withhold(sent).lower()
                if any(w in out for w in telling if w in words):
                    figures.private_leaked += 1
                    figures.examples.append(f"private leaked: {line!r}")
                    break
    return figures
