"""The tools every agent offers the model (DESIGN, "Tools the model may call").

Each is a typed function; its schema is derived from the signature and docstring.  A
call is a proposal: the gates judge it before the tool actuator runs it here.  Relative
paths are taken from MEMEX_DIR.  ``shell`` is the security package's sandboxed runner,
offered when it is installed.
"""

from __future__ import annotations

import ast
import contextlib
import io
import logging
import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passepartout.errors import PipelineError
from passepartout.fsutil import atomic_write
from passepartout.tools import Tool, make_tool

log = logging.getLogger(__name__)

READ_LIMIT = 200_000
GREP_MATCHES = 200
GREP_FILE_LIMIT = 2_000_000
SCHEDULE_FILE = "schedule.org"
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv"})


def builtin_tools(agent: Any) -> list[Tool]:
    """The built-in tools bound to ``agent`` (its MEMEX_DIR, memory and Emacs)."""
    memex = Path(agent.config.memex_dir).expanduser()

    def resolve(raw: str) -> Path:
        if not raw or "\x00" in raw:
            raise PipelineError("a path is needed (and may not contain a NUL byte)")
        path = Path(os.path.expanduser(raw))
        return path if path.is_absolute() else memex / path

    def read_file(path: str) -> str:
        """Read a text file.

        Args:
            path: the file, absolute or relative to the memex directory
        """
        target = resolve(path)
        if not target.is_file():
            raise PipelineError(f"no such file: {target}")
        data = target.read_bytes()[: READ_LIMIT + 1]
        if b"\x00" in data[:8192]:
            raise PipelineError(f"{target} is a binary file")
        text = data[:READ_LIMIT].decode("utf-8", errors="replace")
        if len(data) > READ_LIMIT:
            text += f"\n[... truncated at {READ_LIMIT} bytes]"
        return text

    def write_file(path: str, content: str) -> str:
        """Write a text file, replacing it whole (atomically).

        Args:
            path: the file, absolute or relative to the memex directory
            content: the complete new text of the file
        """
        target = resolve(path)
        atomic_write(target, content)
        return f"wrote {len(content.encode('utf-8'))} bytes to {target}"

    def grep_search(pattern: str, dir: str = "") -> str:
        """Search the text files under a directory for a regular expression.

        Args:
            pattern: a Python regular expression (plain text works too)
            dir: the directory to search, absolute or relative to the memex directory
        """
        return grep(pattern, resolve(dir) if dir else memex)

    def memory_search(query: str) -> str:
        """Search the agent's memory (org notes) by meaning or by words.

        Args:
            query: what to look for
        """
        store = agent.services.get("memory")
        if store is None:
            raise PipelineError("memory is not available in this agent")
        hits = store.search(query, 8)
        if not hits:
            return "no matching notes"
        return "\n".join(f"- {h.title} (id {h.id}, {h.method} {h.score:.2f})" for h in hits)

    def schedule(name: str, timestamp: str, prompt: str) -> str:
        """Schedule a recurring or one-off job as an org heading with a :CRON: drawer.

        Args:
            name: the job's heading text
            timestamp: an org timestamp, e.g. <2026-05-02 Sat 09:00 +1w> (+1d daily, +1w weekly)
            prompt: what the agent should do when the job fires
        """
        scan = list(agent.config.memex_scan_dirs)
        folder = "system" if "system" in scan or not scan else scan[0]
        return schedule_job(memex / folder / SCHEDULE_FILE, name, timestamp, prompt)

    def eval_python(code: str) -> str:
        """Evaluate Python code inside the agent and return its output and last value.

        Args:
            code: Python statements; the value of a final expression is returned
        """
        return run_python(code)

    def emacs_eval(code: str) -> str:
        """Evaluate Emacs Lisp in the person's Emacs (Emacs shows it and asks them first).

        Args:
            code: one Emacs Lisp form
        """
        bridge: Callable[[str], Any] | None = agent.services.get("emacs-eval")
        if bridge is None:
            raise PipelineError("no Emacs is connected to evaluate Emacs Lisp")
        result = bridge(code)
        return result if isinstance(result, str) else repr(result)

    tools = [
        make_tool(read_file, name="read-file"),
        make_tool(write_file, name="write-file", impact="high"),
        make_tool(grep_search, name="grep-search"),
        make_tool(memory_search, name="memory-search"),
        make_tool(schedule, name="schedule"),
        make_tool(eval_python, name="eval", impact="high"),
        make_tool(emacs_eval, name="emacs-eval", impact="high"),
    ]
    shell = shell_tool(agent, memex)
    if shell is not None:
        tools.append(shell)
    return tools


