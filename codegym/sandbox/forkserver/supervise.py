"""Supervising one run: its output, wall clock and memory while it lives; killing and reaping after.

`Watch` is made before the fork (while the child lives, every page the server
writes is copied, ~2 us a page, so its buffers and pollers exist already) and
run after it.  The functions below kill and measure the processes of a slot.
"""

from __future__ import annotations

import fcntl
import os
import resource
import select
import signal
import time

from codegym.sandbox.forkserver.protocol import PIPE_SIZE, SMALL_READ

#: output pipe size from the start of every run (a big writer's pipe grows to PIPE_SIZE)
FIRST_PIPE_SIZE = 1 << 18
#: when the server first samples the program's total resident memory, and how often after
MEM_FIRST = 0.005
MEM_EVERY = 0.005
#: how long the server first waits for the program's exit alone (see `Watch.run`)
FIRST_WAIT = 0.002
PAGE = os.sysconf("SC_PAGE_SIZE")
F_SETPIPE_SZ = 1031


class Watch:
    """One running program seen from the server: its output pipes (capped at `cap`
    bytes each), its wall-clock deadline and, with ``lim["rss"]``, the total resident
    memory of its processes, sampled (RLIMIT_AS is per process and counts
    reservations; this is what the machine actually gives)."""

    def __init__(self, out_r: int, err_r: int, lim: dict, wall: float, cap: int):
        self.out_r, self.err_r, self.wall, self.cap = out_r, err_r, wall, cap
        self.bufs = {out_r: bytearray(), err_r: bytearray()}
        self.trunc = {out_r: False, err_r: False}
        self.killed: str | None = None
        self.status: int | None = None
        self.rusage: resource.struct_rusage | None = None
        self.pidfd: int | None = None
        self.poller = select.poll()
        for fd in (out_r, err_r):
            self.poller.register(fd, select.POLLIN)
        self.first = select.poll()
        self.grown: set[int] = set()
        self.rss_cap = lim.get("rss")
        self.peak = 0
        self.start = time.monotonic()
        self.end = self.start

    def run(self, pid: int, pid1: bool, kill_all: bool) -> None:
        """Supervise `pid` until it exits or is killed (for output, wall time or memory),
        then wait for its exit status and rusage."""
        poller, first, bufs, trunc, grown, cap = (self.poller, self.first, self.bufs, self.trunc,
                                                   self.grown, self.cap)
        rss_cap, wall = self.rss_cap, self.wall
        killed = status = rusage = None
        exited = False
        peak = 0
        deadline = self.start + wall
        next_mem = self.start + MEM_FIRST
        pidfd: int | None = None
        try:
            fd = os.pidfd_open(pid)
            poller.register(fd, select.POLLIN)
        except (OSError, AttributeError):
            pass
        else:
            pidfd = fd
            # Most programs end within FIRST_WAIT with their output in the pipes: a first
            # wait for the exit alone, then one drain, spares the wakeups on each write,
            # which come while the program lives and copy every page this process
            # touches (a writer that fills a pipe meanwhile waits at most FIRST_WAIT).
            first.register(fd, select.POLLIN)
            exited = bool(first.poll(max(1, int(min(FIRST_WAIT, wall) * 1000))))
        while not exited:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                killed = "wall"
                break
            if rss_cap is not None and now >= next_mem:
                rss, pids = tree_rss(pid1)
                wait = MEM_EVERY
                if rss > rss_cap:
                    # resident sizes count pages shared copy-on-write between forked
                    # processes once per process; the proportional size does not
                    rss = tree_pss(pids)
                    wait = max(MEM_EVERY, 4 * (time.monotonic() - now))
                peak = max(peak, rss)
                if rss > rss_cap:
                    killed = "memory"
                    break
                next_mem = now + wait
            timeout = left if pidfd is not None else min(left, 0.005)
            if rss_cap is not None:
                timeout = min(timeout, max(next_mem - now, 0.0005))
            for fd, _ev in poller.poll(max(1, int(timeout * 1000 + 0.999))):
                if fd == pidfd:
                    exited = True
                    continue
                data = os.read(fd, SMALL_READ)
                if len(data) == SMALL_READ and fd not in grown:
                    grown.add(fd)  # a big writer: fewer wakeups with a bigger pipe
                    try:
                        fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE)
                    except OSError:
                        pass
                if not data:
                    poller.unregister(fd)
                    continue
                b = bufs[fd]
                room = cap - len(b)
                if len(data) > room:
                    b += data[:max(room, 0)]
                    trunc[fd] = True
                    killed = "output"
                else:
                    b += data
            if killed:
                break
            if pidfd is None:
                wpid, st, ru = os.wait4(pid, os.WNOHANG)
                if wpid:
                    status, rusage, exited = st, ru, True
            if exited:
                break
        if status is None:
            if not exited:
                signal_all(pid, kill_all)
            _, status, rusage = os.wait4(pid, 0)
        self.end = time.monotonic()
        self.killed, self.status, self.rusage, self.peak, self.pidfd = killed, status, rusage, peak, pidfd

    def drain_pipes(self) -> None:
        """Read what is left in the output pipes (every writer is dead by now)."""
        for fd in (self.out_r, self.err_r):
            if drain(fd, self.bufs[fd], self.cap):
                self.trunc[fd] = True
                if self.killed is None:
                    self.killed = "output"

    def close(self) -> None:
        for fd in (self.out_r, self.err_r) + ((self.pidfd,) if self.pidfd is not None else ()):
            os.close(fd)

    def facts(self, other_cpu: float, other_rss: int, exec_error: str | None) -> dict:
        """The answer's raw facts; `other_*`: the run's other processes (`kill_everything`)."""
        status, rusage = self.status, self.rusage
        assert status is not None and rusage is not None  # (after `run`)
        return {
            "op": "result",
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "cpu_s": rusage.ru_utime + rusage.ru_stime + other_cpu,
            "wall_s": self.end - self.start,
            "maxrss_kb": max(rusage.ru_maxrss, other_rss, self.peak // 1024),
            "killed": self.killed,
            "out_trunc": self.trunc[self.out_r],
            "err_trunc": self.trunc[self.err_r],
            "exec_error": exec_error,
        }

    def outputs(self) -> list[bytes]:
        return [bytes(self.bufs[self.out_r]), bytes(self.bufs[self.err_r])]


def drain(fd: int, buf: bytearray, cap: int) -> bool:
    """Read what is left in a pipe whose writers are gone; True if it overflowed the cap."""
    os.set_blocking(fd, False)
    while True:
        try:
            data = os.read(fd, SMALL_READ)
        except BlockingIOError:
            return False
        if not data:
            return False
        room = cap - len(buf)
        if len(data) > room:
            buf += data[:max(room, 0)]
            return True
        buf += data


def signal_all(pid: int, kill_all: bool) -> None:
    """SIGKILL every process of the slot (`kill_all`), else `pid` and its process group."""
    if kill_all:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    else:
        kill_group(pid)


def kill_group(pid: int) -> None:
    """SIGKILL the process group `pid` leads, and `pid` itself (it may have left the group)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def tree_pss(pids: list[int]) -> int:
    """Proportional resident bytes of `pids` (exact, but costs a page-table walk)."""
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup", "rb") as f:
                for line in f:
                    if line.startswith(b"Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except (OSError, ValueError, IndexError):
            try:
                with open(f"/proc/{p}/statm", "rb") as f:
                    total += int(f.read().split()[1]) * PAGE
            except (OSError, ValueError, IndexError):
                pass
    return total


def tree_rss(pid1: bool) -> tuple[int, list[int]]:
    """Resident bytes of every process of the slot but this one, and their pids."""
    total = 0
    if pid1:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit() and d != "1"]
    else:
        pids, seen, stack = [], set(), children()
        while stack:  # the program's tree (orphans come back to us as subreaper)
            p = stack.pop()
            if p in seen:
                continue
            seen.add(p)
            pids.append(p)
            try:
                for tid in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                        stack.extend(int(x) for x in f.read().split())
            except (OSError, ValueError):
                pass
    for p in pids:
        try:
            with open(f"/proc/{p}/statm", "rb") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            pass
    return total, pids


def children() -> list[int]:
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def kill_everything(pid1: bool, kill_all: bool) -> tuple[float, int]:
    """Kill and reap every process of the slot except this one; returns the CPU
    seconds (user + system, their reaped descendants included) and the largest
    max RSS (KiB) of the processes reaped."""
    cpu, rss = 0.0, 0

    def reaped(ru) -> None:
        nonlocal cpu, rss
        cpu += ru.ru_utime + ru.ru_stime
        rss = max(rss, ru.ru_maxrss)
    if pid1:
        # every process of the namespace descends from PID 1: no child left (the
        # program reaped, nothing else started) means nothing to kill -- the common
        # case, spared the kill(-1) scan of every task of the machine
        try:
            pid, _, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return cpu, rss
        if pid:
            reaped(ru)
    if kill_all:
        while True:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
            try:
                reaped(os.wait4(-1, 0)[2])
            except ChildProcessError:
                return cpu, rss
            except InterruptedError:
                continue
    # shared uid (rlimits mode without root): we are a subreaper, so every
    # orphan of the program is our child; kill children until none is left
    for _ in range(10000):
        kids = children()
        if not kids:
            break
        for k in kids:
            kill_group(k)
        for k in kids:
            try:
                reaped(os.wait4(k, 0)[2])
            except ChildProcessError:
                pass
    while True:
        try:
            pid, _, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        reaped(ru)
    return cpu, rss
