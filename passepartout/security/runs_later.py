"""Writes that become code or automation later: asked as code, never granted always.

A file the agent writes can run later, outside every gate and sandbox: because of
*where* it goes (``.envrc`` when direnv enters the directory, ``.dir-locals.el`` when
Emacs visits a file below it, a ``.pth`` when Python starts, an init file, a unit, an
MCP server's command) or because of *what* it says (a ``:CRON:`` or ``:HOOK:`` drawer
becomes a job; a src block, ``#+CALL``, an agenda sexp or an ``elisp:`` link runs when
org evaluates or displays it; file-local ``eval:`` runs when Emacs visits the file; a
shebang makes an executable).  The policy gate asks such a write of the person every
time, saying what it becomes ("this file runs later: ..."), whatever a rule or grant
allows; an "always" answer to it is kept once only
(:mod:`passepartout.security.approvals.standing`).

The places that run code as soon as they are written or at the next login (shell
start-up files, git hooks and config, the agent's own files) are not asked at all:
they are refused (:mod:`passepartout.security.files.paths`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Files run by a program that reads them by name where they are.
_NAMED: dict[str, str] = {
    ".envrc": "direnv runs it in your shell when you enter its directory",
    ".dir-locals.el": "Emacs applies (and may evaluate) it when it visits a file below it",
    ".dir-locals-2.el": "Emacs applies (and may evaluate) it when it visits a file below it",
    "sitecustomize.py": "Python imports it at every start",
    "usercustomize.py": "Python imports it at every start",
    ".pythonrc": "an interactive Python runs it at start",
    ".pythonrc.py": "an interactive Python runs it at start",
    ".emacs": "Emacs runs it at start",
    "init.el": "Emacs runs it at start",
    "early-init.el": "Emacs runs it at start",
    "default.el": "Emacs runs it at start",
    "site-start.el": "Emacs runs it at start",
    ".vimrc": "vim runs it at start", ".gvimrc": "vim runs it at start",
    ".exrc": "vi runs it at start", ".nvimrc": "neovim runs it at start",
    ".gdbinit": "gdb runs it at start", ".lldbinit": "lldb runs it at start",
    ".psqlrc": "psql runs it at start",
    ".pre-commit-config.yaml": "pre-commit runs the commands it names at each commit",
    ".mcp.json": "an MCP client starts the commands it names",
    "mcp.json": "an MCP client starts the commands it names",
    "claude_desktop_config.json": "an MCP client starts the commands it names",
    "crontab": "cron runs the commands it names",
}
# Files run by their suffix, wherever they are.
_SUFFIXES: dict[str, str] = {
    ".pth": "Python runs its import lines at every start when it lies in a site-packages",
    ".desktop": "a desktop session runs its Exec= line (autostart, a launcher)",
    ".service": "systemd runs its commands", ".timer": "systemd starts a unit on its schedule",
}
# Org (and Emacs) constructs in text: what each becomes.
_CONTENT: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?im)^[ \t]*:(CRON|HOOK):"), "a :{0}: drawer becomes a job"),
    (re.compile(r"(?i)#\+begin_src\b"), "a src block runs when org evaluates it (babel)"),
    (re.compile(r"(?im)^[ \t]*#\+call:"), "a #+CALL line runs a named block"),
    (re.compile(r"(?i)\b(?:src|call)_[A-Za-z0-9_-]+[\[({]"), "inline babel code runs"),
    (re.compile(r"%%\("), "an agenda sexp is evaluated when org builds the agenda"),
    (re.compile(r"(?i)\[\[(?:elisp|shell|file\+sys):"),
     "a link that runs code when followed"),
    (re.compile(r"(?im)^[ \t]*#\+(?:setupfile|include):"),
     "#+SETUPFILE or #+INCLUDE reads in another file"),
    (re.compile(r"(?i)-\*-.*\beval\s*:"), "a file-local eval: runs when Emacs visits it"),
    (re.compile(r"(?is)local variables:.*\beval\s*:"),
     "a file-local eval: runs when Emacs visits it"),
)
_JOB_KEYS = frozenset({"CRON", "HOOK"})
# The org tools' arguments that carry text into the file, and the property names.
_ORG_TEXT_ARGS = ("title", "body", "note", "value")


def target_runs_later(path: Path) -> str | None:
    """Why the file ``path`` runs later, by its place (``None``: nothing known)."""
    name = path.name
    if name in _NAMED:
        return f"{name}: {_NAMED[name]}"
    suffix = path.suffix.lower()
    if suffix in _SUFFIXES:
        return f"{name}: {_SUFFIXES[suffix]}"
    return None


def content_is_code(text: str) -> list[str]:
    """What the text ``text`` becomes when something reads it later (empty: nothing)."""
    found: list[str] = []
    if text.startswith("#!"):
        found.append("it starts with #! (an executable script)")
    for pattern, what in _CONTENT:
        match = pattern.search(text)
        if match is not None:
            why = what.format(*(g.upper() for g in match.groups()))
            if why not in found:
                found.append(why)
    return found


def _org_keys(args: Mapping[str, Any]) -> Iterable[str]:
    key = args.get("key")
    if isinstance(key, str):
        yield key
    props = args.get("properties")
    if isinstance(props, Mapping):
        yield from (str(k) for k in props)


# What separates the words of a command line, for finding the files it names.
_SHELL_SEPARATORS = re.compile(r"[\s;&|<>()'\"`=]+")


def shell_reason(cmd: str) -> str | None:
    """Why a command the analysis could not prove harmless may write something that runs
    later: it names such a file, or carries such text (``None``: neither)."""
    named = [r for word in _SHELL_SEPARATORS.split(cmd) if word
             and (r := target_runs_later(Path(word))) is not None]
    if named:
        return "this command may write a file that runs later: " + "; ".join(
            dict.fromkeys(named))
    found = content_is_code(cmd)
    return "this command may write text that runs later: " + "; ".join(found) if found \
        else None


def code_reason(tool: str, args: Mapping[str, Any], paths: Iterable[Path]) -> str | None:
    """Why the call ``tool(args)`` writes something that runs later, for the question
    (``None``: a plain write)."""
    if tool == "shell":
        cmd = args.get("cmd")
        return shell_reason(cmd) if isinstance(cmd, str) else None
    if tool == "write-file" or tool.startswith("org-"):
        reasons = [r for p in paths if (r := target_runs_later(p)) is not None]
        if reasons:
            return "this file runs later: " + "; ".join(reasons)
    if tool == "write-file":
        content = args.get("content")
        found = content_is_code(content) if isinstance(content, str) else []
        return "this content runs later: " + "; ".join(found) if found else None
    if tool.startswith("org-"):
        jobs = sorted({k.strip().upper() for k in _org_keys(args)} & _JOB_KEYS)
        if jobs:
            return "this creates automation: " + ", ".join(f":{k}:" for k in jobs) + \
                " becomes a job"
        texts = [str(args[k]) for k in _ORG_TEXT_ARGS if isinstance(args.get(k), str)]
        props = args.get("properties")
        if isinstance(props, Mapping):
            texts += [str(v) for v in props.values()]
        found = [w for t in texts for w in content_is_code(t)]
        if found:
            return "this text runs later: " + "; ".join(dict.fromkeys(found))
    return None