def shell_tool(agent: Any, workspace: Path) -> Tool | None:
    """``shell`` over the security package's sandbox, when it is installed."""
    try:
        from passepartout.security.shell import ShellPolicy
        from passepartout.security.shell_tool import execute_shell
    except ImportError:
        return None
    root = Path(agent.config.extra.get("PASSEPARTOUT_WORKSPACE") or workspace).expanduser()

    def shell(cmd: str) -> str:
        """Run a shell command in a sandbox (read-only system, no network, in the workspace).

        Args:
            cmd: the command line
        """
        # The mandatory policy gate judged this command with the same analysis and asked
        # the person when it said "ask": reaching here means it was allowed or approved.
        outcome = execute_shell(cmd, policy=ShellPolicy(), workspace=root,
                                approve=lambda request: True)
        if outcome.result is None:
            raise PipelineError(outcome.message)
        result = outcome.result
        parts = [f"[{outcome.message}]"]
        for label, text in (("stdout", result.stdout), ("stderr", result.stderr)):
            if text:
                parts.append(f"{label}:\n{text}")
        return "\n".join(parts)

    return make_tool(shell, name="shell")


def grep(pattern: str, root: Path, limit: int = GREP_MATCHES) -> str:
    """``path:line: text`` for each line under ``root`` that matches ``pattern``."""
    try:
        regex = re.compile(pattern)
    except re.error:
        regex = re.compile(re.escape(pattern))
    if not root.is_dir():
        raise PipelineError(f"no such directory: {root}")
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            try:
                if path.stat().st_size > GREP_FILE_LIMIT:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if b"\x00" in data[:8192]:
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if regex.search(line):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()[:300]}")
                    if len(found) >= limit:
                        return "\n".join(found) + f"\n[stopped at {limit} matches]"
    return "\n".join(found) if found else "no matches"


def schedule_job(path: Path, name: str, timestamp: str, prompt: str) -> str:
    """Append a heading with a :CRON: drawer to ``path`` (atomically); returns a summary."""
    from passepartout.events.timestamps import parse_timestamp

    title = " ".join(name.split())
    if not title:
        raise PipelineError("a scheduled job needs a name")
    raw = timestamp.strip()
    if not raw.startswith(("<", "[")):
        raw = f"<{raw}>"
    try:
        stamp = parse_timestamp(raw)
    except ValueError as err:
        raise PipelineError(
            f"{timestamp!r} is not an org timestamp ({err}); write e.g. "
            "<2026-05-02 Sat 09:00 +1w>") from None
    if not stamp.active:
        raise PipelineError("a schedule needs an active timestamp <...>, not [...]")
    body = "\n".join(line for line in prompt.strip().splitlines() if not line.startswith("*"))
    node_id = uuid.uuid4().hex
    entry = (f"* {title}\n:PROPERTIES:\n:CRON: {stamp.format()}\n:ID: {node_id}\n:END:\n"
             f"{body}\n")
    old = path.read_text(encoding="utf-8") if path.is_file() else "#+TITLE: Scheduled jobs\n\n"
    if old and not old.endswith("\n"):
        old += "\n"
    atomic_write(path, old + entry)
    return f"scheduled {title!r} at {stamp.format()} in {path} (id {node_id})"


def run_python(code: str) -> str:
    """Run ``code``; its printed output, then the value of a final expression."""
    try:
        tree = ast.parse(code, mode="exec")
    except SyntaxError as err:
        raise PipelineError(f"syntax error: {err}") from None
    last: ast.expr | None = None
    final = tree.body[-1] if tree.body else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
        last = final.value
    namespace: dict[str, Any] = {"__name__": "__passepartout_eval__"}
    out = io.StringIO()
    value: Any = None
    with contextlib.redirect_stdout(out):
        exec(compile(tree, "<eval>", "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last), "<eval>", "eval"), namespace)
    text = out.getvalue()
    if last is not None:
        text += ("" if not text or text.endswith("\n") else "\n") + repr(value)
    return text or "(no output)"
