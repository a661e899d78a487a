"""The vault's mask on a megabyte and on a log line, with three declared secrets.

Prints the median CPU time (and wall time) of :meth:`Vault.mask` over 21 runs for:
1 MB of ASCII text with no secret, 1 MB with escapes and non-ASCII letters, 1 MB with
one secret in the middle (plain, and spelled one character per line), and a 200-byte
log line.  CPU time is the figure to compare: on a shared machine wall time varies.

Run: ``.venv/bin/python bench/vault_mask.py``.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from passepartout.security.vault import Vault  # noqa: E402

RUNS = 21
SECRETS = {
    "GITHUB_TOKEN": "ghp_Zq8vX2secretTOKENvalue9931",
    "DB_PASSWORD": "hunter2-long-pw!",
    "STRIPE_KEY": "sk_live_51HxYzAbCdEfGhIjKlMnOp",
}
PLAIN = "plain text without anything to escape " * 27_000
HALF = len(PLAIN) // 2
TEXTS = {
    "1 MB ASCII, no secret": PLAIN,
    "1 MB escapes and non-ASCII, no secret": (
        'text with "quotes", a \\ backslash, été and 日本 ' * 20 + "\n") * 900,
    "1 MB ASCII, one secret": PLAIN[:HALF] + SECRETS["GITHUB_TOKEN"] + PLAIN[HALF:],
    "1 MB ASCII, one secret one char a line": (
        PLAIN[:HALF] + "\n".join(SECRETS["GITHUB_TOKEN"]) + PLAIN[HALF:]),
    "200 B log line": "a short log line with nothing secret in it, just words 12345 " * 3,
}


def main() -> None:
    vault = Vault(dict(SECRETS))
    for label, text in TEXTS.items():
        cpu, wall = [], []
        for _ in range(RUNS):
            c, w = time.process_time(), time.perf_counter()
            vault.mask(text)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
        print(f"{label}: {statistics.median(cpu) * 1e3:.3f} ms CPU, "
              f"{statistics.median(wall) * 1e3:.3f} ms wall (median of {RUNS})")


if __name__ == "__main__":
    main()
