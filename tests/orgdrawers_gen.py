"""Seeded random org documents for checking the cron and hook scanner against org-mode.

Each document mixes what decides whether a ``:CRON:`` or ``:HOOK:`` property is one
org sees: property drawers right after a headline or its planning line, after a blank
line or body text, inside every kind of block (closed or not), in list items, other
drawers and footnotes; drawers in odd spellings (lower case, indented, not closed, a
line that is no property line, a tab after the name, ``:CRON+:``, ``nil``); ``COMMENT``
headings (after a TODO keyword and a priority, a file's own keywords, look-alikes);
``:ARCHIVE:`` tags and ``#+FILETAGS: :ARCHIVE:``; and line ends CRLF, CR or mixed.
"""

from __future__ import annotations

import random

STAMPS = ["<2026-05-04 Mon 09:00 +1w>", "<2026-05-03 Sun>", "", "nil", "  <2026-06-01 Mon>  ",
          "[2026-05-04 Mon]", "x\ty", "NIL"]
HOOKS = ["notify-me", "a b", "", "nil", "verify-integrity  "]
KEYWORDS = ["TODO", "DONE", "WAIT", "NEXT", "COMMENT", "todo"]
TITLES = ["Weekly summary", "Daily digest", "Call the bank", "", "COMMENT", "COMMENT hidden",
          "COMMENTS are words", "COMMENT\ttab", "comment lower", "[#A] COMMENT prio",
          "[#B] Prio", "Café ☕",
          "Notes 10:30 :not a tag: here", "COMMENT:x:", " COMMENT two spaces"]
TAGS = ["", "", "", "", "", "", ":ARCHIVE:", ":work:ARCHIVE:", ":archive:", ":ARCHIVED:",
        ":ARCHIVE:x:", ":work:", ":@personal:"]
PLANNING = ["SCHEDULED: <2026-05-02 Sat>", "  DEADLINE: <2026-05-09 Sat>",
            "CLOSED: [2026-05-01 Fri 10:00] SCHEDULED: <2026-05-02 Sat>",
            "scheduled: <2026-05-02 Sat>", "SCHEDULED <2026-05-02 Sat>"]
BODY = ["Plain text.", "", "- item", "  indented text", ": fixed width", "# a comment",
        "| a | b |", "*bold* start", "*\tstar tab", " * indented star", ":END:",
        ":PROPERTIES:", "[fn:1] A footnote.", "#+TODO: COMMENT | X", "#+FILETAGS: :ARCHIVE:"]
BLOCKS = ["src", "src emacs-lisp", "SRC org", "example", "EXAMPLE", "quote", "QUOTE", "verse",
          "export html", "comment", "center", "note"]
PRE = ["#+TITLE: Notes", "Preamble text.", "", "#+TODO: WAIT NEXT | DONE",
       "#+TODO: COMMENT | X", "#+todo: TODO(t) WAIT(w@/!) | DONE(d)", "#+SEQ_TODO: NEXT",
       "#+FILETAGS: :work:", "#+begin_src org\n#+TODO: COMMENT\n#+end_src"]
NAMES = ["CRON", "HOOK", "cron", "Hook", "CRON+", "HOOK+", "ID", "TIER", "REFLEX"]
VALUES = {"ID": ["job-1", "job-2", ""], "TIER": ["reasoning", "reflex"], "REFLEX": ["ping"]}


def _value(rng: random.Random, name: str) -> str:
    base = name.rstrip("+").upper()
    if base == "CRON":
        return rng.choice(STAMPS)
    if base == "HOOK":
        return rng.choice(HOOKS)
    return rng.choice(VALUES[base])


