"""The file tools: ``read-file`` and ``write-file``.

Paths are resolved (``..``, symlinks, ``/proc/self/root``) and judged before and while
the tool runs; writes are atomic; the agent's own files, secrets, ``.git/hooks`` and
shell start-up files are out of reach; ``@personal`` org subtrees are left out of what
is read, and secrets are masked.
"""

from __future__ import annotations

from passepartout.api import defskill, host
from passepartout.security.install import install
from passepartout.security.tools import file_tools

DEPENDS_ON = ["policy"]

AGENT = host()

files_TOOLS = file_tools(install(AGENT)) if AGENT is not None else []

defskill("files", priority=1, depends_on=["policy"], tools=files_TOOLS)
