"""``passepartout mcp``: the memex as an MCP server for other agents (Claude Code,
gptel, any MCP client), a face of the running daemon.

It speaks MCP on stdio (or, with ``--http``, streamable HTTP on 127.0.0.1 with a
bearer token kept in a 0600 file) and forwards each tool call to the daemon (started
when none runs) through the bridge's ``memex`` method: the agent does the work
(:mod:`passepartout.mcp.memex`), so the gates, the audit, the privacy filter and the
approvals are the daemon's own.  Every call opens its own connection, so a write that
waits for the person's answer does not hold up the searches.
"""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from passepartout import protocol
from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.wire.bearer import BearerGate, kept_token

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "The person's org-mode notes (their memex), through their own agent's gates: search, "
    "read, agenda; capture, schedule and set-todo are asked of the person before they "
    "apply. Private subtrees are never returned."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("serve the memex to other agents over MCP (stdio; --http for "
                          "streamable HTTP on 127.0.0.1 with a token)")
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=0,
                        help="the HTTP port (default: a free one, printed at start)")
    parser.add_argument("--token-file", type=Path,
                        help="where the HTTP bearer token is kept, 0600, the same across "
                             "restarts (default: $PASSEPARTOUT_HOME/mcp.token)")
    parser.add_argument("--new-token", action="store_true",
                        help="replace the HTTP bearer token with a new one (clients "
                             "configured with the old one are refused from then on)")
    parser.add_argument("--client", default="",
                        help="the client's name in the audit when it does not give one")


class DaemonLink:
    """Calls of the daemon's ``memex`` method, one connection each."""

    def __init__(self, config: Config) -> None:
        self.config = config
        approval = float(config.extra.get("PASSEPARTOUT_APPROVAL_TIMEOUT") or 300.0)
        self.timeout = approval + 30.0

    def call(self, client: str, operation: str, args: dict[str, Any]) -> str:
        from passepartout.errors import DaemonError
        from passepartout.wire.client import connect
        from passepartout.wire.start import ensure_daemon

        ensure_daemon(self.config)
        daemon = connect(self.config.home, timeout=self.timeout)
        if daemon is None:
            raise PassepartoutError("the daemon stopped; try again")
        fields = {key: list(value) if isinstance(value, tuple) else value
                  for key, value in args.items() if value is not None}
        with daemon:
            try:
                return daemon.request(protocol.Memex(client, operation, fields))
            except DaemonError as err:  # "memex: WHY": the why is the client's answer
                raise PassepartoutError(err.message.removeprefix("memex: ")) from None


def build_server(link: DaemonLink, default_client: str = "") -> Any:
    """The MCP server whose tools forward to the daemon."""
    import anyio.to_thread

    from passepartout import __version__

    server: Any = _Server("passepartout", instructions=INSTRUCTIONS, version=__version__,
                          log_level="WARNING")

    async def forward(ctx: Context, operation: str, **args: Any) -> str:
        client = _client_name(ctx) or default_client or "an MCP client"
        try:
            return await anyio.to_thread.run_sync(link.call, client, operation, args)
        except PassepartoutError as err:
            raise ToolError(err.message) from None

    @server.tool()
    async def search(query: str, ctx: Context, limit: int = 8) -> str:
        """Search the person's org notes by words and by meaning; returns titles, ids
        (id:X, for read) and a matching line."""
        return await forward(ctx, "search", query=query, limit=limit)

    @server.tool()
    async def read(target: str, ctx: Context) -> str:
        """Read from the person's org notes: id:ID (a note found by search), FILE (its
        outline of headings), or FILE::Heading/Path (one heading's subtree)."""
        return await forward(ctx, "read", target=target)

    @server.tool()
    async def agenda(ctx: Context, day: str = "today") -> str:
        """What is scheduled or due (SCHEDULED, DEADLINE, the agent's cron jobs) on a
        day: today, tomorrow, week, or YYYY-MM-DD."""
        return await forward(ctx, "agenda", day=day)

    @server.tool()
    async def capture(title: str, ctx: Context, body: str = "",
                      tags: list[str] | None = None) -> str:
        """Capture an item into the person's org inbox.  The person approves it first:
        the answer says whether it was applied or waits for their approval."""
        return await forward(ctx, "capture", title=title, body=body, tags=tags)

    @server.tool()
    async def schedule(name: str, timestamp: str, prompt: str, ctx: Context) -> str:
        """Schedule a job of the person's agent at an org timestamp (<2026-12-01 Tue 09:00>,
        with a repeater like +1w for a recurring one), running ``prompt``.  The person
        approves it first."""
        return await forward(ctx, "schedule", name=name, timestamp=timestamp, prompt=prompt)

    @server.tool()
    async def set_todo(file: str, heading: str, state: str, ctx: Context) -> str:
        """Set the TODO state (TODO, DONE, ... or empty) of a heading, named by id:ID or
        an outline path, in an org file of the memex.  The person approves it first."""
        return await forward(ctx, "set-todo", file=file, heading=heading, state=state)

    return server


class _Server(MCPServer):
    """The SDK's server, with an unknown prompt a plain error for the client (the SDK
    raised it as an unexpected exception: "Internal server error", and its traceback
    printed to the client's log)."""

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Any = None) -> Any:
        if not self._prompt_manager.get_prompt(name):
            raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}: this server has none")
        return await super().get_prompt(name, arguments, context)


def _client_name(ctx: Any) -> str:
    try:
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        return str(info.name) if info is not None and info.name else ""
    except Exception:  # no session info (a modern request without it): the default
        return ""


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    server = build_server(DaemonLink(config), args.client)
    if not args.http:
        server.run()
        return 0
    return serve_http(server, config, args.port, args.token_file,
                      new_token=bool(getattr(args, "new_token", False)))


def serve_http(server: Any, config: Config, port: int, token_file: Path | None, *,
               new_token: bool = False) -> int:
    """Streamable HTTP on 127.0.0.1: every request must carry the token of the file.

    The token is kept across restarts (a configured client keeps working) and replaced
    only with ``new_token``; the address is printed once connections are accepted."""
    import anyio
    import uvicorn

    path = token_file or config.home / "mcp.token"
    token = kept_token(path, rotate=new_token)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(128)  # from here a client that connects waits for uvicorn, never refused
    except OSError as err:
        sock.close()
        raise PassepartoutError(f"cannot listen on 127.0.0.1:{port}: {err.strerror}") from None
    bound = sock.getsockname()[1]
    app = BearerGate(server.streamable_http_app(host="127.0.0.1"), token)
    print(f"http://127.0.0.1:{bound}/mcp (token in {path})", flush=True)
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    # uvicorn stops on SIGTERM, then raises it again: exit quietly.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    anyio.run(lambda: uv.serve(sockets=[sock]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(argparse.Namespace(http=False, port=0, token_file=None, client="",
                                    new_token=False)))
