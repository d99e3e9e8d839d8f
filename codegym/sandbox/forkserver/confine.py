"""What confines a forked program besides the namespaces: prctl, the seccomp filter, rlimits.

The server prepares each piece once (the filter program, the rlimit plan of a
request, libc's prctl as one ctypes function) so that a forked child only
applies them: every page a child writes is a copy-on-write copy.
"""

from __future__ import annotations

import os
import resource
import struct
import sys

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

_prctl_fn = None


def libc_prctl():
    """libc's prctl as one typed ctypes function (no errno swapping), made once in the
    server and shared by every caller: each ctypes object a child touches is a page copy."""
    global _prctl_fn
    if _prctl_fn is None:
        import ctypes  # noqa: PLC0415
        fn = ctypes.CDLL(None).prctl
        fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        fn.restype = ctypes.c_int
        _prctl_fn = fn
    return _prctl_fn


_close_range_fn = None
_close_range_nr = 0


def prepare_close_range() -> None:
    """Python 3.9 (the bullseye root's) closes descriptors one at a time in os.closerange:
    65,536 system calls in every forked child, ~30 ms.  There, close_range(2) (Linux 5.9)
    through libc's syscall() is prepared once in the server, if the kernel has it; later
    Pythons (built with glibc >= 2.34) already make os.closerange that one call."""
    global _close_range_fn, _close_range_nr
    if sys.version_info >= (3, 10):
        return
    import platform  # noqa: PLC0415
    nr = SYSCALL_NUMBERS.get(platform.machine(), {}).get("close_range")
    if nr is None:
        return
    try:
        import ctypes  # noqa: PLC0415
        fn = ctypes.CDLL(None).syscall
        fn.argtypes = [ctypes.c_long, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]
        fn.restype = ctypes.c_int
        if fn(nr, 0x7FFFFFF0, 0x7FFFFFFF, 0) == 0:  # close_range on no open descriptor: supported
            _close_range_fn, _close_range_nr = fn, nr
    except Exception:
        pass


def close_fds(low: int, high: int) -> None:
    """Close the descriptors low .. high - 1 (os.closerange's contract), in one system call
    where `prepare_close_range` found one."""
    if high <= low:
        return
    if _close_range_fn is None or _close_range_fn(_close_range_nr, low, high - 1, 0) != 0:
        os.closerange(low, high)


def prctl(option: int, value: int) -> None:
    try:
        libc_prctl()(option, value, 0, 0, 0)
    except Exception:  # not fatal: the namespace is the main barrier
        pass


#: system call numbers by architecture, as the kernel's headers give them
#: (x86_64: asm/unistd_64.h; aarch64: asm-generic/unistd.h); only the ones named here
SYSCALL_NUMBERS = {
    "x86_64": {
        "shmget": 29, "kill": 62, "semget": 64, "msgget": 68, "rt_sigqueueinfo": 129, "tkill": 200,
        "tgkill": 234, "mq_open": 240, "add_key": 248, "request_key": 249, "keyctl": 250,
        "rt_tgsigqueueinfo": 297, "prlimit64": 302, "memfd_create": 319, "bpf": 321, "userfaultfd": 323,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "pidfd_open": 434, "close_range": 436,
    },
    "aarch64": {
        "mq_open": 180, "msgget": 186, "semget": 190, "shmget": 194, "add_key": 217, "request_key": 218,
        "keyctl": 219, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240, "prlimit64": 261, "memfd_create": 279, "bpf": 280, "userfaultfd": 282,
        "pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "pidfd_open": 434, "close_range": 436,
    },
}
#: the AUDIT_ARCH_* value seccomp sees in seccomp_data.arch (linux/audit.h)
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
#: x86_64's x32 ABI: syscall numbers with this bit set (asm/unistd.h __X32_SYSCALL_BIT)
X32_SYSCALL_BIT = 0x40000000
EPERM = 1
ENOSYS = 38

#: syscalls a program must not use, and the errno it gets: kernel objects that outlive the
#: program's processes (keyrings, System V IPC, POSIX message queues) would let one
#: execution leave state for the next; io_uring, bpf and userfaultfd are attack surface;
#: memfd_create (ENOSYS, so runtimes fall back) makes memory that no process maps, so
#: neither the address-space limit nor the resident-memory sampling would see it
SECCOMP_BLOCKED = (
    ("add_key", EPERM), ("request_key", EPERM), ("keyctl", EPERM), ("shmget", EPERM), ("semget", EPERM),
    ("msgget", EPERM), ("mq_open", EPERM), ("bpf", EPERM), ("userfaultfd", EPERM),
    ("io_uring_setup", ENOSYS), ("io_uring_enter", ENOSYS), ("io_uring_register", ENOSYS),
    ("memfd_create", ENOSYS),
)

#: the server's guard: syscalls that could kill or cripple the server (`guard_pid`) from a
#: program of its own uid (the rlimits mode): signals to it, to its process group or to
#: every process (-1), its resource limits (what arg 0 may not be: "pid" also covers the
#: group and -1); tkill and pidfd_send_signal (a thread or /proc directory of the server)
#: are refused outright. Inside a namespace the server is PID 1 and the kernel already
#: drops such signals.
GUARDED = (("kill", "pid"), ("rt_sigqueueinfo", "pid"), ("tgkill", "tgid"), ("rt_tgsigqueueinfo", "tgid"),
           ("prlimit64", "tgid"), ("pidfd_open", "tgid"))
