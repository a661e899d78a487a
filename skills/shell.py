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

AGENT = host()

shell_TOOLS = [shell_tool(install(AGENT))] if AGENT is not None else []

defskill("shell", priority=1, depends_on=["policy"], tools=shell_TOOLS)
