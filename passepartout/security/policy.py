"""The policy as configuration: allow, ask and deny rules per tool, per parsed argument
and per directory scope.  Deny beats ask beats allow.

Rules live in ``<config_dir>/policy.toml`` (and scoped grants in the approvals file)::

    [[rule]]
    decision = "allow"          # allow | ask | deny
    tool = "shell"              # glob on the tool's name (default "*")
    command = "git status"      # shell: the parsed argv starts with these words (globs)
    exact = false               # true: the argv is these words, nothing after them
    scope = "~/proj"            # the file, or the shell's working directory, is inside
    [[rule]]
    decision = "deny"
    tool = "write-file"
    path = "*.pem"              # glob on the resolved path (or on its file name)
    [[rule]]
    decision = "ask"
    args = { url = "http://*" } # glob on an argument's value
    [[rule]]
    decision = "allow"          # a secret used in exactly this command, without asking
    tool = "shell"
    secret = "GITHUB_TOKEN"     # the call carries {{secret:GITHUB_TOKEN}}
    command = "curl -H *{{secret:GITHUB_TOKEN}}* https://api.github.com/*"
    host = "api.github.com"     # every URL of the call is on this host (a glob)
    [[rule]]
    decision = "allow"          # what an "always" answer keeps: exactly what was shown
    tool = "org-set-property"
    path = "/home/me/notes/projects.org"
    heading = "Projects/Alpha"  # the call's heading, exactly as written
    property = "STATUS"         # the property it sets (org reads names case-blind)
    [[rule]]
    decision = "allow"
    tool = "write-file"
    path = "/home/me/notes/todo.txt"
    content = "sha256:..."      # the SHA-256 of the whole text the call writes

    [shell]
    allow = ["make"]            # more programs that run without asking
    [files]
    protect = ["~/notes/ledger"]  # more places no tool writes
    secret = ["~/private"]      # more places no tool reads
    [dispatcher]
    ask = ["send-mail"]         # more tools that always need a person's yes

A rule matches parsed arguments: a shell rule sees each simple command's argv as the
shell would run it, so ``git status; rm -rf ~`` is two commands and an allow rule for
``git status`` does not cover it.  An allow rule lifts an "ask" of the built-in checks;
it never lifts one of their refusals.

A call that carries ``{{secret:NAME}}`` asks unless an allow rule naming that secret
(``secret = "NAME"``) matches it (:meth:`Policy.secret_grant`).  For a shell line the
rule needs a ``command``; the line must be plain, and each command that carries the
placeholder must start with the rule's words, carry the placeholder only within them,
add no option after them, and name no URL or host-like word (``evil.example``) off the
hosts the rule's command names (and off ``host``, when given).  For another tool the
rule matches as usual (``host``: every URL in its arguments).  A rule naming a secret
matches only calls that use it, so it grants nothing else.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import re
import tomllib
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from passepartout.errors import ConfigError
from passepartout.security.shell.bashparse import parse
from passepartout.security.shell.words import decode_word

if TYPE_CHECKING:
    from passepartout.security.policy.accepted import PolicyTrust

log = logging.getLogger(__name__)

Decision = Literal["allow", "ask", "deny"]
RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
_RULE_KEYS = frozenset(
    {"decision", "tool", "command", "exact", "path", "scope", "args", "why", "secret", "host",
     "content", "heading", "property"}
)
_CONTENT = re.compile(r"sha256:[0-9a-f]{64}")
_SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+")
_BARE_HOST = re.compile(r"(?i)((?:[a-z0-9_-]+\.)+[a-z0-9_-]+)(?::[^/\s]*)?(?:/\S*)?$")


@dataclass(frozen=True)
class Rule:
    """One rule; every condition it names must hold for it to match."""

    decision: Decision
    tool: str = "*"
    command: tuple[str, ...] = ()
    path: str | None = None
    scope: Path | None = None
    args: tuple[tuple[str, str], ...] = ()
    origin: str = ""
    secret: str | None = None  # the rule matches only calls that use this secret
    host: str | None = None  # every URL of the call is on a host matching this glob
    exact: bool = False  # the argv is ``command`` and no more words (an "always" answer)
    content: str | None = None  # ``sha256:HEX`` of the call's ``content`` argument
    heading: str | None = None  # the call's ``heading`` argument, exactly
    prop: str | None = None  # the call's ``key`` argument (a property name), case-blind

    def describe(self) -> str:
        parts = [f"{self.decision} {self.tool}"]
        if self.secret:
            parts.append(f"with {{{{secret:{self.secret}}}}}")
        if self.command:
            parts.append(f"`{' '.join(self.command)}`{' exactly' if self.exact else ''}")
        if self.host:
            parts.append(f"on host {self.host}")
        if self.path:
            parts.append(f"path {self.path}")
        if self.content:
            parts.append(f"with content {self.content[:19]}…")
        if self.heading is not None:
            parts.append(f"heading {self.heading!r}")
        if self.prop:
            parts.append(f"property {self.prop}")
        if self.scope:
            parts.append(f"in {self.scope}")
        parts += [f"{k}={v}" for k, v in self.args]
        text = " ".join(parts)
        return f"{text} ({self.origin})" if self.origin else text


@dataclass(frozen=True)
class Subject:
    """An action as the rules see it: parsed, with its paths resolved."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    commands: tuple[tuple[str, ...], ...] = ()
    simple: bool = True
    paths: tuple[Path, ...] = ()
    cwd: Path | None = None
    secrets: tuple[str, ...] = ()  # the names of the {{secret:NAME}} the call carries


