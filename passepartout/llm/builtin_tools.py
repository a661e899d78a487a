"""The built-in tools that touch nothing dangerous by themselves (DESIGN, "Tools the
model may call"): grep-search, memory-search, schedule, and the two high-impact
evaluators, eval and emacs-eval.  (read-file, write-file and shell come with the
security skills ``files`` and ``shell``, which check paths and commands again.)

Each is a typed function; its schema is derived from the signature and docstring.  A
call is a proposal: the gates judge it before the tool actuator runs it here.
"""

from __future__ import annotations

import ast
import contextlib
import io
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passepartout.errors import PipelineError
from passepartout.fsutil import atomic_write
from passepartout.org.heading import heading_line
from passepartout.pyast import compile_tree, parse_module
from passepartout.security.privacy import node_is_private, private_tag
from passepartout.tools import Tool, make_tool

log = logging.getLogger(__name__)

READ_LIMIT = 200_000
GREP_MATCHES = 200
GREP_FILE_LIMIT = 2_000_000
SCHEDULE_FILE = "schedule.org"


def builtin_tools(agent: Any) -> list[Tool]:
    """The built-in tools bound to ``agent`` (its workspace, memory and Emacs)."""

    def grep_search(pattern: str, dir: str = ".") -> str:
        """Search the text files under a directory for a regular expression (at most a
        few seconds and 200 matching lines; secret places are left out).

        Args:
            pattern: a Python regular expression (plain text works too)
            dir: the directory to search, absolute or relative to the workspace
        """
        return grep(pattern, _resolve(agent, dir), skip=_secret_filter(agent))

    def memory_search(query: str) -> str:
        """Search the agent's memory (org notes) by words and by meaning.

        Args:
            query: what to look for
        """
        store = agent.services.memory
        if store is None:
            raise PipelineError("memory is not available in this agent")
        tag = private_tag(agent.services)
        hits = [h for h in store.search(query, 8) if not node_is_private(store, h.id, tag)]
        if not hits:
            return "no matching notes"
        return "\n".join(
            f"- {h.title} (id {h.id}, {h.file or 'no file'}, {h.method})"
            + (f"\n  {h.snippet}" if h.snippet else "")
            for h in hits
        )

    def schedule(name: str, timestamp: str, prompt: str) -> str:
        """Schedule a recurring or one-off job as an org heading with a :CRON: drawer.
        The person is asked to approve the job (its timing, tier and prompt) before it
        runs at all.

        Args:
            name: the job's heading text
            timestamp: an org timestamp, e.g. <2026-05-02 Sat 09:00 +1w> (+1d daily, +1w weekly)
            prompt: what the agent should do when the job fires
        """
        memex = Path(agent.config.memex_dir).expanduser()
        scan = list(agent.config.memex_scan_dirs)
        folder = "system" if "system" in scan or not scan else scan[0]
        jobs = agent.services.model_jobs
        if jobs is None:
            from passepartout.security.trust import Trust
            from passepartout.security.trust.modeljobs import ModelJobs

            jobs = ModelJobs(Trust.in_state(Path(agent.config.home)))
        return schedule_job(memex / folder / SCHEDULE_FILE, name, timestamp, prompt,
                            made_by_model=jobs.record)

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
        bridge: Callable[[str], Any] | None = agent.services.emacs_eval
        if bridge is None:
            raise PipelineError("no Emacs is connected to evaluate Emacs Lisp")
        result = bridge(code)
        return result if isinstance(result, str) else repr(result)

    return [
        make_tool(grep_search, name="grep-search"),
        make_tool(memory_search, name="memory-search"),
        make_tool(schedule, name="schedule"),
        make_tool(eval_python, name="eval", impact="high"),
        make_tool(emacs_eval, name="emacs-eval", impact="high"),
    ]


