"""The security layer of one agent: the two mandatory gates' decisions, the tools that
touch the machine, and the wiring (audit hook, approver, masking) into the loop.

``skills/policy.py`` and ``skills/dispatcher.py`` are the gates' skills; they call
:meth:`Security.policy_verdict` and :meth:`Security.dispatcher_verdict`.  The policy
gate judges what an action touches (paths, the parsed shell line, the rules); the
dispatcher gate judges its impact (code evaluation and writes need a person's yes
unless a rule or grant allows them).

What the policy gate itself decides about paths and secrets: the agent's config and
state directories (wherever they are configured) and the credential places are
refused to the file tools; a path outside the workspace and the memex asks; a call
that carries ``{{secret:NAME}}`` asks, showing the placeholder (never the value),
unless a rule or grant names that secret for this very command (``secret = "NAME"``,
see :mod:`passepartout.security.policy`); a name the vault does not hold is refused.
"""

from __future__ import annotations

import collections
import difflib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from passepartout import workspace
from passepartout.loop.actions import Action, Verdict
from passepartout.loop.gates import GateResult
from passepartout.security.approvals import ApprovalBook
from passepartout.security.approvals.flightplan import Clearances
from passepartout.security.audit import AuditLog
from passepartout.security.files import FileToolError, read_text
from passepartout.security.files.paths import PathRules, denial
from passepartout.security.policy import Policy, Subject, load_policy, plain_commands
from passepartout.security.privacy import DEFAULT_TAG, redact_file_text
from passepartout.security.shell import DEFAULT_ALLOWLIST, ShellPolicy, analyze
from passepartout.security.shell.runs_later import code_reason
from passepartout.security.vault import Vault, secret_names
from passepartout.signals import Signal

log = logging.getLogger(__name__)

WRITE_TOOLS = frozenset(
    {"write-file", "edit-file", "append-file", "delete-file", "move-file", "make-directory",
     # the org editing tools (skills/orgtools.py): each writes the org files it names
     "org-add-heading", "org-set-property", "org-set-todo", "org-add-note", "org-refile",
     "org-archive"}
)
ALWAYS_ASK = frozenset({"eval", "emacs-eval", "write-file"})
DIFF_READ_BYTES = 2_000_000  # the current file a write-file question diffs against
DIFF_MAX_LINES = 400  # the lines of that diff shown in the question
PATH_ARGS = ("path", "file", "dir", "directory", "target", "dest", "destination", "src", "source")


@dataclass
class Places:
    """Where the agent's own files are (all protected), and where it works."""

    home: Path
    config_dir: Path
    memex_dir: Path
    skill_dirs: tuple[Path, ...]
    default_workspace: Path  # of a turn that names none (passepartout.workspace)
    approvals_file: Path

    @property
    def workspace(self) -> Path:
        """Where the running turn works: the workspace it named, else the default."""
        return workspace.current() or self.default_workspace

    @property
    def policy_file(self) -> Path:
        return self.config_dir / "policy.toml"

    @property
    def state_dir(self) -> Path:
        """The agent's state (``PASSEPARTOUT_HOME``): memory, sessions, ledger, audit, keys."""
        return self.home

    def within_reach(self, path: Path) -> bool:
        """Whether the real path ``path`` is inside the workspace or the memex."""
        return any(_inside(path, Path(os.path.realpath(root)))
                   for root in (self.workspace, self.memex_dir))


