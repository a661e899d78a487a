"""``passepartout mcp tools|allow|deny``: the MCP servers' tools the person approved.

``tools`` lists the tools the agent found waiting (new, or changed since approved) and
the decisions on record, each with whether it carries the agent's seal.  ``allow SERVER
TOOL`` shows the waiting tool's exact card (name, description, schema, sha256) and pins
it after a yes typed on a terminal (a pipe, as a model's command would give, is
refused); ``deny SERVER TOOL`` declines it (no question: it only takes away).  A running
agent takes the change on its next heartbeat.  These commands run in the person's own
terminal, where the agent's seal key is readable; the sandbox never sees it.
"""

from __future__ import annotations

import argparse

from passepartout.config import Config
from passepartout.errors import ConfigError
from passepartout.mcp.pins import ALLOW, DENY, Card, PinStore
from passepartout.mcp.schema import UnsupportedSchema, validator
from passepartout.mcp.untrusted import aimed_at_model, schema_texts
from passepartout.security.trust.cli import confirm

WORDS = ("tools", "allow", "deny")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="pin_command", metavar="COMMAND", required=True)
    sub.add_parser("tools", help="the MCP tools waiting for your approval, and your decisions")
    for word, what in (("allow", "review a waiting tool's card and offer it to the model"),
                       ("deny", "decline a tool (it is never offered as it is)")):
        one = sub.add_parser(word, help=what)
        one.add_argument("server", help="the server's name in mcp.json")
        one.add_argument("tool", help="the tool's name as the server lists it")


def run(args: argparse.Namespace) -> int:
    store = PinStore(Config.load().home)
    if args.pin_command == "tools":
        return list_tools(store)
    waiting = [c for c in store.waiting() if (c.server, c.name) == (args.server, args.tool)]
    if args.pin_command == "deny":
        return deny(store, args.server, args.tool, waiting)
    if not waiting:
        raise ConfigError(f"no tool {args.tool!r} of {args.server!r} waits for approval "
                          "(see `passepartout mcp tools`; the agent lists a server's tools "
                          "when it connects)")
    return allow(store, waiting[-1])


def list_tools(store: PinStore) -> int:
    waiting = store.waiting()
    pins = store.pins()
    sealed = {(p.server, p.name, p.sha256, p.decision) for p in pins}
    for card in waiting:
        state = store.state(card, pins)
        print(f"{card.server}/{card.name}: waiting ({state}; sha256 {card.sha256[:16]}...): "
              f"`passepartout mcp allow {card.server} {card.name}`")
    for entry in store.raw():
        parts = tuple(str(entry.get(k, "")) for k in ("server", "name", "sha256", "decision"))
        mark = "" if parts in sealed else " [no valid seal: ignored]"
        decided = "approved" if parts[3] == ALLOW else "declined"
        print(f"{parts[0]}/{parts[1]}: {decided} (sha256 {parts[2][:16]}...){mark}")
    if not waiting and not store.raw():
        print(f"no MCP tools approved or waiting ({store.path})")
    return 0


def allow(store: PinStore, card: Card) -> int:
    print(card.shown())
    try:
        validator(card.schema)
    except UnsupportedSchema as err:
        print(f"not allowed: {err}; the agent would not offer it anyway")
        return 1
    for text in (card.name, card.description, *schema_texts(card.schema)):
        why = aimed_at_model(text)
        if why is not None:
            print(f"not allowed: a text of it holds {why}; the agent would not offer it anyway")
            return 1
    if not confirm(f"Offer {card.server}/{card.name} to the model, with exactly this "
                   "description and schema?"):
        print("not allowed; it stays withheld")
        return 1
    store.decide(card, ALLOW)
    print("allowed; a running agent offers it from its next heartbeat (a changed tool "
          "waits again)")
    return 0


def deny(store: PinStore, server: str, tool: str, waiting: list[Card]) -> int:
    if waiting:
        store.decide(waiting[-1], DENY)
        print(f"declined {server}/{tool} (sha256 {waiting[-1].sha256[:16]}...)")
        return 0
    pinned = [p for p in store.pins() if (p.server, p.name) == (server, tool)]
    if not pinned:
        raise ConfigError(f"no tool {tool!r} of {server!r} is waiting or approved "
                          "(see `passepartout mcp tools`)")
    store.record(server, tool, pinned[-1].sha256, DENY)
    print(f"declined {server}/{tool} (sha256 {pinned[-1].sha256[:16]}...)")
    return 0