def _workspace(agent: Any) -> Path:
    """Where relative paths point: the security layer's workspace, else
    PASSEPARTOUT_WORKSPACE, else MEMEX_DIR."""
    sec = agent.services.security
    places = getattr(sec, "places", None)
    if places is not None:
        return Path(places.workspace)
    raw = agent.config.extra.get("PASSEPARTOUT_WORKSPACE")
    return Path(raw or agent.config.memex_dir).expanduser()


def _resolve(agent: Any, raw: str) -> Path:
    if not isinstance(raw, str):
        raise PipelineError("dir must be a path")
    if "\x00" in raw:
        raise PipelineError("a path may not contain a NUL byte")
    path = Path(os.path.expanduser(raw or "."))
    return path if path.is_absolute() else _workspace(agent) / path


def _secret_filter(agent: Any) -> Callable[[Path], bool]:
    """What the search must not open (it is given real paths): ``/proc``, ``/sys``,
    ``/dev`` and the places the security layer keeps secret, or without one the
    credential list and the agent's own config and state."""
    from passepartout.security.files.paths import PathRules, unreadable

    sec = agent.services.security
    if sec is not None:
        rules = sec.path_rules()
    else:
        config = agent.config
        rules = PathRules.build(secret=[config.config_dir, config.home])
    return lambda path: unreadable(path, rules) is not None


def grep(pattern: str, root: Path, limit: int = GREP_MATCHES,
         skip: Callable[[Path], bool] = lambda path: False) -> str:
    """``path:line: text`` for each line under ``root`` that matches ``pattern``
    (hidden and version-control directories, binary and huge files, and whatever
    ``skip`` names are left out), within the time and output limits of
    :mod:`passepartout.security.files.search`."""
    from passepartout.security.files.search import Limits, search

    limits = Limits(matches=limit, file_bytes=GREP_FILE_LIMIT)
    return search(
        pattern, root, limits=limits,
        refused=lambda path: f"{path} holds secrets or the agent's state" if skip(path) else None,
    )


def schedule_job(path: Path, name: str, timestamp: str, prompt: str, *,
                 made_by_model: Callable[[str, str], None] | None = None) -> str:
    """Append a heading with a :CRON: drawer to ``path`` (atomically); returns a summary.

    The drawer holds only what the typed arguments say (the timestamp, a new id, and
    ``:ORIGIN: model`` when ``made_by_model`` is given, which then records the job's
    id and timestamp where the model cannot change them): the name is one line and the
    prompt is body text, escaped so that nothing in them is a heading, drawer,
    property or keyword."""
    from passepartout.org.escape import body, drawer
    from passepartout.org.escape import org_line as one_line
    from passepartout.org.timestamps import parse_timestamp

    title = one_line(name, 200)
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
    node_id = uuid.uuid4().hex
    props = {"CRON": stamp.format(), "ID": node_id}
    if made_by_model is not None:
        props["ORIGIN"] = "model"
    text = body(prompt.strip())
    entry = f"{heading_line(1, title)}\n{drawer(props)}" + (f"{text}\n" if text else "")
    old = path.read_text(encoding="utf-8") if path.is_file() else "#+TITLE: Scheduled jobs\n\n"
    if old and not old.endswith("\n"):
        old += "\n"
    if made_by_model is not None:
        made_by_model(node_id, stamp.format())  # before the file: no unmarked moment
    atomic_write(path, old + entry)
    note = " (it runs once the person approves it)"
    return f"scheduled {title!r} at {stamp.format()} in {path} (id {node_id}){note}"


def run_python(code: str) -> str:
    """Run ``code``; its printed output, then the value of a final expression."""
    try:
        tree = parse_module(code)
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
        exec(compile_tree(tree, "<eval>", "exec"), namespace)
        if last is not None:
            value = eval(compile_tree(ast.Expression(last), "<eval>", "eval"), namespace)
    text = out.getvalue()
    if last is not None:
        text += ("" if not text or text.endswith("\n") else "\n") + repr(value)
    return text or "(no output)"