@dataclass(frozen=True)
class Match:
    decision: Decision
    rules: tuple[Rule, ...]

    def reason(self) -> str:
        return "; ".join(f"rule {r.describe()}" for r in self.rules)


@dataclass
class Settings:
    """The non-rule parts of the policy file."""

    shell_allow: tuple[str, ...] = ()
    protect: tuple[str, ...] = ()
    secret: tuple[str, ...] = ()
    always_ask: tuple[str, ...] = ()


@dataclass
class Policy:
    rules: list[Rule] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)

    def decide(self, subject: Subject) -> Match | None:
        """The strongest decision of the rules that match ``subject`` (``None``: no rule)."""
        for decision in ("deny", "ask"):
            hits = tuple(
                r for r in self.rules if r.decision == decision and _matches(r, subject)
            )
            if hits:
                return Match(hits[0].decision, hits)
        allows = [r for r in self.rules if r.decision == "allow"]
        if subject.commands:
            # Every command of a shell line needs its own allow; only plain commands.
            if not subject.simple:
                return None
            used: list[Rule] = []
            for argv in subject.commands:
                hit = next((r for r in allows if _matches(r, subject, only=argv)), None)
                if hit is None:
                    return None
                used.append(hit)
            return Match("allow", tuple(dict.fromkeys(used)))
        hits = tuple(r for r in allows if _matches(r, subject))
        return Match("allow", hits) if hits else None

    def secret_grant(self, subject: Subject, name: str) -> Rule | None:
        """The allow rule that lets ``subject`` use the secret ``name`` without asking.

        For a shell line: a plain line, and each command that carries the placeholder
        matches the rule (its prefix, its host); for another tool: the rule matches.
        """
        grants = [r for r in self.rules if r.decision == "allow" and r.secret == name]
        if not grants or name not in subject.secrets:
            return None
        if not subject.commands:
            return next((r for r in grants if _matches(r, subject)), None)
        if not subject.simple:
            return None
        placeholder = f"{{{{secret:{name}}}}}"
        carriers = [argv for argv in subject.commands if any(placeholder in w for w in argv)]
        if not carriers:  # the placeholder is not in a plain word the rules can see
            return None
        for rule in grants:
            if rule.command and all(
                _only_as_granted(rule, argv, placeholder) and _matches(rule, subject, only=argv)
                for argv in carriers
            ):
                return rule
        return None