def _property(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    value = _value(rng, name)
    roll = rng.random()
    if roll < 0.03:
        return f":{name}:\t{value}"  # a tab after the name: no property line for org
    if roll < 0.05:
        return f":{name}:{value}"
    if roll < 0.08:
        return rng.choice([f":{name} : {value}", f":{name}:: {value}", f"{name}: {value}",
                           f":{name}\u00a0: {value}", f":{name}:\u00a0{value}"])
    indent = rng.choice(["", "", "  ", "\t"])
    return f"{indent}:{name}: {value}".rstrip(" ") if not value else f"{indent}:{name}: {value}"


def drawer(rng: random.Random) -> list[str]:
    """A property drawer, mostly well formed, holding CRON or HOOK more often than not."""
    indent = rng.choice(["", "", "", "  ", "\t"])
    opening = rng.choice([":PROPERTIES:"] * 6 + [":properties:", ":PROPERTIES: ",
                                                 ":PROPERTIES: x", ":PROPERTY:"])
    out = [indent + opening]
    for _ in range(rng.randint(0, 2)):
        out.append(_property(rng))
    if rng.random() < 0.75:
        out.append(f":{rng.choice(['CRON', 'HOOK'])}: {_value(rng, 'CRON')}")
        rng.shuffle(out[1:])
    if rng.random() < 0.04:
        out.insert(rng.randint(1, len(out)), rng.choice(["text in a drawer", "", "- item"]))
    if rng.random() < 0.94:
        out.append(indent + rng.choice([":END:"] * 5 + [":end:", ":END: ", ":END: x"]))
    return out


def _block(rng: random.Random, inner: list[str]) -> list[str]:
    kind = rng.choice(BLOCKS)
    indent = rng.choice(["", "", "  "])
    out = [f"{indent}#+{rng.choice(['begin', 'BEGIN'])}_{kind}", *inner]
    if rng.random() < 0.85:
        out.append(f"{indent}#+{rng.choice(['end', 'END'])}_{kind.split()[0]}")
    return out


def _heading(rng: random.Random, level: int) -> str:
    parts = ["*" * level]
    if rng.random() < 0.3:
        parts.append(rng.choice(KEYWORDS))
    title = rng.choice(TITLES) if rng.random() < 0.4 else rng.choice(TITLES[:3])
    if title:
        parts.append(title)
    line = " ".join(parts)
    tags = rng.choice(TAGS)
    if tags:
        line += rng.choice([" ", "   ", "\t"]) + tags
    if rng.random() < 0.05:
        line += rng.choice([" ", "\t"])
    if rng.random() < 0.03:
        line = line.replace(" ", "\t", 1)  # stars and a tab: body text to org
    return line


def _entry(rng: random.Random) -> list[str]:
    """What follows a headline: planning, the drawer where org wants it or elsewhere."""
    out: list[str] = []
    roll = rng.random()
    if roll < 0.25:
        out.append(rng.choice(PLANNING))
    place = rng.random()
    if place < 0.45:
        out += drawer(rng)
    elif place < 0.5:
        out += ["", *drawer(rng)]
    elif place < 0.58:
        out += [rng.choice(BODY[:8]), *drawer(rng)]
    elif place < 0.7:
        out += _block(rng, drawer(rng))
    elif place < 0.76:
        out += ["- item", *["  " + line for line in drawer(rng)]]
    elif place < 0.8:
        out += ["1. item", *drawer(rng)]
    elif place < 0.84:
        out += [":LOGBOOK:", *drawer(rng), ":END:"]
    elif place < 0.86:
        out += ["[fn:1] Footnote.", *drawer(rng)]
    elif place < 0.88:
        out += [rng.choice(PLANNING), *drawer(rng)]
    for _ in range(rng.randint(0, 2)):
        out.append(rng.choice(BODY))
    return out


def document(rng: random.Random) -> str:
    """One org text."""
    lines: list[str] = []
    for _ in range(rng.randint(0, 2)):
        lines.append(rng.choice(PRE))
    if rng.random() < 0.04:
        lines.append(rng.choice(["#+FILETAGS: :ARCHIVE:", "#+filetags: work ARCHIVE"]))
    if rng.random() < 0.1:
        lines += drawer(rng)
    level = 0
    for _ in range(rng.randint(1, 9)):
        level = max(1, min(4, level + rng.choice([-2, -1, 0, 1, 1])))
        lines.append(_heading(rng, level))
        lines += _entry(rng)
    text = "\n".join(lines) + ("\n" if rng.random() < 0.85 else "")
    eol = rng.random()
    if eol < 0.08:
        text = text.replace("\n", "\r\n")
    elif eol < 0.11:
        text = text.replace("\n", "\r")
    elif eol < 0.16:  # mixed: some lines only
        text = "".join(c + ("\r" if c == "\n" and rng.random() < 0.5 else "") for c in text)
        text = text.replace("\n\r", "\r\n")
    elif eol < 0.19:  # a stray CR somewhere
        at = rng.randint(0, len(text))
        text = text[:at] + "\r" + text[at:]
    return text


def documents(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [document(rng) for _ in range(count)]
