"""Abstract Unix sockets for a command that was granted the network: Landlock scoping.

Abstract sockets (``@/tmp/.X11-unix/X0``, some D-Bus and container daemons) have no
file to mask; they belong to a network namespace. A command without the network gets
its own namespace and sees none; a command granted the network shares the host's, so
it runs under a Landlock domain scoped against abstract sockets and signals outside
it (Linux 6.12+, Landlock ABI 6). :data:`LAUNCHER` sets that domain up inside the
sandbox and then executes the command; if it cannot, the command does not run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os

log = logging.getLogger(__name__)

SCOPE_ABI = 6  # LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET and LANDLOCK_SCOPE_SIGNAL
FAILED = "passepartout-sandbox: "
FAILED_CODE = 125
_CREATE_RULESET = 444  # the same syscall numbers on every architecture
_VERSION_FLAG = 1

# Run by the agent's own interpreter (-I -S: nothing from the environment or site).
LAUNCHER = f"""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def fail(what):
    sys.stderr.write("{FAILED}cannot scope abstract sockets (" + what + ": "
                     + os.strerror(ctypes.get_errno()) + "); not run\\n")
    sys.exit({FAILED_CODE})
attr = ctypes.create_string_buffer(struct.pack("QQQ", 0, 0, 3))
fd = libc.syscall({_CREATE_RULESET}, attr, 24, 0)
if fd < 0:
    fail("landlock_create_ruleset")
if libc.prctl(38, 1, 0, 0, 0) != 0:
    fail("no_new_privs")
if libc.syscall({_CREATE_RULESET + 2}, fd, 0) != 0:
    fail("landlock_restrict_self")
os.close(fd)
os.execvp(sys.argv[1], sys.argv[1:])
"""


@functools.cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        version = int(libc.syscall(_CREATE_RULESET, None, 0, _VERSION_FLAG))
    except (OSError, AttributeError) as exc:
        log.debug("no Landlock: %s", exc)
        return 0
    return max(version, 0)


def launcher_argv(python: str) -> list[str]:
    """The words before the command that scope it, or [] when this kernel cannot."""
    if landlock_abi() < SCOPE_ABI or not python or not os.path.isfile(python):
        return []
    return [python, "-I", "-S", "-c", LAUNCHER]