def _only_as_granted(rule: Rule, argv: tuple[str, ...], placeholder: str) -> bool:
    """Past the granted words, no placeholder and no option (``-k``, ``--resolve``)."""
    rest = argv[len(rule.command):]
    return not any(placeholder in w or w.startswith("-") for w in rest)


def _matches(rule: Rule, subject: Subject, *, only: tuple[str, ...] | None = None) -> bool:
    if not fnmatch.fnmatchcase(subject.tool, rule.tool):
        return False
    if rule.secret is not None and rule.secret not in subject.secrets:
        return False
    pinned = rule.host is not None or (rule.secret is not None and bool(rule.command))
    if pinned and not _hosts_match(rule, subject, only):
        return False
    for name, pattern in rule.args:
        if name not in subject.args or not fnmatch.fnmatchcase(str(subject.args[name]), pattern):
            return False
    if rule.command:
        argvs = [only] if only is not None else list(subject.commands)
        if not any(_argv_matches(rule.command, argv, exact=rule.exact) for argv in argvs):
            return False
    if rule.path is not None and not (
        subject.paths and all(_path_matches(rule.path, p) for p in subject.paths)
    ):
        return False
    if not _pins_match(rule, subject):
        return False
    if rule.scope is not None:
        places = list(subject.paths) or ([subject.cwd] if subject.cwd else [])
        if not places or not all(p == rule.scope or rule.scope in p.parents for p in places):
            return False
    return True


def _pins_match(rule: Rule, subject: Subject) -> bool:
    """The arguments a rule pins (an "always" answer's: what the person was shown)."""
    if rule.content is not None:
        content = subject.args.get("content")
        if not isinstance(content, str) or content_digest(content) != rule.content:
            return False
    if rule.heading is not None and subject.args.get("heading") != rule.heading:
        return False
    key = subject.args.get("key")
    return rule.prop is None or (isinstance(key, str) and key.upper() == rule.prop.upper())


