"""The speed probe: a short fixed program run alongside a measurement to track the machine's speed.

A shared machine's speed drifts by several percent over seconds to minutes (other
tenants, frequency, the hypervisor). `measure` runs the probe once per pass over the
inputs and divides each sample by the machine's current speed: the probe's time then
over its reference time in this sandbox (`reference`, taken once per process together
with the calibration workload, so a drift-corrected median is also in calibration units).
The probe is native (C) where the sandbox can compile it, else the calibration workload.
`slowness_now` is one reading of the machine's speed, `SpeedTrack` its reading over
consecutive passes. docs/timing.md shows the data for it.
"""

from __future__ import annotations

import collections
import os
import statistics
import threading
import weakref
from dataclasses import dataclass, field

from codegym.core.limits import Limits
from codegym.sandbox.types import Build, Sandbox
from codegym.timing.calibration import calibration_workload
from codegym.timing.load import runs_here

#: probe runs of one reading of the machine's speed (their median)
SPEED_PROBES = 3
#: readings a `SpeedTrack` takes the median over (the last ones)
TRACK_READINGS = 4

#: a mix of integer work, branches and table accesses that stay in the L2 cache; not the
#: shape of any program in particular (the benchmarks time other programs with it)
PROBE_SOURCE = r"""/* codegym speed probe */
#include <stdio.h>
#include <stdint.h>
static uint32_t table[1 << 14];
int main(void) {
    long n = 0;
    if (scanf("%ld", &n) != 1) return 1;
    uint64_t x = 88172645463325252ull, acc = 0;
    for (long i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        uint32_t k = (uint32_t)x & ((1u << 14) - 1);
        table[k] += (uint32_t)i;
        if (table[(k * 2654435761u) & ((1u << 14) - 1)] % 7 == 3) acc += x >> 3;
        else acc ^= x & 1023;
    }
    printf("%llu\n", (unsigned long long)acc);
    return 0;
}
"""
#: iterations of the probe: ~10 ms of CPU on a 2020s server core
PROBE_N = 1_500_000
#: reference: this many interleaved (probe, calibration) samples, each the minimum of REFERENCE_MIN_OF runs
REFERENCE_SAMPLES = 5
REFERENCE_MIN_OF = 3
#: samples on each side whose probe times are pooled to estimate the speed at one sample
SMOOTH = 2


def probe_applies(sandbox: Sandbox, metric: str) -> bool:
    """Whether `probe="auto"` probes: a time metric, in a sandbox whose runs all happen on
    this host (a remote backend's runs land on other machines than its probe's)."""
    return metric in ("cpu", "wall") and runs_here(sandbox)


