"""``passepartout sessions``: the kept chat sessions (id, title, last activity), most
recent first, to resume one; from the running daemon, else from the state files."""

from __future__ import annotations

import argparse
from typing import Any

from passepartout import protocol
from passepartout.config import Config
from passepartout.views import sessions, table
from passepartout.wire.client import connect


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "list the chat sessions: id, title, last activity"


def run(args: argparse.Namespace) -> int:
    config = Config.load()
    client = connect(config.home)
    if client is None:
        found: list[dict[str, Any]] = sessions(config.home)
    else:
        with client:
            found = client.request(protocol.Sessions())
    if not found:
        print("no sessions yet")
        return 0
    print(table([[str(s.get("id")), str(s.get("last-activity")), str(s.get("messages")),
                  str(s.get("title") or "")] for s in found],
                ["ID", "LAST ACTIVITY", "MESSAGES", "TITLE"]))
    return 0
