"""``passepartout tui``: the full-screen terminal face of the daemon (Textual)."""

from __future__ import annotations

import argparse
import sys

DEFAULT_SESSION = "tui"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("the full-screen chat, attached to the daemon (started when none "
                          "runs): streaming, cancel, approvals as dialogs, a side panel "
                          "with the next cron jobs, Flight Plans waiting and the cost")
    parser.add_argument("--session", default=DEFAULT_SESSION,
                        help=f"the chat session to open (default {DEFAULT_SESSION!r})")


def run(args: argparse.Namespace) -> int:
    from passepartout.config import Config
    from passepartout.errors import ConfigError
    from passepartout.faces.face import Face
    from passepartout.wire.client import DaemonError
    from passepartout.wire.start import StartError, ensure_daemon

    try:
        from passepartout.faces.tui.app import PassepartoutApp
    except ImportError:
        print("passepartout tui: Textual is not installed (make install, or pip install "
              "'passepartout[tui]')", file=sys.stderr)
        return 2
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("passepartout tui: needs a terminal (use `passepartout chat` for pipes)",
              file=sys.stderr)
        return 2
    try:
        config = Config.load()
        ensure_daemon(config)
        face = Face.attach(config.home, source="tui")
    except (ConfigError, StartError, DaemonError) as err:
        print(f"passepartout tui: {err.message}", file=sys.stderr)
        return 1
    if face is None:
        print("passepartout tui: the daemon stopped as it was starting", file=sys.stderr)
        return 1
    app = PassepartoutApp(face, args.session,
                          reattach=lambda: Face.attach(config.home, source="tui"))
    try:
        app.run()
    finally:
        app.face.close()
    return 0
