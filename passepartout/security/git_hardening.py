"""Git run against an untrusted repository: nothing the repository configures may run.

Every sandboxed command gets :data:`GIT_ENV`.  ``GIT_CONFIG_COUNT``/``KEY``/``VALUE``
act like ``git -c`` and win over the repository's own ``.git/config``; the system and
global files are not read at all.
"""

from __future__ import annotations

# Settings that would run a program named by the repository, neutralised.
_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("core.sshCommand", "false"),
    ("diff.external", ""),
    ("protocol.ext.allow", "never"),
)

GIT_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_COUNT": str(len(_OVERRIDES)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, (key, _) in enumerate(_OVERRIDES)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, (_, value) in enumerate(_OVERRIDES)},
}
