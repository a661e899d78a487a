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

HOST = host()


def files_start() -> None:
    """The tools need the security layer, which the policy skill's start installed."""
    assert HOST is not None
    files_SKILL.tools = tuple(file_tools(install(HOST.agent)))


files_SKILL = defskill("files", priority=1, depends_on=["policy"],
                       start=files_start if HOST else None)
