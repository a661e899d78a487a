"""Which programs are risky, which write where, and which sed scripts only read.

The allowlisted commands' options are declared in :mod:`.allowlist`; this module
names the programs that always ask (shells, wrappers, interpreters, network tools),
the writers whose targets are checked against the protected places, and the few
checks of programs off the allowlist. GNU tools accept any unique prefix of a long
option (``--out`` is ``--output``), so long options are matched by prefix.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

Level = Literal["ask", "deny"]


def names(text: str) -> frozenset[str]:
    """A set of program names written as whitespace-separated words."""
    return frozenset(text.split())


SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "ash", "rbash", "busybox"}
)
WRAPPERS = names(
    """
    env xargs timeout nohup exec eval sudo doas su command builtin nice ionice stdbuf time
    chroot setsid unshare nsenter strace ltrace gdb watch flock taskset chrt script runuser
    parallel source . trap alias coproc fakeroot firejail bwrap systemd-run at batch
    crontab expect sg newgrp pkexec enable declare typeset export readonly local set shopt
    unset hash let mapfile readarray read fc history caller ulimit umask
    """
)
INTERPRETERS = names(
    """
    python python2 python3 pypy pypy3 perl ruby irb node nodejs deno bun php lua luajit
    tclsh wish Rscript R awk gawk mawk nawk emacs vim vi nvim ex ed julia pwsh java jshell
    sqlite3 guile sbcl racket ghci osascript make gdb m4 dc bc
    """
)
ONE_LINER_FLAGS = frozenset({"-c", "-e", "-E", "-r", "--eval", "--exec", "-x", "--command"})
NETWORK = names(
    """
    curl wget nc ncat netcat socat ssh scp sftp rsync telnet ftp tftp nmap ping dig
    nslookup host whois aria2c lynx links w3m openssl http https xh mosh
    """
)
# Tools whose every option is harmless, so a glob that expands to "-something" cannot hurt.
GLOB_SAFE = names(
    """
    ls cat wc head tail echo grep du stat nl tac rev realpath basename dirname cmp comm
    pwd true false
    """
)


@dataclass(frozen=True)
class Finding:
    """One reason to ask or deny, and whether the construct needs the network."""

    level: Level
    reason: str
    network: bool = False


def long_matches(arg: str, names: Iterable[str]) -> str | None:
    """The dangerous long option that ``arg`` selects (exact or unique-prefix style)."""
    if not arg.startswith("--") or len(arg) < 3:
        return None
    given = arg[2:].split("=", 1)[0]
    for name in names:
        if name.startswith(given):
            return name
    return None


def _options(argv: list[str]) -> list[str]:
    """Arguments before ``--`` (where an option can still be recognised)."""
    rest = argv[1:]
    return rest[: rest.index("--")] if "--" in rest else rest


def _tar(argv: list[str]) -> list[Finding]:
    names = (
        "to-command",
        "use-compress-program",
        "checkpoint-action",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
    )
    out = []
    for a in _options(argv):
        if long_matches(a, names) or a == "-I" or a.startswith("-I") or a == "-F":
            out.append(Finding("ask", f"tar {a} runs a program"))
    return out


_SED_SIMPLE = set("pdqQ=nNPDhHgGxl{}")
_SED_ADDR = re.compile(r"(\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*)(~\d+)?")
_SED_ADDR2 = re.compile(r"\+?\d+|~\d+|\$|/(?:[^/\\\n]|\\.)*/[IM]*")


def sed_script_safe(script: str) -> bool:
    """True when a sed script uses only commands that neither run programs nor write files."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;":
            i += 1
            continue
        m = _SED_ADDR.match(script, i)
        if m:
            i = m.end()
            if i < n and script[i] == ",":
                m2 = _SED_ADDR2.match(script, i + 1)
                if not m2:
                    return False
                i = m2.end()
        while i < n and script[i] in " !":
            i += 1
        if i >= n:
            return False
        c = script[i]
        if c in _SED_SIMPLE:
            i += 1
            while i < n and script[i].isdigit():
                i += 1
        elif c in "sy":
            i = _sed_s(script, i, flags_ok=(c == "s"))
            if i < 0:
                return False
        else:
            return False  # e, w, W, r, R, a, i, c, labels...: ask rather than guess
    return True


def _sed_s(script: str, i: int, *, flags_ok: bool) -> int:
    """Skip an ``s/re/repl/flags`` or ``y/a/b/`` command; -1 when unsafe or malformed."""
    if i + 1 >= len(script) or script[i + 1] in "\\\n":
        return -1
    delim, j, parts = script[i + 1], i + 2, 0
    while j < len(script) and parts < 2:
        if script[j] == "\\":
            j += 2
            continue
        if script[j] == delim:
            parts += 1
        j += 1
    if parts < 2:
        return -1
    while flags_ok and j < len(script) and script[j] not in ";\n}":
        if script[j] not in "gpiImM0123456789 ":
            return -1  # e executes the pattern space, w writes a file
        j += 1
    return j


# Checks of programs off the allowlist that a person may add to it (the allowlisted
# ones declare their options in allowlist.py).
ARG_CHECKS: dict[str, Callable[[list[str]], list[Finding]]] = {"tar": _tar}

# Programs that write to a path given as an argument: (name, which arguments are targets).
WRITERS: dict[str, Literal["all", "last", "of="]] = {
    "tee": "all",
    "truncate": "all",
    "cp": "last",
    "mv": "last",
    "ln": "last",
    "install": "last",
    "rsync": "last",
    "dd": "of=",
    "touch": "all",
    "rm": "all",
    "chmod": "all",
    "chown": "all",
    "shred": "all",
    "mkdir": "all",
    "rmdir": "all",
}


IN_PLACE_EDITORS = frozenset({"sed", "perl", "ruby"})


def _edits_in_place(arg: str) -> bool:
    """``-i``, ``-i.bak``, ``--in-place[=SUFFIX]``, or ``-i`` among combined short flags."""
    if arg.startswith("--"):
        return arg.startswith("--in-place") or arg.startswith("--in-pl")
    return arg.startswith("-") and "i" in arg[1:].split("=")[0][:4]


def write_targets(argv: list[str]) -> list[str]:
    """Paths a known writer program would modify."""
    kind = WRITERS.get(argv[0])
    args = [a for a in argv[1:] if not a.startswith("-")]
    if argv[0] in IN_PLACE_EDITORS and any(_edits_in_place(a) for a in argv[1:]):
        return args  # the script is among them, and is never a protected path
    if kind == "all":
        return args
    if kind == "last":
        return args[-1:]
    if kind == "of=":
        return [a[3:] for a in args if a.startswith("of=")]
    return []
