"""Another account's daemon on the machine: a listening Unix socket in a 0700
directory of its own under /var/tmp, as any local user's agent or server would have.

Run as root, :func:`start` makes one as ``nobody`` (a plain system interpreter, so it
needs no access to the checkout). ``tests/attacks-as-user`` starts one as root before
the attack suites run as an unprivileged user, and passes its socket's path in
:data:`ENV`: from that user's side, root is the other account.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ENV = "PASSEPARTOUT_TEST_OTHER_SOCKET"
NOBODY = 65534
# Another account cannot run the checkout's interpreter: the system's serves it.
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# Serves until SIGTERM, then removes its socket and directory.
SERVE = r"""
import os, signal, socket, sys, tempfile
top = tempfile.mkdtemp(prefix="pp-other-account-", dir="/var/tmp")
path = os.path.join(top, "daemon.sock")
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(16)
def stop(*_):
    os.unlink(path); os.rmdir(top); os._exit(0)
signal.signal(signal.SIGTERM, stop)
print(path, flush=True)
sys.stdout.close()
while True:
    conn, _ = server.accept()
    conn.close()
"""


@dataclass
class Listener:
    """A socket of another account, and the process that holds it."""

    socket: Path
    process: subprocess.Popen[str] | None

    def stop(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)


def start(uid: int | None = NOBODY) -> Listener:
    """A listener as ``uid`` (None: as this process), its path once it listens."""
    proc = subprocess.Popen(
        [PYTHON, "-I", "-S", "-c", SERVE],
        stdout=subprocess.PIPE,
        text=True,
        user=uid,
        group=uid,
        extra_groups=[] if uid is not None else None,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        start_new_session=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line:
        proc.kill()
        raise RuntimeError("the other account's listener did not start")
    return Listener(Path(line), proc)


def given() -> Listener | None:
    """The listener another process started for this run (see :data:`ENV`), if any."""
    path = os.environ.get(ENV)
    return Listener(Path(path), None) if path else None


if __name__ == "__main__":  # for tests/attacks-as-user: as this process's own user
    listener = start(None)
    print(listener.socket, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (listener.stop(), sys.exit(0)))
    signal.pause()
