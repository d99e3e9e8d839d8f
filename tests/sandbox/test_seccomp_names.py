"""The fork server's seccomp filter is written with syscall names (`SYSCALL_NUMBERS`), and
the numbers are the kernel's: checked against the installed headers where they are, and
the filter's bytes against the filter the bare numbers made (behaviour unchanged)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from codegym.sandbox.forkserver.confine import (
    AUDIT_ARCH,
    GUARD_REFUSED,
    GUARDED,
    SECCOMP_BLOCKED,
    SYSCALL_NUMBERS,
    _seccomp_program,
)

#: sha256 of the filter as the bare-number tables made it (main at 165aa6d), by
#: (machine, guard pid): the named tables must give the same program, byte for byte
GOLDEN = {
    ("x86_64", None): "dc29fc3f0931cdc6e007b7edf6b5dba94043e4c544d917ad2737371ab26b1328",
    ("x86_64", 4242): "daaca4e16b726d948279322d66ce68e304476f7ee0a96a6808cd87b5cc75d971",
    ("x86_64", 1): "10b9dc70258390c1af104ce99f72c3467a1d1aa5a0335f81c8a4121e276306b5",
    ("aarch64", None): "15df2e8e91fc06a3fe06dbba32c5b3b0e91d6745187f51821f31a8dbbcea4b1a",
    ("aarch64", 4242): "da7b6d8c6f045153637082c730a92ae5716ab2e6387d14364673382a2cfb33dc",
    ("aarch64", 1): "3ace36963bea08a99fde92923f723faa95182fdb16b9a4255dfc8a5795634db5",
}

#: where the kernel's headers give each architecture's numbers (Debian's linux-libc-dev)
HEADERS = {"x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
           "aarch64": "/usr/include/asm-generic/unistd.h"}


@pytest.mark.parametrize(("machine", "guard"), sorted(GOLDEN, key=str))
def test_the_named_tables_make_the_same_filter(machine: str, guard: int | None) -> None:
    prog = _seccomp_program(machine, guard)
    assert prog is not None and hashlib.sha256(prog).hexdigest() == GOLDEN[(machine, guard)]


def test_every_architecture_names_every_syscall_the_filter_uses() -> None:
    used = {n for n, _ in SECCOMP_BLOCKED} | {n for n, _ in GUARDED} | set(GUARD_REFUSED) | {"close_range"}
    assert set(SYSCALL_NUMBERS) == set(AUDIT_ARCH) >= {"x86_64", "aarch64"}
    for machine, nrs in SYSCALL_NUMBERS.items():
        assert used <= set(nrs), (machine, used - set(nrs))
        assert len(set(nrs.values())) == len(nrs), f"{machine}: two names share a number"
    assert _seccomp_program("riscv64") is None  # an architecture without a table: no filter


@pytest.mark.parametrize("machine", sorted(HEADERS))
def test_the_numbers_are_the_kernel_headers(machine: str) -> None:
    path = Path(HEADERS[machine])
    if not path.is_file():
        pytest.skip(f"{path} is not installed (Debian: linux-libc-dev)")
    text = path.read_text()
    for name, nr in SYSCALL_NUMBERS[machine].items():
        m = re.search(rf"^#define __NR(?:3264)?_{name}\s+(\d+)\s*$", text, re.M)
        assert m is not None, f"{name} not in {path}"
        assert int(m.group(1)) == nr, f"{machine} {name}: {nr} here, {m.group(1)} in {path}"
