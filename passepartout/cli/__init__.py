"""``passepartout``: the command line (``serve``, ``chat``, ``doctor``, ``cost``, ``memory``,
``policy``, ``grant``).

Subcommands import what they need when they run, so ``serve`` prints its port fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from passepartout import __version__
from passepartout.errors import PassepartoutError
from passepartout.faces.terminal.streams import escaped_output

# subcommand -> (module, help); each module has add_arguments(parser) and run(args) -> int
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("passepartout.server.serve", "run the EPC server for Emacs (prints the port)"),
    "daemon": ("passepartout.cli.daemon", "run the agent as your one daemon, until SIGTERM"),
    "status": ("passepartout.cli.status", "say whether the daemon runs, and what it does"),
    "stop": ("passepartout.cli.stop", "stop the daemon (memory saved) and wait for it"),
    "service": ("passepartout.cli.service", "install or remove the daemon as a user service"),
    "cron": ("passepartout.cli.cron", "list the cron jobs: next run, last result"),
    "sessions": ("passepartout.cli.sessions", "list the chat sessions, to resume one"),
    "chat": ("passepartout.faces.terminal.chat", "talk to the agent in the terminal"),
    "tui": ("passepartout.faces.tui",
            "the full-screen chat in the terminal, attached to the daemon"),
    "doctor": ("passepartout.cli.doctor", "check the installation and say what to fix"),
    "local-model": ("passepartout.llm.local_cli",
                    "fetch the offline model's weights (pinned) for the local extra"),
    "cost": (
        "passepartout.llm.cost_cli",
        "print what the models cost, by session, provider, origin and heading",
    ),
    "memory": ("passepartout.memory.cli", "inspect memory: stats, snapshots, rollback N, verify"),
    "policy": ("passepartout.security.policy.cli", "show or accept a changed policy.toml"),
    "grant": ("passepartout.security.approvals.grant_cli", "list, add or accept standing grants"),
    "skills": ("passepartout.engine.trust_cli", "list the skills; review and trust one"),
    "hooks": ("passepartout.events.hooks_cli", "list the :HOOK: names that have handlers"),
    "acp": ("passepartout.faces.acp.main",
            "speak the Agent Client Protocol on stdio (agent-shell, Zed)"),
    "openai": ("passepartout.faces.openai.main",
               "serve the agent as a model to OpenAI clients (gptel, ellama) on 127.0.0.1"),
    "mcp": ("passepartout.faces.mcp", "serve the memex to other agents over MCP (stdio or "
            "--http); `mcp tools|allow|deny`: the MCP servers' tools you approved"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="passepartout", description="A personal agent for Emacs and org-mode."
    )
    parser.add_argument("--version", action="version", version=f"passepartout {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


# Commands whose standard output is a protocol (the port line, JSON-RPC), not text for
# a person: left as they are.
# The full-screen face draws with escape sequences itself (its text passes terminal_safe).
MACHINE_FACING = frozenset({"serve", "daemon", "acp", "mcp", "tui", "openai"})
MCP_PIN_WORDS = frozenset({"tools", "allow", "deny"})
MCP_PINS = ("passepartout.mcp.pins_cli", "list, allow or deny the tools of MCP servers")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    top, rest = parser.parse_known_args(args_list)
    if top.command is None:
        parser.print_help()
        return 2
    logging.basicConfig(
        level=logging.DEBUG if top.verbose else logging.WARNING,
        stream=sys.stderr,
        # A person reads a warning as the command's own words; -v shows where it came from.
        format="%(asctime)s %(levelname)s %(name)s: %(message)s" if top.verbose
        else f"passepartout {top.command}: %(message)s",
    )
    from passepartout.security import logs  # here: `--help` and a bad word stay instant

    logs.install()
    module_name, help_text = COMMANDS[top.command]
    machine_facing = top.command in MACHINE_FACING
    if top.command == "mcp" and rest and rest[0] in MCP_PIN_WORDS:
        # `passepartout mcp tools|allow|deny`: the person's approvals of MCP tools,
        # text for a person (the MCP face itself takes no such word).
        module_name, help_text = MCP_PINS
        machine_facing = False
    module = importlib.import_module(module_name)
    sub = argparse.ArgumentParser(prog=f"passepartout {top.command}", description=help_text)
    module.add_arguments(sub)
    args = sub.parse_args(rest)
    try:
        if machine_facing:
            status = int(module.run(args) or 0)
        else:
            # What a person reads passes the terminal boundary: a note, a grant's title
            # or a policy line quoting file text never moves the cursor or the clipboard.
            with escaped_output():
                status = int(module.run(args) or 0)
        sys.stdout.flush()  # here, where a reader gone away is caught, not at exit
        return status
    except PassepartoutError as err:
        print(f"passepartout {top.command}: {err.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`passepartout memory snapshots | head`): the rest has
        # nowhere to go, and the final flush must not fail either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