GUARD_REFUSED = ("tkill", "pidfd_send_signal")


def _seccomp_program(machine: str, guard_pid: int | None = None) -> bytes | None:
    """A classic-BPF seccomp filter: EPERM (ENOSYS for io_uring) for the blocked
    syscalls, EPERM for every syscall of a foreign ABI (int 0x80, x32), EPERM for a
    signal or an rlimit aimed at `guard_pid` (the server, see GUARDED), else allow."""
    nrs = SYSCALL_NUMBERS.get(machine)
    if nrs is None:
        return None
    arch, x32 = AUDIT_ARCH[machine], (X32_SYSCALL_BIT if machine == "x86_64" else None)
    block = {nrs[name]: err for name, err in SECCOMP_BLOCKED}
    rules: dict = {}
    if guard_pid is not None:
        rules = {nrs[name]: what for name, what in GUARDED}
        block.update({nrs[name]: EPERM for name in GUARD_REFUSED})
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, errno_ = 0x7FFF0000, 0x00050000
    body: list[tuple] = [(ld, 0, 0, 4), ("jeq_arch",), (ld, 0, 0, 0)]
    if x32 is not None:
        body.append(("jge", x32, "eperm"))
    for nr, err in block.items():
        body.append(("jeq", nr, "eperm" if err == EPERM else "enosys"))
    for nr, kind in rules.items():
        assert guard_pid is not None  # (rules only with a guard)
        bad = [guard_pid]
        if kind == "pid":  # the server, its process group, every process
            bad += [(-guard_pid) & 0xFFFFFFFF, 0xFFFFFFFF]
        # nr != this one: skip the check (the load, the comparisons, the allow)
        body.append(("skip", nr, len(bad) + 2))
        body.append((ld, 0, 0, 16))  # the low 32 bits of arg 0 (a pid_t)
        body += [("jeq", v, "eperm") for v in bad]
        body.append((ret, 0, 0, allow))
    body.append((ret, 0, 0, allow))
    labels = {"eperm": len(body), "enosys": len(body) + 1}
    body += [(ret, 0, 0, errno_ | EPERM), (ret, 0, 0, errno_ | ENOSYS)]
    out = []
    for i, ins in enumerate(body):
        if ins[0] == "jeq_arch":
            ins = (jeq, 0, labels["eperm"] - (i + 1), arch)
        elif ins[0] == "skip":
            ins = (jeq, 0, ins[2], ins[1])
        elif ins[0] in ("jeq", "jge"):
            ins = (jeq if ins[0] == "jeq" else jge, labels[ins[2]] - (i + 1), 0, ins[1])
        out.append(struct.pack("=HBBI", *ins))
    return b"".join(out)


class SeccompFilter:
    """The programs' filter (`_seccomp_program`), prepared once in the server and applied
    in every forked child before the program runs. The server itself stays unfiltered:
    it makes each run's stdin memfd, which programs may not."""

    def __init__(self, prog: bytes):
        import ctypes  # noqa: PLC0415

        class FProg(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
        self._buf = ctypes.create_string_buffer(prog)
        self._fprog = FProg(len(prog) // 8, ctypes.addressof(self._buf))
        self._addr = ctypes.addressof(self._fprog)
        self._prctl = libc_prctl()

    def apply(self) -> bool:
        """Filter this process (a forked child) and everything it starts."""
        return self._prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._addr, 0, 0) == 0


def prepare_seccomp(guard_pid: int | None = None) -> SeccompFilter | None:
    """The filter for this machine, None when it cannot be applied here; with
    `guard_pid`, programs cannot signal that process (the server: see GUARDED). Sets
    no_new_privs on this process (inherited by every child; required by the filter),
    and applies the filter once in a throwaway child to know it works."""
    import platform  # noqa: PLC0415
    prog = _seccomp_program(platform.machine(), guard_pid)
    if prog is None:
        return None
    if libc_prctl()(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return None
    flt = SeccompFilter(prog)
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if flt.apply() and os.getpid() > 0 else 1)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return flt if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None


_HARD: dict[int, int] = {}


def rlimit_plan(lim: dict) -> list[tuple[int, tuple[int, int]]]:
    """setrlimit calls for one execution, computed in the server (the child only applies them)."""
    R = resource
    # no core files; no POSIX message queues (they would outlive the program)
    plan = [(R.RLIMIT_CORE, (0, 0)), (R.RLIMIT_MSGQUEUE, (0, 0))]
    cpu = lim.get("cpu")
    if cpu is not None:
        # soft limit sends SIGXCPU, hard limit one second later SIGKILL
        plan.append((R.RLIMIT_CPU, (int(cpu), int(cpu) + 1)))
    for which, key in ((R.RLIMIT_FSIZE, "fsize"), (R.RLIMIT_STACK, "stack"), (R.RLIMIT_NOFILE, "nofile"),
                       (R.RLIMIT_NPROC, "nproc"), (R.RLIMIT_AS, "as")):
        v = lim.get(key)
        if v is None:
            continue
        v = int(v)
        hard = _HARD.get(which)
        if hard is None:
            hard = _HARD[which] = R.getrlimit(which)[1]  # the server's hard limits never change
        if hard != R.RLIM_INFINITY and v > hard:
            v = hard
        plan.append((which, (v, v)))
    return plan


def apply_rlimits(plan: list) -> None:
    for which, value in plan:
        try:
            resource.setrlimit(which, value)
        except (ValueError, OSError):
            pass
