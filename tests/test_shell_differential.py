"""The shell analysis against bash itself: whenever it allows, its argv is bash's.

Command lines are generated (seeded) from a grammar of bash's quoting and expansions:
plain words, quotes, escapes, globs (incl. brackets), braces of any nesting, tilde
forms, parameter, arithmetic and command expansions, ANSI-C and locale quoting. Every
line the analysis allows is run by ``bash -c`` in a scratch directory with a few files
(so globs match), with each command replaced by a function that prints its arguments,
in one bash call per 500 lines; the argv must be the analysis's exactly. A line it asks about or
refuses proves nothing either way and is not run.

``PASSEPARTOUT_DIFF_CASES`` sets the number of generated lines (default 400) and
``PASSEPARTOUT_DIFF_SEED`` the seed, for a longer run.
"""

from __future__ import annotations

import os
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from passepartout.security.shell import ShellPolicy, analyze

CASES = int(os.environ.get("PASSEPARTOUT_DIFF_CASES", "400"))
SEED = int(os.environ.get("PASSEPARTOUT_DIFF_SEED", "11"))

PLAIN = ["a", "b", "ab", "x.py", "-n", "--x", "-", "=", "a=b", ":", "%", "@", "+", "^",
         ",", ".", "..", "/", "d/", "d", "]", "!", "HEAD~1", "é", "-la", "-e", "#", "0"]
QUOTED = ["'a b'", "'$x'", "'*'", "'{a,b}'", "'~'", "'\\'", "'\"'", "''", "'-n'",
          '"a b"', '"*"', '"{a,b}"', '"~"', '"\\\\"', '"\\""', '"\\$"', '"\\a"', '"$x"',
          '"$"', '"`x`"', '"!"', "\"'\"", '""', '"~/x"']
ESCAPED = ["\\" + c for c in "*?[{},~$ \\'\"a-#!"]
GLOBS = ["*", "?", "[ab]", "[!a]", "[^a]", "*.py", "d/*", "d/*.py", ".*", "*/", "a*",
         "?b", "[", "[]]", "d/?.py", "/*", "x*", "*b", "**", "-*", "*[", "??", "nomatch*"]
BRACES = ["{a,b}", "{a,{b,c}}", "{x,}", "{,b}", "a{,b}", "{1..3}", "{a..c}", "{}", "{a}",
          "{a,b}{c,d}", "{'a',b}", "{a\\,b}", "{-n,}", "{{a,b}}", "{a,b", "a}", "{",
          "}", "{a,'}'}", "\\{a,{b,c}}", "{a..}", "@{u}", "{1..2..1}"]
TILDES = ["~", "~/", "~/x", "~+", "~-", "~root", "~nouser", "a=~/x", "a:~", "x=~",
          "--o=~/x", "~'/x'", "~\"\"", "a~", "~x/y", "~/'a b'", "~/*"]
EXPANSIONS = ["$x", "${x}", "$HOME", "$(echo hi)", "`echo hi`", "$((1+2))", "$'\\x41'",
              '$"x"', "$", "$1", "$@", "${x:-a b}", "$IFS", "a$", "$%"]
# Weighted so that about a third of the lines are allowed (and so compared with bash).
FAMILIES = [PLAIN, PLAIN, PLAIN, QUOTED, QUOTED, ESCAPED, GLOBS, GLOBS, BRACES, TILDES, EXPANSIONS]
COMMANDS = ["echo", "echo", "echo", "ls", "cat", "grep", "wc", "sort", "cut", "head"]
JOINERS = ["; ", " && ", "\n"]
FILES = ["a", "b", "ab", "x.py", "y.py", ".h", "-n", "a b", "d/e", "d/f.py", "d/.g"]


@dataclass
class Case:
    analysed: str
    run: str


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(rng.choice(FAMILIES)) for _ in range(rng.randint(1, 2)))


def generate(rng: random.Random) -> Case:
    """One command line, and the same line with every command replaced by ``__a``."""
    parts_a: list[str] = []
    parts_r: list[str] = []
    count = rng.randint(1, 3)
    for i in range(count):
        words = "".join(" " + _word(rng) for _ in range(rng.randint(0, 4)))
        name = rng.choice(COMMANDS)
        joiner = rng.choice(JOINERS) if i else ""
        parts_a.append(f"{joiner}{name}{words}")
        parts_r.append(f"{joiner}__a{words}")
    return Case("".join(parts_a), "".join(parts_r))


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    home = tmp_path / "home"
    home.mkdir()
    for name in FILES:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text("x\n")
    monkeypatch.setenv("HOME", str(home))
    return ws


def bash_argvs(cases: list[Case], cwd: Path) -> list[list[list[str]]]:
    """What bash passes to each command of each case, from one bash call (``bash -c``,
    as the sandbox runs commands)."""
    # Control characters mark a command and a case: no generated word holds one.
    script = ["__a() { printf '%s\\0' $'\\x01' \"$@\"; }"]
    for case in cases:
        script.append("printf '%s\\0' $'\\x02'")
        script.append(case.run)
    env = {"HOME": os.environ["HOME"], "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    proc = subprocess.run(
        ["bash", "-c", "\n".join(script)], cwd=cwd, env=env, capture_output=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    fields = proc.stdout.decode("utf-8", errors="surrogateescape").split("\0")[:-1]
    out: list[list[list[str]]] = []
    for item in fields:
        if item == "\x02":
            out.append([])
        elif item == "\x01":
            out[-1].append([])
        else:
            out[-1][-1].append(item)
    return out


def test_every_allowed_line_has_bash_argv(scratch: Path) -> None:
    rng = random.Random(SEED)
    policy = ShellPolicy(workspace=scratch)
    allowed: list[tuple[Case, list[list[str]]]] = []
    asked = 0
    for _ in range(CASES):
        case = generate(rng)
        verdict = analyze(case.analysed, policy)
        if verdict.decision == "allow":
            allowed.append((case, [argv[1:] for argv in verdict.commands]))
        else:
            asked += 1
    cases = [case for case, _ in allowed]
    ran: list[list[list[str]]] = []
    for start in range(0, len(cases), 500):
        ran.extend(bash_argvs(cases[start : start + 500], scratch))
    assert len(ran) == len(allowed)
    wrong = [
        (case.analysed, ours, theirs)
        for (case, ours), theirs in zip(allowed, ran, strict=True)
        if ours != theirs
    ]
    print(f"differential: {CASES} lines, {len(allowed)} allowed and run by bash, "
          f"{asked} asked or refused, {len(wrong)} disagreements")
    assert not wrong, wrong[:5]
    # The grammar must exercise both sides: plenty allowed, plenty asked.
    assert len(allowed) >= CASES // 10 and asked >= CASES // 4
