"""The tools that touch the machine: ``shell``, ``read-file``, ``write-file``.

They run only after every gate allowed the action, and each checks again on its own:
the shell line is analysed again and runs in the sandbox (an "ask" there needs the
one-shot clearance the gates or the person gave this exact action); the file tools
resolve and judge the path again and write atomically.  ``{{secret:NAME}}`` in a shell
command is replaced by the vault's secret here, at execution, without changing how bash
reads the command (:mod:`passepartout.security.shell.secrets`), and every output is
masked before it goes back to the model; ``@personal`` subtrees of org files are
left out of what ``read-file`` returns.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from passepartout.errors import PipelineError
from passepartout.loop.actions import Action
from passepartout.security.files import FileToolError, read_text, write_text
from passepartout.security.privacy import redact_file_text
from passepartout.security.sandbox.private import private_note
from passepartout.security.sandbox.views import private_views
from passepartout.security.shell.secrets import inject_secrets
from passepartout.security.shell.tool import ShellApprovalRequest, execute_shell
from passepartout.security.vault import VaultError
from passepartout.tools import Tool, make_tool

if TYPE_CHECKING:
    from passepartout.security.guard import Security

log = logging.getLogger(__name__)

SHELL_TIMEOUT = 60.0
PRIVATE_CHECK_BYTES = 64 * 1024 * 1024


def shell_tool(sec: Security) -> Tool:
    def shell(cmd: str) -> str:
        """Run a bash command in a sandbox (workspace writable, no network unless approved).

        Args:
            cmd: The command line. Refer to a secret as {{secret:NAME}}; never its value.
        """
        digest = Action("tool", "shell", {"cmd": cmd}).digest()

        def approve(request: ShellApprovalRequest) -> bool:
            # The gates already decided; here only this action's clearance counts.
            return sec.clearances.consume(digest)

        try:
            resolved = inject_secrets(cmd, sec.vault)
        except VaultError as err:
            raise PipelineError(err.message) from None
        timeout = float(os.environ.get("PASSEPARTOUT_SHELL_TIMEOUT", SHELL_TIMEOUT))
        outcome = execute_shell(
            resolved,
            policy=sec.shell_policy(),
            workspace=sec.places.workspace,
            approve=approve,
            timeout=timeout,
            hidden=(sec.places.config_dir, sec.places.home),
            protected=(*sec.protected_places(), sec.places.policy_file),
            views=lambda: private_views(sec.places.home / "sandbox-views", sec.private_tag),
        )
        if not outcome.ran or outcome.result is None:
            raise PipelineError(sec.vault.mask(f"not run: {outcome.message}"))
        result = outcome.result
        parts = [f"exit code {result.exit_code}"]
        if result.timed_out:
            parts.append("(timed out)")
        if result.truncated:
            parts.append("(output truncated)")
        text = " ".join(parts)
        if result.stdout:
            text += "\n" + result.stdout
        if result.stderr:
            text += "\n[stderr]\n" + result.stderr
        note = private_note(cmd, sec.places.workspace)  # a file there is gone already
        if note:
            text += "\n" + note
        return sec.vault.mask(text)

    return make_tool(shell, name="shell")


def file_tools(sec: Security) -> list[Tool]:
    def read_file(path: str) -> str:
        """Read a text file.

        Args:
            path: The file, absolute or relative to the workspace.
        """
        try:
            text = read_text(path, sec.path_rules())
        except FileToolError as err:
            raise PipelineError(err.message) from None
        text = redact_file_text(path, text, sec.private_tag)  # on content, not on the name
        return sec.vault.mask(text)

    def write_file(path: str, content: str) -> str:
        """Write a text file (replacing it), atomically.

        Args:
            path: The file, absolute or relative to the workspace.
            content: The whole new text of the file.
        """
        try:
            _keep_private(path, sec)
            result = write_text(path, content, sec.path_rules())
        except FileToolError as err:
            raise PipelineError(err.message) from None
        verb = "created" if result.created else "wrote"
        return f"{verb} {result.path} ({result.size} bytes)"

    return [
        make_tool(read_file, name="read-file"),
        make_tool(write_file, name="write-file", impact="high"),
    ]


def _keep_private(raw: str, sec: Security) -> None:
    """Refuse to replace a file that holds private subtrees.

    The model sees such a file with its private text withheld, so the whole new text
    it proposes would silently drop what it never saw: the person edits it instead.
    """
    try:
        text = read_text(raw, sec.path_rules(), max_bytes=PRIVATE_CHECK_BYTES)
    except FileToolError:
        return  # no such file yet, or not readable: write_text says what holds
    tag = sec.private_tag
    if tag in text and redact_file_text(raw, text, tag) != text:
        raise FileToolError(
            f"refused: {raw} holds {tag} subtrees that are withheld from you; replacing "
            "the file would lose them (ask the person to edit it)",
            path=raw,
        )

