"""Shell policy: decide whether a proposed bash command may run, must be asked, or is refused.

The command is parsed with bashlex and every node is visited; only plain commands whose
argv[0] is on the allowlist, whose every word the analysis reduces to exactly the
argument bash passes (:mod:`.words`: literal words, a leading ``~``, and simple globs
for tools whose every option is harmless, expanded here as bash would), with declared
options only (:mod:`.allowlist`), joined by ``&&``, ``||``, ``;``, newline or ``|``,
are allowed. Anything the analysis does not fully understand asks; a parse error never
allows. Deny beats ask beats allow across all subcommands.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from passepartout.security.sensitive import CREDENTIALS, PROTECTED
from passepartout.security.shell import glob as shell_glob
from passepartout.security.shell import rules
from passepartout.security.shell.allowlist import check_options
from passepartout.security.shell.bashparse import parse
from passepartout.security.shell.git import NETWORK as GIT_NETWORK
from passepartout.security.shell.git_hardening import repository_risks
from passepartout.security.shell.words import (
    WordInfo,
    decode_word,
    has_non_ascii,
    suspicious_characters,
)

log = logging.getLogger(__name__)

Decision = Literal["allow", "ask", "deny"]

DEFAULT_ALLOWLIST = rules.names(
    """
    ls cat grep rg git echo printf wc head tail sort uniq find pwd date true false cut tr
    basename dirname realpath stat du nl tac rev diff cmp comm seq whoami uname id sed cd
    """
)
DEFAULT_PROTECTED = PROTECTED
DEFAULT_SECRETS = CREDENTIALS
_SAFE_REDIRECT_TARGETS = frozenset({"/dev/null"})
_PIPE_TO_SHELL = re.compile(r"\|&?\s*(?:sudo\s+|env\s+)?(?:\S*/)?(?:ba|da|z|k|mk|a)?sh\b")
_DEV_NET = re.compile(r"/dev/(?:tcp|udp)/")


@dataclass(frozen=True)
class ShellPolicy:
    """What may run without asking. ``protected_paths``: writing there is refused.

    ``secret_paths``: reading there asks, and the sandbox hides them. Relative entries
    (``.git/hooks``) match anywhere in a path; ``workspace`` resolves relative targets.
    """

    allowlist: frozenset[str] = DEFAULT_ALLOWLIST
    protected_paths: tuple[str, ...] = DEFAULT_PROTECTED
    secret_paths: tuple[str, ...] = DEFAULT_SECRETS
    workspace: Path | None = None
    max_length: int = 20_000
    max_commands: int = 1_000


@dataclass
class ShellVerdict:
    """The decision, the human reasons for it, and the argv of every simple command."""

    decision: Decision
    reasons: list[str] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    network: bool = False


class _Collector:
    """Accumulates findings while walking the tree; the strictest one wins."""

    def __init__(self, cmd: str, policy: ShellPolicy) -> None:
        self.cmd = cmd
        self.policy = policy
        self.level: Decision = "allow"
        self.reasons: list[str] = []
        self.commands: list[list[str]] = []
        self.network = False
        start = policy.workspace if policy.workspace is not None else Path.cwd()
        # Where commands may run: the workspace, and every place a `cd` may have gone.
        self.cwds: list[str] = [os.path.normpath(os.path.abspath(start))]
        self._places: dict[tuple[str, ...], tuple[frozenset[str], list[str]]] = {}

    def places(self, entries: tuple[str, ...]) -> tuple[frozenset[str], list[str]]:
        """``entries`` as absolute places (as written and resolved) and relative ones
        (matched anywhere in a path), worked out once per analysis."""
        found = self._places.get(entries)
        if found is None:
            bases: set[str] = set()
            anywhere: list[str] = []
            for entry in entries:
                expanded = os.path.expanduser(entry)
                if os.path.isabs(expanded):
                    for base in (os.path.normpath(expanded), os.path.realpath(expanded)):
                        bases.add(base.rstrip("/") or "/")
                else:
                    anywhere.append(expanded.strip("/"))
            found = self._places[entries] = (frozenset(bases), anywhere)
        return found

    def add(self, level: Decision, reason: str, *, network: bool = False) -> None:
        order = {"allow": 0, "ask": 1, "deny": 2}
        if order[level] > order[self.level]:
            self.level = level
        prefix = "refused: " if level == "deny" else ""
        if prefix + reason not in self.reasons:
            self.reasons.append(prefix + reason)
        self.network = self.network or network

    def verdict(self) -> ShellVerdict:
        if self.level == "deny":
            # A refusal leads; the asks behind it are context.
            self.reasons.sort(key=lambda r: not r.startswith("refused: "))
        return ShellVerdict(self.level, self.reasons, self.commands, self.network)


def analyze(cmd: str, policy: ShellPolicy | None = None) -> ShellVerdict:
    """Decide whether ``cmd`` may run as is ("allow"), needs a person ("ask") or not at all."""
    policy = policy or ShellPolicy()
    col = _Collector(cmd, policy)
    if not cmd.strip():
        col.add("deny", "the command is empty")
        return col.verdict()
    if len(cmd) > policy.max_length:
        col.add("ask", f"the command is longer than {policy.max_length} characters")
        _raw_scan(col)
        return col.verdict()
    _raw_scan(col)
    if "\x00" in cmd:
        return col.verdict()
    try:
        trees = parse(cmd)
    except Exception as exc:  # bashlex raises many types, all mean "not understood"
        log.debug("bashlex could not parse %r: %s", cmd, exc)
        col.add("ask", f"the command could not be parsed ({_short(exc)})")
        return col.verdict()
    _check_coverage(trees, col)
    for tree in trees:
        _visit(tree, col)
    if len(col.commands) > policy.max_commands:
        col.add("ask", f"the command has more than {policy.max_commands} simple commands")
    return col.verdict()


_GAP_OK = re.compile(r"(?:[\s;&]|#[^\n]*)*")


def _check_coverage(trees: Sequence[Any], col: _Collector) -> None:
    """Text between the parsed trees must be blank, a separator or a comment."""
    end = 0
    for tree in [*trees, None]:
        start = tree.pos[0] if tree is not None else len(col.cmd)
        gap = col.cmd[end:start]
        if not _GAP_OK.fullmatch(gap):
            col.add("ask", f"part of the command was not understood ({gap.strip()[:40]!r})")
        if tree is not None:
            end = max(end, _span_end(tree))


def _span_end(tree: Any) -> int:
    """The furthest position any node of ``tree`` covers (here-document bodies included)."""
    import bashlex  # loaded already: the tree is its parse

    end, stack = 0, [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, bashlex.ast.node):
            end = max(end, node.pos[1])
            stack.extend(v for v in vars(node).values() if isinstance(v, list | bashlex.ast.node))
    return end


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:120]


def _raw_scan(col: _Collector) -> None:
    """Checks on the raw text, which hold even where the parser fails or disagrees."""
    cmd = col.cmd
    if "\x00" in cmd:
        col.add("deny", "the command contains a NUL byte (bash would run something else)")
    for reason in suspicious_characters(cmd):
        col.add("ask", reason)
    if "\\\n" in cmd:
        col.add("ask", "line continuation (backslash-newline)")
    if _DEV_NET.search(cmd):
        col.add("ask", "network access through /dev/tcp or /dev/udp", network=True)
    if _PIPE_TO_SHELL.search(cmd):
        col.add("deny", "output piped into a shell (| sh, | bash)")


def _visit(node: Any, col: _Collector) -> None:
    kind = node.kind
    if kind == "list":
        for part in node.parts:
            if part.kind == "operator" and part.op == "&":
                col.add("ask", "background job &")
            elif part.kind != "operator":
                _visit(part, col)
    elif kind == "pipeline":
        _visit_pipeline(node, col)
    elif kind == "command":
        _visit_command(node, col, piped_into=False)
    elif kind == "compound":
        _visit_compound(node, col)
    elif kind == "function":
        col.add("ask", "function definition")
        for part in node.parts:
            if part.kind == "compound":
                _visit(part, col)
    elif kind in ("if", "for", "while", "until"):
        col.add("ask", f"control structure ({kind})")
        for part in node.parts:
            if part.kind not in ("reservedword", "word", "operator", "pipe"):
                _visit(part, col)
            elif part.kind == "word":
                _visit_word(part, col, position=1, argv0="")
    else:
        col.add("ask", f"shell construct the analysis does not know ({kind})")


def _visit_compound(node: Any, col: _Collector) -> None:
    opener = node.list[0].word if node.list and node.list[0].kind == "reservedword" else ""
    if opener == "(":
        col.add("ask", "subshell ( ... )")
    elif opener == "{":
        col.add("ask", "command grouping { ... }")
    for part in node.list:
        if part.kind not in ("reservedword", "operator"):
            _visit(part, col)
    for redirect in getattr(node, "redirects", []) or []:
        _visit_redirect(redirect, col)


def _visit_pipeline(node: Any, col: _Collector) -> None:
    index = 0
    for part in node.parts:
        if part.kind == "command":
            _visit_command(part, col, piped_into=index > 0)
            index += 1
        elif part.kind in ("pipe", "reservedword"):
            if part.kind == "pipe" and part.pipe == "|&":
                col.add("ask", "pipe of standard error |&")
        else:
            before = len(col.commands)
            _visit(part, col)
            if index > 0:
                col.add("ask", "compound command inside a pipeline")
                # `| (sh)` and `| { bash; }` feed the shell just like `| sh`.
                if any(os.path.basename(c[0]) in rules.SHELLS for c in col.commands[before:]):
                    col.add("deny", "output piped into a shell (| sh, | bash)")
            index += 1


def _visit_command(node: Any, col: _Collector, *, piped_into: bool) -> None:
    argv: list[str] = []
    exact: list[str] | None = []
    end = node.pos[0]
    for part in node.parts:
        gap = col.cmd[end : part.pos[0]]
        if gap.strip(" \t"):
            col.add("ask", f"part of the command was not understood ({gap.strip()[:40]!r})")
        end = max(end, part.pos[1])
        if part.kind == "word":
            words = _visit_word(part, col, position=len(argv), argv0=argv[0] if argv else "")
            if words is None or exact is None:
                exact = None
            else:
                exact.extend(words)
            argv.append(part.word)
        elif part.kind == "assignment":
            col.add("ask", f"variable assignment {part.word.split('=', 1)[0]}=...")
            _visit_nested(part, col)
        elif part.kind == "redirect":
            _visit_redirect(part, col)
        else:
            _visit(part, col)
    if not argv:
        return
    known = exact if exact is not None else argv
    col.commands.append(known)
    _check_program(known, col, piped_into=piped_into, exact=exact is not None)


def _visit_nested(node: Any, col: _Collector) -> None:
    """Visit the commands inside $(...), `...`, <(...) and >(...) of a word."""
    for part in getattr(node, "parts", []) or []:
        if part.kind == "commandsubstitution" or part.kind == "processsubstitution":
            _visit(part.command, col)
        elif part.kind == "parameter" and "IFS" in (getattr(part, "value", "") or ""):
            col.add("ask", "IFS expansion (changes how words split)")


def _visit_word(word: Any, col: _Collector, *, position: int, argv0: str) -> list[str] | None:
    """Check one word; return the exact arguments bash makes of it, or None if not known."""
    raw = col.cmd[word.pos[0] : word.pos[1]]
    info = decode_word(raw)
    for part in getattr(word, "parts", []) or []:
        if part.kind == "processsubstitution":
            info.expansions.append("process substitution <(...) or >(...)")
    for reason in info.expansions:
        col.add("ask", reason)
    if info.unbalanced:
        col.add("ask", "unbalanced quote")
    if info.continuation:
        col.add("ask", "line continuation (backslash-newline)")
    if info.brace:
        col.add("ask", f"brace expansion {raw!r} (bash makes several words of it)")
    _visit_nested(word, col)
    if not _same_as_parser(raw, info, word.word):
        col.add("ask", f"the parser and bash may read the word {raw!r} differently")
        return None
    if position == 0 and info.glob:
        col.add("ask", f"glob or brace expansion in the command name {raw!r}")
        return None
    if position == 0 and info.tilde:
        col.add("ask", f"tilde in the command name {raw!r}")
        return None
    if info.known:
        _check_secret(col, info.value)
        return [info.value]
    if info.glob:
        return _expand_glob(raw, info, col, argv0)
    return None


def _same_as_parser(raw: str, info: WordInfo, parsed: str) -> bool:
    """Whether bashlex's value of the word is the decoder's (before ~ is expanded)."""
    if info.literal:
        return info.value == parsed
    if info.known:  # ~ or ~/...: compare the unexpanded text
        return decode_word(raw, home="~").value == parsed
    if info.simple_glob:
        return raw == parsed
    return True  # not literal: the analysis asks anyway


def _expand_glob(raw: str, info: WordInfo, col: _Collector, argv0: str) -> list[str] | None:
    """The words a simple glob becomes, when the tool and the places make it safe."""
    tool = os.path.basename(argv0)
    if not info.simple_glob or not shell_glob.supported(raw):
        col.add("ask", f"glob {raw!r} (only * and ? in a plain last path component are known)")
        return None
    if tool not in rules.GLOB_SAFE:
        # A file called "-exec" or "--pre=sh" would become an option of the tool.
        col.add("ask", f"glob {raw!r} passed to {tool or 'a command'}")
        return None
    if len(col.cwds) > 1:
        col.add("ask", f"glob {raw!r} after cd (where it expands is not known)")
        return None
    cwd = col.cwds[0]
    for place in col.policy.secret_paths:
        expanded = os.path.expanduser(place)
        if shell_glob.may_reach(raw, cwd, expanded):
            col.add("ask", f"glob {raw!r} could name a secret place ({place})")
            return None
    words = shell_glob.expand(raw, cwd)
    if words is None:
        col.add("ask", f"glob {raw!r}: what it matches here is not certain")
        return None
    for value in words:
        _check_secret(col, value)
    return words


def _visit_redirect(node: Any, col: _Collector) -> None:
    rtype = node.type
    target = node.output
    if rtype in ("<<", "<<-"):
        col.add("ask", "here-document")
        return
    if isinstance(target, int) or target is None:
        if rtype in (">&", "<&"):
            return  # 2>&1, >&2: duplicating a descriptor opens nothing new
        col.add("ask", f"redirection {rtype}")
        return
    raw = col.cmd[target.pos[0] : target.pos[1]]
    _visit_word(target, col, position=1, argv0="")
    info = decode_word(raw)
    path = _expand_known(raw, info)
    writes = rtype not in ("<", "<<<")
    if path is not None and writes and _is_protected(path, col.policy.protected_paths, col):
        col.add("deny", f"redirection {rtype} writes to the protected path {raw}")
        return
    if path in _SAFE_REDIRECT_TARGETS:
        return
    if rtype == "<<<":
        col.add("ask", "here-string <<<")
    elif writes:
        col.add("ask", f"output redirection {rtype} {raw} (writes a file)")
    else:
        col.add("ask", f"input redirection {rtype} {raw}")


def _expand_known(raw: str, info: Any) -> str | None:
    """The path a redirect target names, expanding only ~ and $HOME; None if unknowable."""
    home = os.path.expanduser("~")
    text = raw
    for form in ("${HOME}", "$HOME"):
        if text.startswith(form) or text.startswith(f'"{form}"'):
            text = home + text.split(form, 1)[1].lstrip('"')
            info = decode_word(text)
            break
    return info.value if info.known else None


def _is_protected(path: str, entries: tuple[str, ...], col: _Collector) -> bool:
    """Whether ``path`` (relative to any place the command may run in) is an entry or
    lies inside one."""
    candidates: set[str] = set()
    for cwd in col.cwds if not os.path.isabs(path) else ["/"]:
        full = os.path.normpath(os.path.join(cwd, path))
        candidates |= {full, os.path.realpath(full)}
    bases, anywhere = col.places(entries)
    for cand in candidates:
        place = cand
        while True:  # the candidate and each directory above it
            if place in bases:
                return True
            parent = os.path.dirname(place)
            if parent == place:
                break
            place = parent
        wrapped = f"/{cand.strip('/')}/"
        if any(f"/{entry}/" in wrapped for entry in anywhere):
            return True
    return False


def _check_secret(col: _Collector, value: str) -> None:
    """Ask when a word names a secret place: as a path, an option's ``=value`` or an
    attached short option's value (``-f/path``)."""
    candidates = {value, value.split("=", 1)[-1]}
    if value.startswith("-") and not value.startswith("--") and len(value) > 2:
        candidates.add(value[2:])
    for candidate in candidates:
        if candidate and _is_protected(candidate, col.policy.secret_paths, col):
            col.add("ask", f"reads a secret path ({candidate})")
            return


