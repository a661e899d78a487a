"""``passepartout acp``: serve the Agent Client Protocol on stdin and stdout.

Standard output is the protocol's: everything for a person (a daemon that cannot start,
logging) goes to standard error.  The daemon is started when none runs and keeps
running after the client leaves.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import stat
import sys
from typing import TYPE_CHECKING, Any, cast

from passepartout.config import Config
from passepartout.errors import PassepartoutError

if TYPE_CHECKING:
    from passepartout.faces.face import Face

APPROVAL_TIMEOUT = 600.0  # a person reads the request in the editor before answering


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("speak the Agent Client Protocol on stdio (agent-shell, Zed) as "
                          "a face of the daemon, starting it when none runs")


def run(args: argparse.Namespace) -> int:
    from passepartout.faces.face import Face
    from passepartout.wire.start import ensure_daemon

    if not _is_stream(sys.stdout):
        print("passepartout acp: standard output must be a pipe or a socket (an ACP client "
              "such as agent-shell or Zed starts this command and reads it)", file=sys.stderr)
        return 2
    _quiet_sdk_tracebacks(verbose=logging.getLogger().isEnabledFor(logging.DEBUG))
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
        asyncio.run(_serve(face, config.context_max_tokens))
    finally:
        face.close()
    return 0


async def _serve(face: Face, context_max: int) -> None:
    from acp import Agent, run_agent

    from passepartout.faces.acp.agent import AcpAgent

    # The methods not defined (fork, modes' config) are answered "method not found";
    # session/resume is still marked unstable in the SDK: served all the same.
    await run_agent(cast(Agent, AcpAgent(face, context_max=context_max)),
                    use_unstable_protocol=True)


def _is_stream(handle: Any) -> bool:
    """A pipe, socket or terminal: what the SDK's asyncio transport can write to."""
    try:
        mode = os.fstat(handle.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _quiet_sdk_tracebacks(*, verbose: bool) -> None:
    """The SDK logs a line the client sent that is not JSON with its traceback; the
    line says enough (standard error is the client's log of this agent)."""
    if verbose:
        return

    def strip(record: logging.LogRecord) -> bool:
        if record.name == "root" or record.name.startswith("acp"):
            record.exc_info, record.exc_text = None, None
        return True

    for handler in logging.getLogger().handlers:
        handler.addFilter(strip)