@dataclass
class _ProbeState:
    pid: int
    build: Build | None = None
    cal_build: Build | None = None
    stdin: str = ""
    reference: dict[str, tuple[float, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_STATE: weakref.WeakKeyDictionary[Sandbox, _ProbeState] = weakref.WeakKeyDictionary()
_STATE_LOCK = threading.Lock()


def _state(sandbox: Sandbox) -> _ProbeState:
    with _STATE_LOCK:
        st = _STATE.get(sandbox)
        if st is None or st.pid != os.getpid():  # a forked child probes for itself
            st = _STATE[sandbox] = _ProbeState(pid=os.getpid())
        return st


def _builds(sandbox: Sandbox, st: _ProbeState) -> None:
    if st.cal_build is not None:
        return
    cal = sandbox.build("python", {"main.py": calibration_workload()})
    if not cal.ok:
        raise RuntimeError("calibration workload did not build: "
                           + (cal.result.message if cal.result else "unknown error"))
    try:
        native = sandbox.build("c", {"main.c": PROBE_SOURCE})
    except Exception:  # noqa: BLE001 -- no C toolchain: the calibration workload probes
        native = None
    if native is not None and native.ok:
        st.build, st.stdin = native, f"{PROBE_N}\n"
    else:
        st.build, st.stdin = cal, ""
    st.cal_build = cal


def _time(sandbox: Sandbox, build: Build, stdin: str, metric: str) -> float:
    r = sandbox.run(build, stdin=stdin, limits=Limits(time_s=10, memory_mb=256))
    if r.status != "ok":
        raise RuntimeError(f"speed probe ended {r.status}: {r.message or r.stderr[-200:]}")
    return r.wall_s if metric == "wall" else r.cpu_s


def probe_run(sandbox: Sandbox, metric: str = "cpu") -> float:
    """Seconds (`metric` cpu or wall) of one run of the probe in `sandbox`; RuntimeError if it fails."""
    st = _state(sandbox)
    with st.lock:
        _builds(sandbox, st)
    assert st.build is not None
    return _time(sandbox, st.build, st.stdin, metric)


def reference(sandbox: Sandbox, metric: str = "cpu") -> tuple[float, float]:
    """(probe seconds, calibration-workload seconds) at this sandbox's reference speed.

    Taken once per process, sandbox and metric: REFERENCE_SAMPLES interleaved samples of
    each (minimum of REFERENCE_MIN_OF runs), their medians. A measurement's samples divided
    by the speed its probe saw (probe time / the reference probe time) are in seconds at
    that reference speed; divided by the reference calibration, in calibration units."""
    cm = "wall" if metric == "wall" else "cpu"
    st = _state(sandbox)
    with st.lock:
        ref = st.reference.get(cm)
        if ref is not None:
            return ref
        _builds(sandbox, st)
        assert st.build is not None and st.cal_build is not None
        _time(sandbox, st.build, st.stdin, cm)  # warm-ups
        _time(sandbox, st.cal_build, "", cm)
        ps, cs = [], []
        for _ in range(REFERENCE_SAMPLES):
            ps.append(min(_time(sandbox, st.build, st.stdin, cm) for _ in range(REFERENCE_MIN_OF)))
            cs.append(min(_time(sandbox, st.cal_build, "", cm) for _ in range(REFERENCE_MIN_OF)))
        ref = st.reference[cm] = (float(statistics.median(ps)), float(statistics.median(cs)))
        return ref


def speeds(probes: list[float], probe_ref: float, smooth: int = SMOOTH) -> list[float]:
    """The machine's slowness at each sample (1: its reference speed, 1.05: 5 % slower): the
    median probe time of the sample and its `smooth` neighbours each side, over `probe_ref`.
    (The drift is slow next to one sample, the probe's own noise is not: pooling helps.)"""
    out = []
    for i in range(len(probes)):
        window = probes[max(0, i - smooth): i + smooth + 1]
        out.append(float(statistics.median(window)) / probe_ref)
    return out


def probe_slowness(sandbox: Sandbox, metric: str, runs: int = SPEED_PROBES) -> list[float]:
    """`runs` probe runs now, each over the probe's reference (the machine's slowness per
    run); empty where the probe does not apply (instruction counts, a remote backend) or fails."""
    if not probe_applies(sandbox, metric):
        return []
    try:
        ref = reference(sandbox, metric)[0]
        return [probe_run(sandbox, metric) / ref for _ in range(max(1, runs))]
    except Exception:  # noqa: BLE001 -- a broken probe: the caller goes on uncorrected
        return []


def slowness_now(sandbox: Sandbox, metric: str, runs: int = SPEED_PROBES) -> float | None:
    """The machine's slowness now (1: the sandbox's reference speed; 1.05: 5 % slower):
    the median of `runs` probe runs over the probe's reference. None where the probe does
    not apply (instruction counts, a remote backend) or fails."""
    xs = probe_slowness(sandbox, metric, runs)
    return float(statistics.median(xs)) if xs else None


class SpeedTrack:
    """The machine's slowness over a run of consecutive passes (a reward's looks, a kept
    baseline's passes): one reading of `runs` probe runs before the first pass and one
    after each pass, the slowness of a pass the median of the runs of the last `window`
    readings (the one right after it included).

    One reading right after a pass is a poor correction on a machine that is not drifting
    (benchmarks: passes' spread 1-3 % raw, up to 7 % so corrected): the first probe runs
    after a pass read 3-19 % slow (what the pass leaves behind), and a burst of another
    tenant moves an ~8 ms probe run more than a pass of a second. The window's median
    spreads as little as the raw passes, quiet or with a bursty neighbour, and still
    follows a drift that lasts longer than a few passes (docs/timing.md, "Drift")."""

    def __init__(self, sandbox: Sandbox, metric: str, runs: int = SPEED_PROBES, window: int = TRACK_READINGS):
        self.sandbox, self.metric, self.runs = sandbox, metric, runs
        self.readings: collections.deque[list[float]] = collections.deque(maxlen=max(1, window))

    def _median(self) -> float | None:
        runs = [x for r in self.readings for x in r]
        return float(statistics.median(runs)) if runs else None

    def start(self) -> float | None:
        """The slowness before the first pass (read now when nothing is read yet)."""
        if not self.readings:
            self._read()
        return self._median()

    def after(self) -> float | None:
        """The slowness of the pass that just ended: one more reading, and the median of the window's runs."""
        self.start()
        self._read()
        return self._median()

    def _read(self) -> None:
        runs = probe_slowness(self.sandbox, self.metric, self.runs)
        if runs:  # (a failed reading pushes no good one out of the window)
            self.readings.append(runs)
