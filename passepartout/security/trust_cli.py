"""What ``passepartout policy`` and ``passepartout grant`` share: the approvals book of
the configured agent, and a yes typed by the person on a terminal.

These commands run in the person's own terminal, outside the agent and its sandbox:
only there is the seal key readable, and only a terminal's answer counts (a pipe, as
a model's command would give, is refused).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.security.approvals import ApprovalBook
from passepartout.security.approvals.home import settle


def book(config: Config | None = None) -> ApprovalBook:
    """The approvals file and the seal of the configured agent."""
    config = config or Config.load()
    home = Path(config.home)
    approvals, _ = settle(
        Path(config.memex_dir), home, config.extra.get("PASSEPARTOUT_APPROVALS_FILE")
    )
    return ApprovalBook(approvals, home / "flightplans.json", mask=str)


def policy_file(config: Config | None = None) -> Path:
    return Path((config or Config.load()).config_dir) / "policy.toml"


def confirm(question: str, stdin: TextIO | None = None, out: TextIO | None = None) -> bool:
    """The person's yes to ``question``, read from a terminal (anything else: an error)."""
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    if not stdin.isatty():
        raise ConfigError("this needs your answer on a terminal, and standard input is not "
                          "one; run it yourself in a terminal")
    out.write(f"{question} [y/N] ")
    out.flush()
    answer = stdin.readline()
    return answer.strip().lower() in ("y", "yes")
