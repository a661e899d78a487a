"""The seccomp filter's program, run by a small classic-BPF interpreter for each arch."""

from __future__ import annotations

import errno
import struct

import pytest
from passepartout.security.sandbox.seccomp import ARCHES, program

ALLOW, ERRNO = 0x7FFF0000, 0x00050000


def run_filter(code: bytes, arch: int, nr: int) -> int:
    """What the kernel would answer for a call ``nr`` made through ``arch``."""
    data = struct.pack("=iI", nr, arch)
    insns = [struct.unpack("=HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = insns[pc]
        if op == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
        elif op == 0x15:  # jeq
            pc += jt if acc == k else jf
        elif op == 0x35:  # jge
            pc += jt if acc >= k else jf
        elif op == 0x06:  # ret
            return k
        else:
            raise AssertionError(f"unexpected instruction {op:#x}")
        pc += 1


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_refused_calls_fail_and_the_rest_pass(machine: str) -> None:
    arch = ARCHES[machine]
    code = program(machine)
    assert code is not None
    refused = set(arch.refused.values())
    for nr in range(0, 460):
        expected = ERRNO | errno.EPERM if nr in refused else ALLOW
        assert run_filter(code, arch.audit, nr) == expected, (machine, nr)
    other = next(a.audit for m, a in ARCHES.items() if m != machine)
    assert run_filter(code, other, 39) == ERRNO | errno.ENOSYS
    assert run_filter(code, 0x40000003, 39) == ERRNO | errno.ENOSYS  # i386
    if arch.x32:
        assert run_filter(code, arch.audit, 0x40000000 | 39) == ERRNO | errno.EPERM


def test_unknown_architecture_has_no_filter() -> None:
    assert program("mips") is None