def content_digest(text: str) -> str:
    """What a rule's ``content`` names: ``sha256:`` and the hex digest of ``text``."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _hosts_match(rule: Rule, subject: Subject, only: tuple[str, ...] | None) -> bool:
    """The URLs of the call (of ``only``, one command of a shell line) are on the rule's
    ``host``; and for a rule naming a secret, on the hosts its command names (an extra
    URL appended after a granted prefix would carry the secret elsewhere)."""
    if only is not None or subject.commands:
        argvs = [only] if only is not None else list(subject.commands)
        hosts = [h for argv in argvs for word in argv[1:] for h in _hosts_in(word, bare=True)]
    else:
        hosts = [h for v in subject.args.values() for h in _hosts_in(str(v), bare=False)]
    if rule.host is not None:
        pattern = rule.host.lower()
        if not hosts or not all(fnmatch.fnmatchcase(h, pattern) for h in hosts):
            return False
    pinned = {h for word in rule.command for h in _hosts_in(word, bare=False)}
    pinned = {h for h in pinned if h and not any(c in h for c in "*?[")}
    return not pinned or all(h in pinned for h in hosts)


def _hosts_in(word: str, *, bare: bool) -> list[str]:
    """The hosts of the URLs in ``word``; with ``bare``, also a word that is itself a
    host (``evil.example:8080/x``: curl and wget take it for a URL)."""
    hosts = []
    for url in _URL.findall(word):
        try:
            hosts.append((urllib.parse.urlsplit(url).hostname or "").lower())
        except ValueError:
            hosts.append("")  # an unreadable URL matches no host
    if not hosts and bare and (m := _BARE_HOST.match(word)) is not None:
        hosts.append(m.group(1).lower())
    return hosts


def _argv_matches(pattern: tuple[str, ...], argv: tuple[str, ...], *, exact: bool = False
                  ) -> bool:
    if len(argv) < len(pattern) or (exact and len(argv) != len(pattern)):
        return False
    program = os.path.basename(argv[0]) if pattern and "/" not in pattern[0] else argv[0]
    words = (program, *argv[1:])
    return all(fnmatch.fnmatchcase(w, p) for w, p in zip(words, pattern, strict=False))


def _path_matches(pattern: str, path: Path) -> bool:
    pattern = os.path.expanduser(pattern)
    if "/" in pattern:
        return fnmatch.fnmatchcase(str(path), pattern)
    return fnmatch.fnmatchcase(path.name, pattern)


# -- shell lines as the rules see them -------------------------------------------------

_PLAIN_OPERATORS = frozenset({"&&", "||", ";", "\n", "|"})


def plain_commands(cmd: str) -> tuple[tuple[tuple[str, ...], ...], bool]:
    """The argv of each simple command of ``cmd``, and whether the line is plain: literal
    words joined by ``&&``, ``||``, ``;`` or ``|``; no redirect, substitution, expansion
    (brace, glob and tilde included: a word is plain only when the shell analysis's
    decoder proves it literal, and bashlex reads it the same), assignment, background
    job or compound command."""
    try:
        trees = parse(cmd)
    except Exception:  # bashlex raises many types, all mean "not understood"
        return (), False
    commands: list[tuple[str, ...]] = []
    plain = True
    stack: list[Any] = list(trees)
    while stack:
        node = stack.pop(0)
        kind = getattr(node, "kind", "")
        if kind in ("list", "pipeline"):
            stack[:0] = list(node.parts)
        elif kind == "operator":
            plain = plain and node.op in _PLAIN_OPERATORS
        elif kind == "pipe":
            plain = plain and node.pipe == "|"
        elif kind == "command":
            argv: list[str] = []
            for part in node.parts:
                if getattr(part, "kind", "") != "word" or getattr(part, "parts", None):
                    plain = False
                    continue
                info = decode_word(cmd[part.pos[0] : part.pos[1]])
                plain = plain and info.literal and info.value == part.word
                argv.append(part.word)
            if argv:
                commands.append(tuple(argv))
        else:
            plain = False
    return tuple(commands), plain and bool(commands)


# -- loading ------------------------------------------------------------------------------


def rule_from_mapping(entry: Mapping[str, Any], origin: str) -> Rule:
    """A :class:`Rule` of a TOML table or an org grant's properties; bad input is a
    :class:`ConfigError` naming where it came from."""
    unknown = set(entry) - _RULE_KEYS
    if unknown:
        raise ConfigError(f"{origin}: unknown rule keys {sorted(unknown)}", origin=origin)
    decision = str(entry.get("decision", "")).lower()
    if decision not in RANK:
        raise ConfigError(
            f"{origin}: decision must be allow, ask or deny, not {entry.get('decision')!r}",
            origin=origin,
        )
    command = entry.get("command", ())
    if isinstance(command, str):
        import shlex

        try:
            command = shlex.split(command)
        except ValueError as err:
            raise ConfigError(f"{origin}: bad command: {err}", origin=origin) from None
    args = entry.get("args", {})
    if not isinstance(args, Mapping) or not isinstance(command, list | tuple):
        raise ConfigError(f"{origin}: args must be a table and command a string", origin=origin)
    scope = entry.get("scope")
    secret = str(entry["secret"]).strip() if entry.get("secret") else None
    if secret is not None and not _SECRET_NAME.fullmatch(secret):
        raise ConfigError(f"{origin}: secret must be a variable name, not {secret!r}",
                          origin=origin)
    if secret is not None and decision == "allow" and not (command or args or entry.get("host")):
        raise ConfigError(
            f"{origin}: a rule that allows a secret needs a command, a host or args to "
            "say where it may be used", origin=origin)
    exact = _flag(entry.get("exact", False), "exact", origin)
    if exact and not command:
        raise ConfigError(f"{origin}: exact needs a command", origin=origin)
    content = str(entry["content"]).strip().lower() if entry.get("content") else None
    if content is not None and not _CONTENT.fullmatch(content):
        raise ConfigError(f"{origin}: content must be sha256: and 64 hex digits, not "
                          f"{entry['content']!r}", origin=origin)
    prop = str(entry["property"]).strip() if entry.get("property") else None
    return Rule(
        decision=decision,  # type: ignore[arg-type]
        tool=str(entry.get("tool", "*")),
        command=tuple(str(w) for w in command),
        path=str(entry["path"]) if entry.get("path") else None,
        scope=Path(os.path.realpath(os.path.expanduser(str(scope)))) if scope else None,
        args=tuple(sorted((str(k), str(v)) for k, v in args.items())),
        origin=origin,
        secret=secret,
        host=str(entry["host"]).strip().lower() if entry.get("host") else None,
        exact=exact,
        content=content,
        heading=str(entry["heading"]) if entry.get("heading") else None,
        prop=prop,
    )


def _flag(value: Any, key: str, origin: str) -> bool:
    """A TOML boolean, or an org property's ``true``/``false``."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(f"{origin}: {key} must be true or false, not {value!r}", origin=origin)


