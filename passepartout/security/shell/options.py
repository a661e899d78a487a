"""A command's declared options, and an argv read the way GNU getopt_long reads it.

Each allowlisted command declares the options that are safe and the ones that write
files or run programs (``risky``). Reading an argv against its spec gives the options
and operands the program will see, and a reason for each option that must be asked
about: a risky one, an unknown one, or an ambiguous abbreviation. GNU tools accept any
unique prefix of a long option (``--out`` is ``--output``), so a prefix is resolved
against every declared name, risky ones included; options may follow operands
(permutation) until ``--``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Spec:
    """The options of one command.

    ``flags``: short letters without a value; ``valued``: short letters with a value
    (attached or the next word); ``optional``: short letters whose value can only be
    attached (``-i.bak``). ``longs``: names, ``name=`` taking a value, ``name?`` an
    optional ``=value``. ``risky``: option (``-o`` or ``--output``) -> why it asks.
    ``numbers``: ``-5`` is an option (head, grep) or an operand (seq).
    """

    flags: str = ""
    valued: str = ""
    optional: str = ""
    longs: str = ""
    risky: dict[str, str] = field(default_factory=dict)
    numbers: bool = False
    number_operands: bool = False
    permute: bool = True

    def long_table(self) -> dict[str, str]:
        """Long option name -> "" (no value), "=" (value) or "?" (optional value)."""
        table: dict[str, str] = {}
        for word in self.longs.split():
            kind = word[-1] if word[-1] in "=?" else ""
            table[word.rstrip("=?")] = kind
        for name in self.risky:
            if name.startswith("--"):
                table.setdefault(name[2:].rstrip("=?"), "=" if name.endswith("=") else "?")
        return table


@dataclass
class Reading:
    """An argv as the program reads it: options (canonical names and values), operands,
    and the reasons to ask."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)
    asks: list[str] = field(default_factory=list)


def _risk(spec: Spec, name: str) -> str | None:
    for key in (name, name + "=", name + "?"):
        if key in spec.risky:
            return spec.risky[key]
    return None


def read_argv(name: str, args: list[str], spec: Spec) -> Reading:
    """Read ``args`` (the words after the command name) against ``spec``."""
    out = Reading()
    table = spec.long_table()
    k = 0
    while k < len(args):
        a = args[k]
        k += 1
        if a == "--":
            out.operands.extend(args[k:])
            break
        if spec.number_operands and _NUMBER.fullmatch(a):
            out.operands.append(a)
        elif a.startswith("--"):
            k = _long(name, a, args, k, spec, table, out)
        elif a.startswith("-") and a != "-":
            k = _short(name, a, args, k, spec, out)
        else:
            out.operands.append(a)
            if not spec.permute:
                out.operands.extend(args[k:])
                break
    return out


def _long(
    name: str, a: str, args: list[str], k: int, spec: Spec, table: dict[str, str], out: Reading
) -> int:
    given, eq, value = a[2:].partition("=")
    if given in table:
        full = given
    else:
        hits = [n for n in table if n.startswith(given)] if given else []
        risky = [(h, _risk(spec, "--" + h)) for h in hits if _risk(spec, "--" + h)]
        if len(hits) > 1 and risky:
            what = ", ".join(f"--{h} ({why})" for h, why in risky)
            out.asks.append(f"{name} {a} may be read as {what}")
            return len(args)
        if len(hits) != 1:
            what = "ambiguous abbreviation" if hits else "unknown option"
            out.asks.append(f"{name} {a}: {what} (only declared options run without asking)")
            return len(args)
        full = hits[0]
    reason = _risk(spec, "--" + full)
    if reason:
        out.asks.append(f"{name} {a} {reason}")
        return len(args)
    kind = table[full]
    if kind == "" and eq:
        out.asks.append(f"{name} {a}: --{full} takes no value")
        return len(args)
    if kind == "=" and not eq:
        if k >= len(args):
            out.asks.append(f"{name} {a}: --{full} needs a value")
            return k
        value, k = args[k], k + 1
    out.options.append(("--" + full, value if (eq or kind == "=") else None))
    return k


def _short(name: str, a: str, args: list[str], k: int, spec: Spec, out: Reading) -> int:
    body = a[1:]
    if spec.numbers and body.isdigit():
        out.options.append(("-" + body, None))
        return k
    for pos, ch in enumerate(body):
        reason = _risk(spec, "-" + ch)
        if reason:
            out.asks.append(f"{name} {a} {reason}")
            return len(args)
        rest = body[pos + 1 :]
        if ch in spec.valued:
            if not rest:
                if k >= len(args):
                    out.asks.append(f"{name} {a}: -{ch} needs a value")
                    return k
                rest, k = args[k], k + 1
            out.options.append(("-" + ch, rest))
            return k
        if ch in spec.optional:
            out.options.append(("-" + ch, rest or None))
            return k
        if ch in spec.flags or (spec.numbers and ch.isdigit()):
            out.options.append(("-" + ch, None))
            continue
        out.asks.append(
            f"{name} {a}: unknown option -{ch} (only declared options run without asking)"
        )
        return len(args)
    return k
