"""The ``shell`` tool: a bash command, analysed, gated and run in a sandbox.

The policy gate judges the parsed line before anything runs; the tool analyses it
again, runs it with bubblewrap (workspace writable, no network unless approved), puts
``{{secret:NAME}}`` placeholders' values in only at execution and masks the output.
"""

from __future__ import annotations

from passepartout.api import defskill, host
from passepartout.security.install import install
from passepartout.security.tools import shell_tool

DEPENDS_ON = ["policy"]

HOST = host()


def shell_start() -> None:
    """The tool needs the security layer, which the policy skill's start installed."""
    assert HOST is not None
    shell_SKILL.tools = (shell_tool(install(HOST.agent)),)


shell_SKILL = defskill("shell", priority=1, depends_on=["policy"],
                       start=shell_start if HOST else None)
