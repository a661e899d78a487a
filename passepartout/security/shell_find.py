"""find's expression read word by word: only tests and printing actions run without asking.

GNU find takes its starting points, then an expression of tests, operators and actions;
a word after a primary that takes an argument is that argument, whatever it looks like.
Actions that run programs, delete or write files (``-exec``, ``-delete``, ``-fprint``...)
ask, and so does any primary this table does not know.
"""

from __future__ import annotations

import re

from passepartout.security.shell.rules import names

RISKY = names("-exec -execdir -ok -okdir -delete -fprint -fprint0 -fprintf -fls")
WITH_ARGUMENT = names("""
    -name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size
    -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -perm -user -group -uid
    -gid -links -inum -samefile -lname -ilname -maxdepth -mindepth -regextype -fstype
    -used -context -printf -files0-from
    """)
NO_ARGUMENT = names("""
    -print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable
    -nouser -nogroup -depth -d -mount -xdev -noleaf -follow -daystart
    -ignore_readdir_race -noignore_readdir_race -warn -nowarn -not -a -and -o -or ! ( ) ,
    -help --help -version --version
    """)
_NEWER_XY = re.compile(r"-newer[aBcmt][aBcmt]")
_OPTIMISE = re.compile(r"-O\d*")


def check_find(argv: list[str]) -> list[str]:
    """Reasons to ask about a find command line (empty: it only tests and prints)."""
    args = argv[1:]
    k = 0
    while k < len(args) and (args[k] in ("-H", "-L", "-P") or _OPTIMISE.fullmatch(args[k])):
        k += 1
    if k < len(args) and args[k] == "-D":
        k += 2
    while k < len(args) and not (args[k].startswith("-") or args[k] in ("(", "!")):
        k += 1  # starting points
    while k < len(args):
        word = args[k]
        if word in RISKY:
            return [f"find {word} runs a program, deletes or writes files"]
        if word in WITH_ARGUMENT or _NEWER_XY.fullmatch(word):
            k += 2
        elif word in NO_ARGUMENT:
            k += 1
        else:
            return [f"find {word}: not a test or action that runs without asking"]
    return []