def _check_program(argv: list[str], col: _Collector, *, piped_into: bool, exact: bool) -> None:
    name = argv[0]
    base = os.path.basename(name)
    if has_non_ascii(name):
        col.add("ask", f"the command name {name!r} has non-ASCII characters (look-alike?)")
    if "/" in name:
        col.add("ask", f"path-qualified command {name} (only bare names are allowlisted)")
    is_shell = base in rules.SHELLS
    wrapped = [os.path.basename(a) for a in argv[1:]] if base in rules.WRAPPERS else []
    if piped_into and (is_shell or any(w in rules.SHELLS for w in wrapped)):
        col.add("deny", "output piped into a shell (| sh, | bash)")
    if is_shell:
        col.add("ask", f"nested shell {base}" + (" -c" if "-c" in argv else ""))
    if base in rules.WRAPPERS:
        col.add("ask", f"{base} runs or changes another command (wrapper or builtin)")
    if base in rules.INTERPRETERS or base.startswith(("python", "perl", "ruby", "php")):
        flags = [a for a in argv[1:] if a in rules.ONE_LINER_FLAGS]
        what = f"interpreter one-liner {base} {flags[0]}" if flags else f"interpreter {base}"
        col.add("ask", what)
    if base in rules.NETWORK or (base == "git" and _git_network(argv)):
        col.add("ask", f"network tool {base}", network=True)
    for target in rules.write_targets(argv):
        if _is_protected(os.path.expanduser(target), col.policy.protected_paths, col):
            col.add("deny", f"{base} writes to the protected path {target}")
    check = rules.ARG_CHECKS.get(base)
    if check is not None:
        for finding in check(argv):
            col.add(finding.level, finding.reason, network=finding.network)
    if name not in col.policy.allowlist:
        col.add("ask", f"{name} is not on the allowlist")
        return
    if not exact:
        return  # a word is not known: already asked, options cannot be read
    for reason in check_options(argv) or []:
        col.add("ask", reason)
    if name == "cd":
        _follow_cd(argv, col)
    if name == "git":
        # Said even when the line asks anyway: the person should know before a yes.
        for cwd in col.cwds:
            for reason in repository_risks(cwd):
                col.add("ask", reason)


def _git_network(argv: list[str]) -> bool:
    words = [a for a in argv[1:] if not a.startswith("-")]
    return bool(words) and words[0] in GIT_NETWORK


def _follow_cd(argv: list[str], col: _Collector) -> None:
    """Remember where ``cd`` may take the commands after it (subshell or not)."""
    operands = [a for a in argv[1:] if a != "--"]
    target = operands[0] if operands else os.path.expanduser("~")
    for cwd in list(col.cwds):
        place = os.path.normpath(os.path.join(cwd, target))
        if place not in col.cwds:
            col.cwds.append(place)
