"""``passepartout acp``: serve the Agent Client Protocol on stdin and stdout.

Standard output is the protocol's: everything for a person (a daemon that cannot start,
logging) goes to standard error.  The daemon is started when none runs and keeps
running after the client leaves.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, cast

from passepartout.config import Config
from passepartout.errors import PassepartoutError

if TYPE_CHECKING:
    from passepartout.daemon.face import Face

APPROVAL_TIMEOUT = 600.0  # a person reads the request in the editor before answering


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("speak the Agent Client Protocol on stdio (agent-shell, Zed) as "
                          "a face of the daemon, starting it when none runs")


def run(args: argparse.Namespace) -> int:
    from passepartout.daemon.face import Face
    from passepartout.daemon.start import ensure_daemon

    config = Config.load()
    timeout = float(config.extra.get("PASSEPARTOUT_APPROVAL_TIMEOUT") or APPROVAL_TIMEOUT)
    try:
        ensure_daemon(config)
        face = Face.attach(config.home, source="acp",
                           client={"approval-timeout": timeout, "backlog": True})
    except PassepartoutError as err:
        print(f"passepartout acp: {err.message}", file=sys.stderr)
        return 1
    if face is None:
        print("passepartout acp: the daemon stopped as the client started; try again",
              file=sys.stderr)
        return 1
    try:
        asyncio.run(_serve(face))
    finally:
        face.close()
    return 0


async def _serve(face: Face) -> None:
    from acp import Agent, run_agent

    from passepartout.acp.agent import AcpAgent

    # The methods not defined (fork, modes' config) are answered "method not found";
    # session/resume is still marked unstable in the SDK: served all the same.
    await run_agent(cast(Agent, AcpAgent(face)), use_unstable_protocol=True)
