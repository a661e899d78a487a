"""``passepartout cost``: what the model calls cost, from the ledger.

Prints the total, then sums per session, provider, origin and heading (or one grouping
with ``--by``).  Reads the ledger under PASSEPARTOUT_HOME; never calls a model.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any, TextIO

from passepartout.config import Config
from passepartout.errors import PassepartoutError
from passepartout.llm.heading_names import heading_names, memex_roots
from passepartout.llm.ledger import GROUPS, LEDGER_FILE, Ledger, Total

DEFAULT_GROUPS = ("session", "provider", "origin", "heading")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", choices=GROUPS, help="one grouping instead of the usual four")
    parser.add_argument("--limit", type=int, default=20, help="rows per grouping (default 20)")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "cost", help="what the model calls cost (from the ledger)"
    )
    add_arguments(parser)
    return parser


def run(args: argparse.Namespace, *, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    try:
        config = Config.load()
    except PassepartoutError as err:
        print(f"passepartout cost: {err.message}", file=sys.stderr)
        return 2
    path = config.home / LEDGER_FILE
    if not path.exists():
        print(f"No model calls booked yet ({path} does not exist).", file=stream)
        return 0
    ledger = Ledger(path)
    try:
        total = ledger.total()
        print(f"Total: {total.calls} calls, {total.tokens_in} tokens in "
              f"({total.tokens_cached} cached), {total.tokens_out} out, "
              f"${total.cost:.4f}", file=stream)
        for group in ([args.by] if getattr(args, "by", None) else DEFAULT_GROUPS):
            print(f"\nBy {group}:", file=stream)
            rows = ledger.totals(group)[: max(1, getattr(args, "limit", 20))]
            if group == "heading":
                rows = _named(rows, config)
            print(_table(rows), file=stream)
    finally:
        ledger.close()
    return 0


def _named(rows: list[Total], config: Config) -> list[Total]:
    """Heading rows keyed by title and file (an id the memex no longer holds stays)."""
    names = heading_names((r.key for r in rows), memex_roots(config))
    return [replace(r, key=names.get(r.key, r.key)) for r in rows]


def _table(rows: list[Total]) -> str:
    if not rows:
        return "  (none)"
    width = max(12, *(len(r.key or "-") for r in rows))
    head = f"  {'':{width}}  {'calls':>6}  {'in':>9}  {'out':>8}  {'cost':>10}"
    lines = [head]
    for r in rows:
        lines.append(f"  {r.key or '-':{width}}  {r.calls:>6}  {r.tokens_in:>9}  "
                     f"{r.tokens_out:>8}  ${r.cost:>9.4f}")
    return "\n".join(lines)
