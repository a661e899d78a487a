"""The command: ``passepartout openai [--port N] [--token-file F] [--new-token]``."""

from __future__ import annotations

import argparse
import logging
import signal
import socket
import sys
from pathlib import Path

from passepartout.config import Config
from passepartout.errors import PassepartoutError

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
APPROVAL_TIMEOUT = 600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("serve the agent as a model over the OpenAI chat-completions "
                          "protocol on 127.0.0.1, with a bearer token (gptel, ellama, "
                          "the openai library)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"the port (default {DEFAULT_PORT}; 0: a free one, printed)")
    parser.add_argument("--token-file", type=Path,
                        help="where the bearer token is kept, 0600, the same across "
                             "restarts (default: $PASSEPARTOUT_HOME/openai.token)")
    parser.add_argument("--new-token", action="store_true",
                        help="replace the token with a new one (clients configured with "
                             "the old one are refused from then on)")
    parser.add_argument("--client", default="",
                        help="the client's name in the audit when a request gives none")


def run(args: argparse.Namespace) -> int:
    import anyio
    import uvicorn

    from passepartout.faces.face import Face
    from passepartout.faces.openai.app import Endpoint, build_app, unauthorized_body
    from passepartout.wire.bearer import BearerGate, kept_token
    from passepartout.wire.start import ensure_daemon

    if not 0 <= args.port < 65536:
        raise PassepartoutError(f"--port must be between 0 and 65535, not {args.port}")
    config = Config.load()
    path = args.token_file or config.home / "openai.token"
    token = kept_token(path, rotate=bool(args.new_token))
    timeout = float(config.extra.get("PASSEPARTOUT_APPROVAL_TIMEOUT") or APPROVAL_TIMEOUT)

    def attach() -> Face:
        ensure_daemon(config)
        face = Face.attach(config.home, source="openai",
                           client={"approval-timeout": timeout})
        if face is None:
            from passepartout.wire.client import DaemonError

            raise DaemonError("the daemon stopped; try again", "closed")
        return face

    endpoint = Endpoint(attach, args.client)
    endpoint.face()  # the daemon is up (or started) before the address is printed
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
        sock.listen(128)
    except OSError as err:
        sock.close()
        endpoint.close()
        raise PassepartoutError(
            f"cannot listen on 127.0.0.1:{args.port}: {err.strerror}") from None
    bound = sock.getsockname()[1]
    app = BearerGate(build_app(endpoint), token, body=unauthorized_body(),
                     content_type=b"application/json")
    print(f"http://127.0.0.1:{bound}/v1 (token in {path})", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        anyio.run(lambda: server.serve(sockets=[sock]))
    finally:
        endpoint.close()
    return 0
