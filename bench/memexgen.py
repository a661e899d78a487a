"""A seeded org memex resembling worg: nested headings, drawers, tags, src blocks.

    python bench/memexgen.py DIR [MEGABYTES]     # 7.5 MB: worg's size (285 files)
    python bench/memexgen.py                     # just say what it generates

Files average about 26 KB, as worg's do: a #+TITLE and #+OPTIONS header,
headings up to four levels deep, some with TODO keywords, priorities, tags,
planning lines, property drawers (some with :ID:), LOGBOOK drawers with clock
lines, src and example blocks (a few holding heading-like lines inside a
block), tables, lists, links and timestamps.
"""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path

_TEXT = (
    "org mode emacs babel export latex html agenda capture table spreadsheet link"
    " property drawer heading outline clock timestamp tag archive refile note project"
    " garden tax meeting idea source block python shell elisp worg tutorial the a of"
    " and to in is for with on that this by as it from be are at or an"
)
WORDS = _TEXT.split()
TAGS = ["babel", "export", "noexport", "emacs", "tutorial", "faq", "@home", "work_2"]
LANGS = ["emacs-lisp", "python", "sh", "org", "C", "latex"]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _paragraph(rng: random.Random) -> list[str]:
    kind = rng.random()
    if kind < 0.45:
        words = _sentence(rng, rng.randint(20, 90)).split()
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), "[[https://orgmode.org/worg/][Worg]]")
        if rng.random() < 0.1:
            words.insert(rng.randrange(len(words)), "<2024-03-05 Tue>")
        return [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    if kind < 0.65:
        lang = rng.choice(LANGS)
        lines = [f"#+begin_src {lang} :results output"]
        for _ in range(rng.randint(2, 14)):
            lines.append("  " * rng.randint(0, 3) + f"({rng.choice(WORDS)} {_sentence(rng, 4)})")
        if lang == "org" and rng.random() < 0.5:
            lines.append("* a heading inside a block")
        lines.append("#+end_src")
        return lines
    if kind < 0.8:
        lines = [f"| {' | '.join(_sentence(rng, 1) for _ in range(4))} |", "|---+---+---+---|"]
        for _ in range(rng.randint(2, 8)):
            lines.append("| " + " | ".join(str(rng.randint(0, 999)) for _ in range(4)) + " |")
        return lines
    if kind < 0.95:
        return [f"- {_sentence(rng, rng.randint(4, 16))}" for _ in range(rng.randint(2, 7))]
    return ["#+begin_example", _sentence(rng, 10), "#+end_example"]


def _heading(rng: random.Random, level: int, h: int) -> list[str]:
    todo = rng.choice(["", "", "", "", "TODO ", "DONE "])
    prio = "[#A] " if rng.random() < 0.05 else ""
    title = f"{_sentence(rng, rng.randint(1, 6)).capitalize()} {h}"
    tags = ""
    if rng.random() < 0.25:
        tags = "  :" + ":".join(rng.sample(TAGS, rng.randint(1, 3))) + ":"
    lines = [f"{'*' * level} {todo}{prio}{title}{tags}"]
    if todo and rng.random() < 0.5:
        lines.append(f"  SCHEDULED: <2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} Mon>")
    if rng.random() < 0.35:
        lines.append("  :PROPERTIES:")
        if rng.random() < 0.5:
            lines.append(f"  :ID:       {rng.getrandbits(64):016x}-{h}")
        lines.append(f"  :CUSTOM_ID: {_sentence(rng, 1)}-{h}")
        lines.append("  :END:")
    if todo and rng.random() < 0.2:
        lines += [
            "  :LOGBOOK:",
            "  CLOCK: [2024-01-02 Tue 10:00]--[2024-01-02 Tue 11:30] =>  1:30",
            '  - State "DONE"       from "TODO"       [2024-01-02 Tue 11:30]',
            "  :END:",
        ]
    for _ in range(rng.randint(0, 4)):
        lines += ["", *_paragraph(rng)]
    return lines


def _long_heading(rng: random.Random, h: int) -> list[str]:
    """A heading whose body is one long block (a table or a src block)."""
    lines = [f"* {_sentence(rng, 3).capitalize()} reference {h}", ""]
    size = rng.randint(60_000, 250_000)
    if rng.random() < 0.5:
        lines.append("| " + " | ".join(_sentence(rng, 1) for _ in range(6)) + " |")
        while sum(len(x) for x in lines) < size:
            lines.append("| " + " | ".join(_sentence(rng, 2) for _ in range(6)) + " |")
    else:
        lines.append(f"#+begin_src {rng.choice(LANGS)}")
        while sum(len(x) for x in lines) < size:
            lines.append("  " * rng.randint(0, 3) + f"({rng.choice(WORDS)} {_sentence(rng, 6)})")
        lines.append("#+end_src")
    return lines


def make_memex(
    directory: Path, megabytes: float = 7.5, seed: int = 7, long_every: int = 0
) -> tuple[int, int]:
    """Write files until ``megabytes`` of org text; returns (files, headings).
    ``long_every``: one file in that many gets a long heading (0: none)."""
    rng = random.Random(seed)
    long_rng = random.Random(seed + 1)  # the rest of the memex stays as without
    directory.mkdir(parents=True, exist_ok=True)
    total, headings, f = 0, 0, 0
    while total < megabytes * 1e6:
        lines = [
            f"#+TITLE: {_sentence(rng, 4).title()}",
            "#+OPTIONS: H:3 num:nil toc:t",
            "#+STARTUP: overview",
            "",
            _sentence(rng, 30),
        ]
        size, level = rng.randint(8_000, 45_000), 1
        text_len = 0
        while text_len < size:
            level = max(1, min(4, level + rng.choice([-2, -1, 0, 0, 1, 1])))
            block = _heading(rng, level, headings)
            headings += 1
            lines += block
            text_len += sum(len(x) + 1 for x in block)
        if long_every and f % long_every == long_every - 1:
            lines += _long_heading(long_rng, headings)
            headings += 1
        text = "\n".join(lines) + "\n"
        sub = directory / ("" if f % 3 == 0 else f"section{f % 7}")
        sub.mkdir(exist_ok=True)
        (sub / f"page{f}.org").write_text(text)
        total += len(text.encode())
        f += 1
    return f, headings


def main() -> None:
    if len(sys.argv) > 1:
        out = Path(sys.argv[1])
        files, heads = make_memex(out, float(sys.argv[2]) if len(sys.argv) > 2 else 7.5)
        print(f"{files} files, {heads} headings in {out}")
        return
    with tempfile.TemporaryDirectory() as tmp:  # run bare (make bench): say what it makes
        files, heads = make_memex(Path(tmp))
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*.org")) / 1e6
        print(f"memexgen: {files} files, {heads} headings, {size:.1f} MB (seed 7)")


if __name__ == "__main__":
    main()