@dataclass
class Security:
    """Everything the gates and the tools share."""

    places: Places
    vault: Vault
    audit: AuditLog
    book: ApprovalBook
    clearances: Clearances = field(default_factory=Clearances)
    tool_lookup: Callable[[str], Any] = lambda name: None
    private_tag: str = DEFAULT_TAG
    _policy: Policy | None = field(default=None, init=False, repr=False)
    _stamp: tuple[float, ...] | None = field(default=None, init=False, repr=False)
    _derived: dict[tuple[str, Path], Any] = field(default_factory=dict, init=False, repr=False)
    _subjects: collections.OrderedDict[tuple[str, Path], tuple[Subject, Verdict]] = field(
        default_factory=collections.OrderedDict, init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    # -- configuration, reloaded when its files change ----------------------------------

    def policy(self) -> Policy:
        """The rules of ``policy.toml`` and the grants of the approvals file.

        A broken policy file raises :class:`~passepartout.errors.ConfigError`: the gate
        then fails, and a failing gate denies.
        """
        stamp = (_mtime(self.places.policy_file), _mtime(self.places.approvals_file),
                 _mtime(self.book.trust.policy_record))  # accepted from the terminal
        with self._lock:
            if self._policy is None or stamp != self._stamp:
                self._policy = load_policy(self.places.policy_file, self.book.grant_rules(),
                                           trust=self.book.policy_trust)
                self._stamp = stamp
                self._subjects.clear()
                self._derived.clear()
            return self._policy

    def protected_places(self) -> list[Path]:
        p = self.places
        ledger = self.book.ledger_path
        return [p.config_dir, p.home, *p.skill_dirs, p.approvals_file, ledger]

    def path_rules(self) -> PathRules:
        """The file rules (built again only when the policy files change)."""
        settings = self.policy().settings
        key = ("paths", self.places.workspace)
        cached = self._derived.get(key)
        if isinstance(cached, PathRules):
            return cached
        self._derived[key] = rules = PathRules.build(
            protected=[*self.protected_places(), *settings.protect],
            secret=[self.places.config_dir, self.places.state_dir, *settings.secret],
            workspace=self.places.workspace,
        )
        return rules

    def shell_policy(self) -> ShellPolicy:
        settings = self.policy().settings
        key = ("shell", self.places.workspace)
        cached = self._derived.get(key)
        if isinstance(cached, ShellPolicy):
            return cached
        base = ShellPolicy()
        own = tuple(str(p) for p in self.protected_places())
        self._derived[key] = policy = replace(
            base,
            allowlist=DEFAULT_ALLOWLIST | frozenset(settings.shell_allow),
            protected_paths=(*base.protected_paths, *own, *settings.protect),
            secret_paths=(*base.secret_paths, str(self.places.config_dir),
                          str(self.places.state_dir), *settings.secret),
            workspace=self.places.workspace,
        )
        return policy

    # -- what an action touches -------------------------------------------------------------

    def examine(self, action: Action) -> tuple[Subject, Verdict]:
        """The action parsed for the rules, and the built-in checks' verdict on it."""
        policy = self.policy()
        key = (action.digest(), self.places.workspace)  # relative paths depend on it
        with self._lock:
            cached = self._subjects.get(key)
        if cached is not None:
            return cached
        found = self._examine(action, policy)
        with self._lock:
            self._subjects[key] = found
            while len(self._subjects) > 128:
                self._subjects.popitem(last=False)
        return found

    def _examine(self, action: Action, policy: Policy) -> tuple[Subject, Verdict]:
        name, args = action.name, action.args
        tool = self.tool_lookup(name)
        declared = set((getattr(tool, "parameters", None) or {}).get("properties", {}))
        extra = sorted(set(args) - declared) if tool is not None else []
        if extra:
            return Subject(name, args), Verdict.deny(f"unexpected arguments {extra} for {name}")
        used = secret_names(args)
        unknown = [n for n in used if not self.vault.knows(n)]
        if unknown:
            held = ", ".join(self.vault.names()) or "none"
            return Subject(name, args), Verdict.deny(
                f"there is no secret named {unknown[0]!r} in the vault (declared in the "
                f"config .env: {held})"
            )
        if name == "shell":
            cmd = args.get("cmd")
            if not isinstance(cmd, str):
                return Subject(name, args), Verdict.deny("shell needs a command string")
            verdict = analyze(cmd, self.shell_policy())
            plain, simple = plain_commands(cmd)
            commands = tuple(dict.fromkeys([*plain, *(tuple(c) for c in verdict.commands)]))
            subject = Subject(name, args, commands, simple, cwd=self.places.workspace,
                              secrets=used)
            why = "; ".join(verdict.reasons) or "plain allowlisted commands"
            # Every question and grant about a command says where it runs.
            return subject, Verdict(verdict.decision,
                                    f"{why} (workspace {self.places.workspace})")
        rules = self.path_rules()
        paths: list[Path] = []
        for key in PATH_ARGS:
            raw = args.get(key)
            if raw is None:
                continue
            resolved, reason = denial(str(raw), rules, writing=name in WRITE_TOOLS)
            if reason is not None or resolved is None:
                return Subject(name, args), Verdict.deny(reason or "an unusable path")
            paths.append(resolved.path)
        subject = Subject(name, args, paths=tuple(paths), cwd=self.places.workspace,
                          secrets=used)
        outside = [path for path in paths if not self.places.within_reach(path)]
        if outside:
            return subject, Verdict.ask(
                f"{name} reaches {outside[0]}, outside the workspace and the memex"
            )
        return subject, Verdict.allow("no built-in check objects")

    def runs_later(self, action: Action) -> str | None:
        """Why ``action`` writes something that runs later (``None``: it does not); see
        :mod:`passepartout.security.shell.runs_later`."""
        if action.target != "tool" or action.name not in (*WRITE_TOOLS, "org-capture",
                                                            "shell"):
            return None
        # The real places, and each as spelled: a write replaces a symlink at the
        # target, so ``.envrc`` pointing elsewhere becomes an ``.envrc`` itself.
        spelled = [Path(os.path.abspath(os.path.join(self.places.workspace,
                                                     os.path.expanduser(str(action.args[k])))))
                   for k in PATH_ARGS if isinstance(action.args.get(k), str)]
        paths = [*self.examine(action)[0].paths, *spelled]
        return code_reason(action.name, action.args, paths)

    # -- the two mandatory gates ------------------------------------------------------------

    def policy_verdict(self, action: Action, signal: Signal) -> Verdict:
        if action.target in ("chat", "system"):
            return Verdict.allow("a reply")
        if action.target != "tool":
            return Verdict.ask(f"an action for {action.target!r}")
        if self.tool_lookup(action.name) is None:
            return Verdict.deny(f"there is no tool named {action.name!r}")
        subject, built_in = self.examine(action)
        if built_in.decision == "deny":
            return built_in
        policy = self.policy()
        match = policy.decide(subject)
        if match is None:
            verdict = built_in
        elif match.decision == "allow" and built_in.decision == "ask":
            verdict = Verdict.allow(f"{match.reason()} (instead of asking: {built_in.reason})")
        else:
            verdict = Verdict(match.decision, match.reason())
        # A command the shell analysis proved harmless (it writes nothing) is no write.
        proved = action.name == "shell" and built_in.decision == "allow"
        if verdict.decision != "deny" and not proved and (
                code := self.runs_later(action)) is not None:
            # Asked every time, whatever a rule or grant allows: what it writes runs later.
            also = f"; {verdict.reason}" if verdict.decision == "ask" else ""
            verdict = Verdict.ask(f"asked as code: {code}{also}")
        if verdict.decision == "deny" or not subject.secrets:
            return verdict
        # A secret is used with the person's yes, or a grant of it for this very command.
        ungranted = [n for n in subject.secrets if policy.secret_grant(subject, n) is None]
        if not ungranted:
            return verdict
        shown = ", ".join(f"{{{{secret:{n}}}}}" for n in ungranted)
        why = f"{action.name} uses {shown}; no grant covers it for this call"
        return Verdict.ask(f"{why}; {verdict.reason}" if verdict.decision == "ask" else why)

    def dispatcher_verdict(self, action: Action, signal: Signal) -> Verdict:
        if action.target != "tool":
            return Verdict.allow("not a tool call")
        tool = self.tool_lookup(action.name)
        high = action.name in ALWAYS_ASK or action.name in self.policy().settings.always_ask
        if tool is not None and getattr(tool, "impact", "low") == "high":
            high = True
        if not high:
            return Verdict.allow("low impact")
        match = self.policy().decide(self.examine(action)[0])
        if match is not None and match.decision == "allow":
            return Verdict.allow(f"high impact, granted by {match.reason()}")
        why = f"{action.name} is high-impact and needs a person's yes"
        if action.name == "write-file":
            why += "\n" + self.write_diff(action)
        return Verdict.ask(why)

    def write_diff(self, action: Action) -> str:
        """What a ``write-file`` would change, said to the person who is asked: a unified
        diff against the file as it is, or that it creates the file."""
        path, content = action.args.get("path"), action.args.get("content")
        if not isinstance(path, str) or not isinstance(content, str):
            return "changes: (no path or content given)"
        try:
            old = read_text(path, self.path_rules(), max_bytes=DIFF_READ_BYTES)
        except FileToolError as err:
            if "no such file" in err.message:
                return f"creates {path} ({len(content)} characters, a new file)"
            return f"changes: (the current file cannot be read: {err.message})"
        old = redact_file_text(path, old, self.private_tag)
        if old == content:
            return f"changes: none ({path} already holds this text)"
        lines = list(difflib.unified_diff(old.splitlines(), content.splitlines(),
                                          f"{path} (now)", f"{path} (proposed)", lineterm=""))
        if len(lines) > DIFF_MAX_LINES:
            lines = [*lines[:DIFF_MAX_LINES], f"[... {len(lines) - DIFF_MAX_LINES} more lines]"]
        return "changes:\n" + "\n".join(lines)

    # -- hooks into the loop ------------------------------------------------------------------

    def on_verdict(self, action: Action, signal: Signal, result: GateResult) -> None:
        """The gate pipeline's audit hook: write the verdict; an allow clears the action
        once for a tool that checks again (the shell tool)."""
        self.audit.record(action, signal, result)
        if result.decision == "allow":
            self.clearances.grant(action.digest())


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime_ns / 1e9
    except FileNotFoundError:
        return 0.0