def _strings(table: Mapping[str, Any], key: str, origin: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{origin}: {key} must be a list of strings", origin=origin)
    return tuple(value)


def load_policy(
    path: Path, extra_rules: Iterable[Rule] = (), *, trust: PolicyTrust | None = None
) -> Policy:
    """The policy in ``path`` (a missing file is the built-in defaults), after
    ``extra_rules`` (the sealed grants).

    With ``trust`` the file counts only as the person accepted it (see
    :mod:`passepartout.security.policy.accepted`): a changed file leaves the last accepted
    policy in force, with the changed file's stricter parts added, and is reported.
    """
    current = _read(path)
    if trust is None:
        policy = parse_policy(current, path)
    elif trust.trust.first_start:
        policy = parse_policy(current, path)  # a broken file fails here, as it always did
        trust.accept(current, how="first start")
        trust.report_first_start(current)
    else:
        accepted = trust.accepted()
        if accepted.valid and accepted.text == current:
            policy = parse_policy(current, path)
        else:
            policy = parse_policy(accepted.text, path) if accepted.valid else Policy()
            try:
                policy = with_stricter(policy, parse_policy(current, path))
                trust.report_pending(current)
            except ConfigError as err:
                trust.report_pending(current, err.message)
    policy.rules[:0] = list(extra_rules)
    return policy


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{path}: {err}", origin=str(path)) from None
    except OSError as err:
        raise ConfigError(f"{path}: {err.strerror}", origin=str(path)) from None


def parse_policy(text: str | None, path: Path) -> Policy:
    """The rules and settings of a policy file's text (None: the built-in defaults)."""
    if text is None:
        return Policy()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: {err}", origin=str(path)) from None
    entries = data.get("rule", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{path}: [[rule]] must be an array of tables", origin=str(path))
    rules: list[Rule] = []
    for i, entry in enumerate(entries, 1):
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{path}: rule {i} is not a table", origin=str(path))
        rules.append(rule_from_mapping(entry, f"{path.name} rule {i}"))
    name = path.name
    settings = Settings(
        shell_allow=_strings(data.get("shell", {}), "allow", f"{name} [shell]"),
        protect=_strings(data.get("files", {}), "protect", f"{name} [files]"),
        secret=_strings(data.get("files", {}), "secret", f"{name} [files]"),
        always_ask=_strings(data.get("dispatcher", {}), "ask", f"{name} [dispatcher]"),
    )
    return Policy(rules, settings)


# Settings that only take permissions away: an unaccepted file's values apply at once.
_STRICTER_SETTINGS = ("protect", "secret", "always_ask")


def with_stricter(accepted: Policy, changed: Policy) -> Policy:
    """``accepted`` plus what in ``changed`` can only make it stricter: its deny and
    ask rules and the places and tools it adds to protect, keep secret or always ask
    about.  Its allow rules and any other setting wait for the person's acceptance."""
    rules = [*accepted.rules, *(r for r in changed.rules if r.decision != "allow")]
    settings = replace(accepted.settings, **{
        name: tuple(dict.fromkeys([*getattr(accepted.settings, name),
                                   *getattr(changed.settings, name)]))
        for name in _STRICTER_SETTINGS
    })
    return Policy(rules, settings)
