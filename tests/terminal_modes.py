"""The two ways ``passepartout chat`` runs, for suites that check both: attached to the
daemon (the default; the chat starts one, stopped at the end) and ``--standalone``."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

MODES = ("attached", "standalone")


@contextmanager
def chat_mode(mode: str, env: dict[str, str]) -> Iterator[list[str]]:
    """The arguments of ``passepartout chat`` for ``mode``.  Attached, the daemon the
    chat starts gets a runtime directory of its own (a socket path stays short) and is
    stopped afterwards."""
    if mode == "standalone":
        yield ["--standalone"]
        return
    runtime = tempfile.mkdtemp(prefix="ppc-", dir="/tmp")
    env["XDG_RUNTIME_DIR"] = runtime
    try:
        yield []
    finally:
        subprocess.run([sys.executable, "-m", "passepartout", "stop"], env=env,
                       capture_output=True, timeout=60, check=False)
        shutil.rmtree(runtime, ignore_errors=True)
