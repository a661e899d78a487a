"""litellm reads no .env of its own: in its default mode it loads the first one found
walking up from its package directory at import, which could point the person's key
at another server.  Only the environment and the config directory's .env count."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import dotenv
def refuse(*args, **kwargs):
    raise SystemExit("litellm loaded a .env at import")
dotenv.load_dotenv = refuse
import passepartout
import litellm
print("no .env loaded")
"""


def test_importing_litellm_after_passepartout_loads_no_dotenv() -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "no .env loaded"
