"""Seeded random org documents for checking the privacy reader against org-mode.

Each document mixes what decides where a private subtree ends: headings of every
level with tags (own, inherited, look-alikes), ``#+FILETAGS`` in every spelling and
place, blocks closed and not, drawers, LaTeX environments, and lines that look like
headings to a careless reader (``*\\t``, ``*`` and a no-break space, ``*bold*``,
indented stars, line separators other than LF).
"""

from __future__ import annotations

import random

TAG = "@personal"

TAGS = [
    ":@personal:", ":work:", ":@personal:home:", ":home:@personal:", ":@Personal:",
    ":@personally:", ":x@personal:", ":é:@personal:", ":x²:@personal:", ":a\u0301:@personal:",
    ":٣:@personal:", ":@personal::", "::@personal:", ":@personal:\u00a0", ":@personal:\t",
    ":@personal:  ", " :@personal:", ":@per-sonal:", ":a b:@personal:",
]
TITLES = ["Diary", "TODO Call the bank", "DONE [#A] Plan", "", "Notes 10:30 today",
          "COMMENT hidden", "Salary :not a tag: here", "Café", "x:y:"]
BODY = ["Plain text.", "- item one", "  indented text", "*bold* start", "*\tstar tab",
        "*\u00a0star nbsp", " * indented star", "**not a heading", "*", "**", "*** ",
        "* ", "*\u2028* sep", "text\u2028* Fake :@personal:", "line\x0c* ff :@personal:",
        "line\v* vt :@personal:", ": fixed width", "# comment", "| a | b |",
        "CLOSED: [2026-01-01 Thu]", "SCHEDULED: <2026-05-02 Sat>", ":END:",
        "\\begin{equation}", "\\end{equation}", "[fn:1] A footnote."]
FILETAGS = ["#+FILETAGS: :@personal:", "#+filetags: :a:@personal:", "#+FILETAGS: @personal",
            "#+FILETAGS: :work:", "  #+FILETAGS: :@personal:", "#+FILETAGS:@personal",
            "#+FILETAGS: :@personal", "#+FILETAGS: a @personal b", "#+FILETAGS: :@Personal:",
            "#+FILETAGS:   :x:\t:@personal:"]
BLOCKS = ["src org", "src emacs-lisp", "example", "EXAMPLE", "quote", "export html",
          "comment", "verse", "center", "note"]


def _heading(rng: random.Random, level: int) -> str:
    stars = "*" * level
    title = rng.choice(TITLES)
    line = f"{stars} {title}" if title else f"{stars} "
    if rng.random() < 0.55:
        tags = rng.choice(TAGS)
        sep = rng.choice([" ", "  ", "\t", ""]) if title else ""
        line += sep + tags
    if rng.random() < 0.1:
        line += rng.choice([" ", "\t", "  "])
    return line


def _block(rng: random.Random, level: int) -> list[str]:
    kind = rng.choice(BLOCKS)
    indent = rng.choice(["", "", "", "  "])
    out = [f"{indent}#+{rng.choice(['begin', 'BEGIN'])}_{kind}"]
    for _ in range(rng.randint(0, 3)):
        roll = rng.random()
        if roll < 0.3:
            out.append(_heading(rng, rng.randint(1, level + 1)))
        elif roll < 0.4:
            out.append(rng.choice(FILETAGS))
        else:
            out.append(rng.choice(BODY))
    if rng.random() < 0.7:
        name = kind.split()[0]
        out.append(f"{indent}#+{rng.choice(['end', 'END'])}_{name}")
    return out


def _drawer(rng: random.Random) -> list[str]:
    name = rng.choice(["PROPERTIES", "LOGBOOK", "NOTES"])
    out = [f":{name}:"]
    for _ in range(rng.randint(0, 2)):
        out.append(rng.choice([":ID: 42", rng.choice(FILETAGS), "- note", ":CRON: <2026-05-02>"]))
    if rng.random() < 0.8:
        out.append(":END:")
    return out


def _nested(rng: random.Random) -> list[str]:
    """A block inside a list item, a drawer or a greater block, closed inside or after."""
    inner = [f"{rng.choice(['', '  '])}#+begin_{rng.choice(['src', 'example'])}",
             rng.choice(FILETAGS), rng.choice(BODY)]
    closing = rng.choice(["#+end_src", "  #+end_example", "#+end_example", "#+END_SRC"])
    outer = rng.choice(["list", "drawer", "quote", "dynamic"])
    head, tail = {"list": ("- item", ""), "drawer": (":NOTES:", ":END:"),
                  "quote": ("#+begin_quote", "#+end_quote"),
                  "dynamic": ("#+BEGIN: clocktable", "#+END:")}[outer]
    body = [*inner, closing] if rng.random() < 0.5 else [*inner, tail, closing]
    return [head, *body, tail] if tail and tail not in body else [head, *body]


def document(rng: random.Random) -> str:
    """One org text."""
    lines: list[str] = []
    for _ in range(rng.randint(0, 3)):
        lines.append(rng.choice(["#+TITLE: Notes", "Preamble text.", "- a list", ""]))
    if rng.random() < 0.1:
        lines.append(rng.choice(FILETAGS))
    level = 0
    for _ in range(rng.randint(1, 14)):
        roll = rng.random()
        if roll < 0.35:
            level = max(1, min(5, level + rng.choice([-2, -1, 0, 1, 1])))
            lines.append(_heading(rng, level))
            if rng.random() < 0.2:
                lines += _drawer(rng)
        elif roll < 0.5:
            lines += _block(rng, max(level, 1))
        elif roll < 0.55:
            lines += _drawer(rng)
        elif roll < 0.57:
            lines.append(rng.choice(FILETAGS))
        elif roll < 0.61:
            lines += _nested(rng)
        elif roll < 0.63:
            lines += ["\\begin{align}", rng.choice(FILETAGS), "\\end{align}"]
        else:
            lines.append(rng.choice(BODY))
    text = "\n".join(lines)
    return text + ("\n" if rng.random() < 0.8 else "")


def documents(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [document(rng) for _ in range(count)]
