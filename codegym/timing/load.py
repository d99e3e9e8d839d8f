"""Concurrent load while a program runs: the signals a comparison rejects a pair on.

`HostLoad` reads what the kernel says about contention on this host (CPU pressure stall
time from /proc/pressure/cpu, hypervisor steal time from /proc/stat; either may be
absent), `preempted` what a run's own CPU and wall time say, and `SpikeFilter` decides
whether one pair of an interleaved comparison saw a load spike: a signal far above
what the same comparison's earlier pairs saw. docs/timing.md shows what rejecting helps.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass

from codegym.sandbox.server_sandbox import ServerSandbox
from codegym.sandbox.types import ExecResult, Sandbox

_PSI = "/proc/pressure/cpu"
_STAT = "/proc/stat"
#: clock ticks of /proc/stat
_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read_psi() -> float | None:
    """Seconds some task of this host (or cgroup) waited for a CPU, since boot (None: no PSI)."""
    try:
        with open(_PSI, encoding="ascii") as f:
            first = f.readline().split()
        return int(first[-1].partition("=")[2]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


def _read_steal() -> float | None:
    """Seconds of CPU time the hypervisor gave to others, summed over CPUs (None: unknown)."""
    try:
        with open(_STAT, encoding="ascii") as f:
            cpu = f.readline().split()
        return int(cpu[8]) / _HZ if cpu[0] == "cpu" and len(cpu) > 8 else None
    except (OSError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class HostLoad:
    """One reading of the host's load counters (see `read_host_load`, `since`)."""

    t: float
    psi_s: float | None
    steal_s: float | None

    def since(self, earlier: HostLoad) -> tuple[float | None, float | None]:
        """(fraction of the time in between some task waited for a CPU, fraction of one
        CPU's time stolen by the hypervisor); None where the host does not say."""
        dt = self.t - earlier.t
        if dt <= 0:
            return None, None
        p1, p0, s1, s0 = self.psi_s, earlier.psi_s, self.steal_s, earlier.steal_s
        psi = (p1 - p0) / dt if p1 is not None and p0 is not None else None
        cpus = os.cpu_count() or 1
        steal = (s1 - s0) / (dt * cpus) if s1 is not None and s0 is not None else None
        return psi, steal


def runs_here(sandbox: Sandbox) -> bool:
    """Whether `sandbox` runs its programs on this host (local, docker), so that this host's
    counters describe its runs (a remote backend's runs land on other machines)."""
    return isinstance(sandbox, ServerSandbox)


def read_host_load() -> HostLoad:
    """The host's load counters now (cheap: two small /proc reads)."""
    return HostLoad(time.monotonic(), _read_psi(), _read_steal())


def preempted(r: ExecResult) -> float:
    """Fraction of a run's wall time it did not spend on a CPU (0 for a run that never waited;
    more for a multi-threaded run can be negative, clipped at 0)."""
    if r.wall_s <= 0:
        return 0.0
    return max(0.0, (r.wall_s - r.cpu_s) / r.wall_s)


#: steal above this fraction of the CPUs' time during a pair rejects it outright
STEAL_SPIKE = 0.05
#: a pair's preemption or pressure counts as a spike when above the median of the earlier
#: pairs by this much and by SPIKE_MADS of their median absolute deviations
SPIKE_MARGIN = 0.2
SPIKE_MADS = 4.0
#: earlier pairs needed before a relative spike can be told
SPIKE_HISTORY = 4


@dataclass
class SpikeFilter:
    """Tells, pair by pair, whether a pair saw a load spike (then it is measured again).

    A spike is judged against the comparison's own history, so that a machine that is
    busy all the time (every run preempted) does not reject every pair: only a pair
    whose signals stand out from the earlier ones, or that lost time to the hypervisor.
    `max_rejects` bounds how many pairs may be rejected in all."""

    max_rejects: int = 8
    rejected: int = 0
    history: dict[str, list[float]] | None = None

    def check(self, signals: dict[str, float | None]) -> str | None:
        """The reason to reject a pair with `signals` (preempted, psi, steal), or None.
        The pair's signals join the history either way."""
        hist = self.history if self.history is not None else {}
        self.history = hist
        reason = None
        steal = signals.get("steal")
        if steal is not None and steal > STEAL_SPIKE:
            reason = f"steal {steal:.0%}"
        for name in ("preempted", "psi"):
            v = signals.get(name)
            if v is None:
                continue
            past = hist.setdefault(name, [])
            if reason is None and len(past) >= SPIKE_HISTORY:
                med = statistics.median(past)
                mad = statistics.median(abs(x - med) for x in past)
                if v > med + max(SPIKE_MARGIN, SPIKE_MADS * mad):
                    reason = f"{name} {v:.0%} (earlier pairs {med:.0%})"
            past.append(v)
        if reason is None or self.rejected >= self.max_rejects:
            return None
        self.rejected += 1
        return reason


