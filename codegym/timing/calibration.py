"""The calibration workload: a fixed Python program timed in the same sandbox.

`calibration_workload` is its source; `calibration_factor` the seconds it takes in a
sandbox (median of a window of recent samples, cached per process, sandbox and metric),
so measurements normalise across machines (``normalized = median / calibration``).
`sample_calibration` / `calibration_after` are the sample `measure` and `compare` take
before and after each measurement.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import weakref
from dataclasses import dataclass, field

from codegym.core.limits import Limits
from codegym.sandbox.types import Build, Sandbox

#: calibration samples kept per sandbox and metric (the median of these is reported)
CALIBRATION_WINDOW = 9
#: runs per calibration sample (minimum over them, like `measure`'s min_of)
CALIBRATION_MIN_OF = 3
#: a measurement takes a fresh calibration sample only if the newest is older than this,
#: which bounds the overhead of calibration to a few percent under continuous use
CALIBRATION_REFRESH_S = 5.0


_CALIBRATION_SOURCE = '''\
"""codegym calibration workload: fixed CPU-bound work (integers, lists, dicts, strings)."""
def work(n):
    sieve = bytearray([1]) * (n + 1)
    sieve[0:2] = b"\\0\\0"
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytes(len(range(i * i, n + 1, i)))
    primes = [i for i in range(n + 1) if sieve[i]]
    counts = {}
    for p in primes:
        k = str(p)[-2:]
        counts[k] = counts.get(k, 0) + 1
    acc = 0
    for i in range(n // 2):
        acc = (acc * 31 + i) % 1000003
    words = sorted(str(i * 7919 % 10007) for i in range(n // 8))
    return len(primes), len(counts), acc, words[len(words) // 2]
print(work(%d))
'''

#: size of the calibration work; ~30 ms of CPU on a 2020s server core
CALIBRATION_N = 250_000


def calibration_workload() -> str:
    """Source of the fixed Python program used to calibrate a sandbox (~20-50 ms of CPU)."""
    return _CALIBRATION_SOURCE.replace("%d", str(CALIBRATION_N))


@dataclass
class _CalState:
    pid: int
    build: Build | None = None
    samples: list[float] = field(default_factory=list)
    stamps: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


_CAL: weakref.WeakKeyDictionary[Sandbox, dict[str, _CalState]] = weakref.WeakKeyDictionary()
_CAL_LOCK = threading.Lock()


def _cal_state(sandbox: Sandbox, metric: str) -> _CalState:
    with _CAL_LOCK:
        per = _CAL.setdefault(sandbox, {})
        st = per.get(metric)
        if st is None or st.pid != os.getpid():  # a forked child measures for itself
            st = per[metric] = _CalState(pid=os.getpid())
        return st


def _cal_metric(metric: str) -> str:
    return "wall" if metric == "wall" else "cpu"


def _calibration_run(sandbox: Sandbox, st: _CalState, metric: str) -> float:
    if st.build is None:
        b = sandbox.build("python", {"main.py": calibration_workload()})
        if not b.ok:
            raise RuntimeError("calibration workload did not build: "
                               + (b.result.message if b.result else "unknown error"))
        st.build = b
    r = sandbox.run(st.build, limits=Limits(time_s=10, memory_mb=512))
    if r.status != "ok":
        raise RuntimeError(f"calibration workload ended {r.status}: {r.message or r.stderr[-200:]}")
    return r.wall_s if metric == "wall" else r.cpu_s


def _add_calibration_sample(sandbox: Sandbox, st: _CalState, metric: str) -> None:
    """One calibration sample (min of CALIBRATION_MIN_OF runs, like a measurement's samples)."""
    v = min(_calibration_run(sandbox, st, metric) for _ in range(CALIBRATION_MIN_OF))
    st.samples.append(v)
    st.stamps.append(time.monotonic())
    del st.samples[:-CALIBRATION_WINDOW], st.stamps[:-CALIBRATION_WINDOW]


def _calibrate_sample(sandbox: Sandbox, metric: str) -> None:
    """Add a fresh calibration sample unless the newest is younger than CALIBRATION_REFRESH_S."""
    cm = _cal_metric(metric)
    st = _cal_state(sandbox, cm)
    with st.lock:
        if st.stamps and time.monotonic() - st.stamps[-1] < CALIBRATION_REFRESH_S:
            return
        _add_calibration_sample(sandbox, st, cm)


def calibration_factor(sandbox: Sandbox, metric: str = "cpu", refresh: bool = False) -> float:
    """Seconds the calibration workload takes in `sandbox` (median of recent samples).

    Cached per process and sandbox: the first call runs a warm-up and five
    samples (each the minimum of CALIBRATION_MIN_OF runs, as in `measure`).
    `measure` and `compare` add a fresh sample before and after each
    measurement (at most one per CALIBRATION_REFRESH_S), so the value follows
    the machine's current state: the median of the last CALIBRATION_WINDOW
    samples. `refresh=True` starts the window over.
    """
    cm = _cal_metric(metric)
    st = _cal_state(sandbox, cm)
    with st.lock:
        if refresh:
            st.samples.clear()
            st.stamps.clear()
        if len(st.samples) < 5:
            if not st.samples:
                _calibration_run(sandbox, st, cm)  # warm-up
            while len(st.samples) < 5:
                _add_calibration_sample(sandbox, st, cm)
        return float(statistics.median(st.samples))




def sample_calibration(sandbox: Sandbox, metric: str) -> str | None:
    """One calibration sample (see `_calibrate_sample`); returns an error text instead of raising."""
    try:
        _calibrate_sample(sandbox, metric)
        return None
    except Exception as e:  # a broken calibration must not hide the measurement
        return str(e)


def calibration_after(sandbox: Sandbox, metric: str, error_before: str | None) -> tuple[float | None, str]:
    """After a measurement: one more sample, then (the calibration to report, a note on errors)."""
    errs = [e for e in (error_before, sample_calibration(sandbox, metric)) if e]
    try:
        return calibration_factor(sandbox, metric), ("calibration: " + errs[0] if errs else "")
    except Exception as e:
        return None, f"calibration failed: {e}"
