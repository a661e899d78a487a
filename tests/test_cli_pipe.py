"""A command whose reader goes away (``passepartout memory snapshots | head``) ends
quietly with 141, as a shell tool does on SIGPIPE: no traceback for the person."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_a_closed_pipe_is_a_quiet_exit(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "PASSEPARTOUT_CONFIG_DIR": str(tmp_path / "config"),
           "PASSEPARTOUT_HOME": str(tmp_path / "home"), "MEMEX_DIR": str(tmp_path / "memex")}
    reader, writer = os.pipe()
    os.close(reader)  # gone before a byte is read
    done = subprocess.run([sys.executable, "-m", "passepartout", "hooks", "list"], env=env,
                          stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(writer)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141
