"""System calls a sandboxed command has no use for, refused by a seccomp filter.

The kernel keyrings are shared with the host even across a user namespace (a session
keyring can hold the person's mount or disk keys, and ``request_key`` makes the host
run ``/sbin/request-key``); eBPF, perf events, userfaultfd and io_uring are kernel
attack surface no shell command needs. The filter is a small classic-BPF program that
bubblewrap loads (``--seccomp FD``): those calls fail with EPERM, a call made through
another architecture's entry (32-bit ``int 0x80``, x32) fails with ENOSYS.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

_LD_ABS_W = 0x20
_JEQ = 0x15
_JGE = 0x35
_RET = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000


@dataclass(frozen=True)
class _Arch:
    audit: int
    refused: dict[str, int]
    x32: bool = False


_IO_URING = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
ARCHES = {
    "x86_64": _Arch(
        0xC000003E,
        {"add_key": 248, "request_key": 249, "keyctl": 250, "perf_event_open": 298,
         "bpf": 321, "userfaultfd": 323, **_IO_URING},
        x32=True,
    ),
    "aarch64": _Arch(
        0xC00000B7,
        {"add_key": 217, "request_key": 218, "keyctl": 219, "perf_event_open": 241,
         "bpf": 280, "userfaultfd": 282, **_IO_URING},
    ),
}


def refused_calls() -> tuple[str, ...]:
    """The calls refused on this machine, () when its architecture has no filter here."""
    arch = ARCHES.get(platform.machine())
    return tuple(sorted(arch.refused)) if arch else ()


def program(machine: str | None = None) -> bytes | None:
    """The filter as ``struct sock_filter`` records, or None for an unknown architecture."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    checks = sorted(arch.refused.values())
    # Instructions: arch check (3), load nr (1), x32 check (0/1), one per call, allow, deny.
    code: list[tuple[int, int, int, int]] = [
        (_LD_ABS_W, 0, 0, 4),
        (_JEQ, 1, 0, arch.audit),
        (_RET, 0, 0, _ERRNO | errno.ENOSYS),
        (_LD_ABS_W, 0, 0, 0),
    ]
    tests = ([(_JGE, _X32_BIT)] if arch.x32 else []) + [(_JEQ, nr) for nr in checks]
    for index, (op, value) in enumerate(tests):
        to_deny = len(tests) - index  # past the remaining tests and the allow
        code.append((op, to_deny, 0, value))
    code += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _ERRNO | errno.EPERM)]
    return b"".join(struct.pack("=HBBI", *ins) for ins in code)


def program_fd() -> int | None:
    """A file descriptor holding :func:`program` for bubblewrap, or None."""
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("passepartout-seccomp", 0)
    os.write(fd, code)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
