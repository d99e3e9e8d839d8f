"""Calibrated timing: repeated measurements, their noise, and comparisons.

Owns how codegym turns executions into numbers a speed reward can trust:

- `measure` (public): repeated, adaptive measurement of one build on a list
  of inputs -> `Measurement` (median, distribution-free CI, noise, calibration).
- `compare` (public): interleaved A/B measurement of two builds -> `Comparison`
  (speedup ``t(a)/t(b)``, CI from the paired log-ratios, `significant`).
- `calibration_workload` / `calibration_factor` (public): a fixed Python
  program measured in the same sandbox, so results can be normalised across
  machines (``normalized = median / calibration``).
- `noise_floor`: the smallest relative difference a measurement resolves.
- The statistics, usable on plain samples: `median_ci`, `hodges_lehmann`,
  `wilcoxon_ci`, `t_ci`, `bootstrap_ci`, `summarize`, `paired_interval`.

Metrics: ``cpu`` (child user+system CPU seconds from wait4 rusage; the
default, because wall time on shared machines is far noisier), ``wall``, and
``instructions`` (guest instructions counted by ``valgrind --tool=callgrind``;
exactly repeatable for native binaries, supported for compiled languages only).

Estimator choices (see `measure` and `compare` for details):

- A *sample* is one pass of the build over all inputs, summing the per-run
  metric. With ``min_of=k`` (default 3 for time metrics) a sample makes k
  passes and sums the per-input minima: a busy neighbour only ever adds time,
  so the minimum of a few runs drops most contaminated runs at the source
  (measured here: CV of measurement medians 7.6 % -> 0.7 % for Python).
- A measurement reports the **median** of its samples with the exact
  distribution-free (binomial order-statistic) confidence interval of the
  median: no normality assumption, and a minority of preempted samples cannot
  move it. It stops when that interval is narrow enough (`target_rel_ci`).
- A comparison takes pairs of samples whose runs of A and B are interleaved
  (alternating which goes first) and estimates the speedup from the paired
  log-ratios with the Hodges-Lehmann estimator and its exact Wilcoxon
  signed-rank interval. Under "no difference" the alternation makes each
  log-ratio symmetric about 0, so the interval's error rate holds whatever
  the noise distribution (heavy tails, bimodal contention), which a
  t-interval only approximates and a percentile bootstrap misses at small n;
  ``method="t"`` and ``method="bootstrap"`` (seeded) are available.
- Adaptive comparisons look at the data at a fixed schedule of pair counts
  and spend the error rate over the looks (Bonferroni), so stopping early when
  a difference shows does not inflate the false-speedup rate; they stop early
  for futility when the estimate is inside the noise floor.
- Noise floor: a difference only counts if it also exceeds the 95 % precision
  of the median per-pair ratio (and `min_effect`, 1 % for time): a speedup
  inside the measurement noise earns nothing.

Every timed run counts: a run that does not end ``ok`` makes the measurement
invalid, and with ``verify`` (``codegym.judge.run.perf_runs`` makes one from a
task's tests) so does a run whose output is wrong -- a program cannot answer
correctly when judged and wrongly, but faster, when timed. `Measurement.failure`
and `Comparison.failed` / `failure` say which program failed and how.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import statistics
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np

from codegym.core.limits import Limits
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox

#: metrics `measure` and `compare` understand
METRICS = ("cpu", "wall", "instructions")
#: confidence level of a Measurement's CI
LEVEL = 0.95
#: valgrind slows native code down ~10-50x (callgrind, no cache simulation);
#: the CPU limit of an instructions run is scaled by this
VALGRIND_SLOWDOWN = 60.0
#: passes per sample (min over them, per input) by metric, see module docstring
DEFAULT_MIN_OF = {"cpu": 3, "wall": 3, "instructions": 1}
#: smallest relative difference `compare` calls significant, by metric: below
#: ~1 % the program's own layout (alignment, environment size) decides, not its code
DEFAULT_MIN_EFFECT = {"cpu": 0.01, "wall": 0.01, "instructions": 0.001}
#: calibration samples kept per sandbox and metric (the median of these is reported)
CALIBRATION_WINDOW = 9
#: runs per calibration sample (minimum over them, like `measure`'s min_of)
CALIBRATION_MIN_OF = 3
#: a measurement takes a fresh calibration sample only if the newest is older than this,
#: which bounds the overhead of calibration to a few percent under continuous use
CALIBRATION_REFRESH_S = 5.0


#: ``verify(input_index, result)``: None when the run's output is right, else
#: ``(status, message)`` (status as a judge case's: wrong_answer, runtime_error, ...);
#: an exception means the check itself failed (``failure`` "sandbox_error")
Verifier = Callable[[int, ExecResult], "tuple[str, str] | None"]


class UnsupportedMetricError(ValueError):
    """The metric cannot be measured for this build (e.g. instructions of Python)."""


# =========================================================================== records

def _finite(x):
    """JSON has no NaN/inf: undefined numbers become None."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return _finite(obj.item())
    return _finite(obj)


@dataclass
class Measurement:
    """Repeated measurement of one build on a list of inputs.

    metric       "cpu" | "wall" | "instructions"
    samples      one value per sample (seconds, or instructions), warm-ups excluded
    n            len(samples)
    min, median, mean   of the samples; `median` is the estimate to use
    mad          median absolute deviation (unscaled)
    cv           standard deviation / mean of the samples (ddof=1)
    ci           (lo, hi) distribution-free CI of the median at `confidence`
    rel_ci       half-width of `ci` relative to the median (the precision reached)
    converged    rel_ci <= the target with at least the requested samples and CI level
    calibration  seconds of the calibration workload in the same sandbox: the median of
                 its recent samples, refreshed just before and after this measurement
                 (see `calibration_factor`; None if not measured)
    normalized   median / calibration (None for instructions or without calibration)
    ok           False when a run failed or the metric could not be read; then `reason` says why
    failure      when a run failed, how: the status `verify` gave its output (e.g.
                 ``wrong_answer``), or the run's own status (``runtime_error``,
                 ``timeout``, ``memory_limit``, ``output_limit``); ``sandbox_error``
                 when the sandbox or the output check failed, not the program
    confidence   coverage of `ci` (below LEVEL only when n is too small to reach it)
    runs         executions made, warm-ups included
    min_of       passes per sample (per-input minimum over them)
    elapsed_s    wall time spent measuring
    """

    metric: str
    samples: list[float] = field(default_factory=list)
    n: int = 0
    min: float | None = None
    median: float | None = None
    mean: float | None = None
    mad: float | None = None
    cv: float | None = None
    ci: tuple[float, float] | None = None
    rel_ci: float | None = None
    converged: bool = False
    calibration: float | None = None
    normalized: float | None = None
    ok: bool = True
    reason: str = ""
    failure: str | None = None
    confidence: float | None = None
    runs: int = 0
    min_of: int = 1
    elapsed_s: float = 0.0

    @property
    def unit(self) -> str:
        return "instructions" if self.metric == "instructions" else "s"

    def to_dict(self) -> dict:
        return _jsonable(asdict(self))

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        d = dict(d)
        if d.get("ci") is not None:
            d["ci"] = tuple(d["ci"])
        return cls(**d)


@dataclass
class Comparison:
    """Interleaved comparison of two builds; ``speedup = t(a) / t(b)`` (> 1: b is faster).

    ci           (lo, hi) of the speedup at `confidence` (the level of the look that
                 decided, see `compare`); degenerate (lo == hi) for exact instruction counts
    significant  the CI excludes 1 AND the effect exceeds `noise_floor`
    noise_floor  relative effect below which a difference does not count:
                 max(min_effect, noise_floor of the per-pair ratios t_a/t_b taken as a
                 Measurement), i.e. the 95 % half-width of their median
    decided      True if the loop stopped because the answer was clear (significant, or
                 futile, see `decide`), False if pairs or budget ran out first
    log_ratios   per pair log(t_a / t_b), in the order measured
    a, b         the two builds' measurements built from the same (interleaved) samples
    ok, reason   False when a run of either build failed
    failed       which build's run failed ("a" or "b"), and `failure` how (see
                 `Measurement.failure`)
    """

    metric: str
    speedup: float | None = None
    ci: tuple[float, float] | None = None
    significant: bool = False
    n_pairs: int = 0
    method: str = "wilcoxon"
    confidence: float | None = None
    noise_floor: float | None = None
    decided: bool = False
    log_ratios: list[float] = field(default_factory=list)
    a: Measurement | None = None
    b: Measurement | None = None
    calibration: float | None = None
    ok: bool = True
    reason: str = ""
    failed: str | None = None
    failure: str | None = None
    elapsed_s: float = 0.0

    @property
    def faster(self) -> str | None:
        """"a" or "b" when significant, else None."""
        if not self.significant or self.speedup is None:
            return None
        return "b" if self.speedup > 1 else "a"

    def to_dict(self) -> dict:
        d = asdict(self)
        return _jsonable(d)


# =========================================================================== statistics

def _binom_cdf_half(k: int, n: int) -> float:
    """P(Binomial(n, 1/2) <= k), exact."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median_ci(samples: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """Distribution-free CI of the median: order statistics chosen by the binomial law.

    Returns (lo, hi, coverage). The interval is ``[x_(j), x_(n+1-j)]`` with the
    largest j whose exact coverage ``1 - 2 P(B <= j-1)`` is >= level; when n is
    too small for any j to reach `level` (n < 6 at 95 %), the range is returned
    with its (lower) coverage.
    """
    x = sorted(float(v) for v in samples)
    n = len(x)
    if n == 0:
        raise ValueError("median_ci of no samples")
    if n == 1:
        return x[0], x[0], 0.0
    alpha = 1.0 - level
    j = 1
    while j + 1 <= (n + 1) // 2 and 2 * _binom_cdf_half(j, n) <= alpha:
        j += 1
    coverage = 1.0 - 2 * _binom_cdf_half(j - 1, n)
    return x[j - 1], x[n - j], coverage


def _signed_rank_counts(n: int) -> list[int]:
    """Number of sign patterns giving each value of the Wilcoxon T+ statistic (n untied ranks)."""
    return _SR_CACHE.setdefault(n, _signed_rank_counts_compute(n))


_SR_CACHE: dict[int, list[int]] = {}


def _signed_rank_counts_compute(n: int) -> list[int]:
    m = n * (n + 1) // 2
    c = [0] * (m + 1)
    c[0] = 1
    top = 0
    for r in range(1, n + 1):
        # include rank r or not (iterate downwards: each rank used once)
        for s in range(top, -1, -1):
            if c[s]:
                c[s + r] += c[s]
        top += r
    return c


#: above this many pairs the signed-rank distribution is taken as normal
EXACT_WILCOXON_MAX_N = 60


def _wilcoxon_k(n: int, alpha: float) -> int:
    """Largest k with P(T+ <= k-1) <= alpha/2 (0 if none): the CI uses the k-th Walsh averages."""
    if n <= EXACT_WILCOXON_MAX_N:
        counts = _signed_rank_counts(n)
        total = 2 ** n
        cum = 0
        k = 0
        for t, c in enumerate(counts):
            cum += c
            if cum / total <= alpha / 2:
                k = t + 1
            else:
                break
        return k
    mu = n * (n + 1) / 4
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    return max(0, int(math.floor(mu - z * sd - 0.5)) + 1)


def _wilcoxon_coverage(n: int, k: int) -> float:
    """Exact coverage of the Walsh-average interval [W_(k), W_(M+1-k)] (k >= 1)."""
    if k <= 0:
        return 1.0
    if n <= EXACT_WILCOXON_MAX_N:
        counts = _signed_rank_counts(n)
        return 1.0 - 2 * sum(counts[:k]) / 2 ** n
    mu = n * (n + 1) / 4
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return 1.0 - 2 * statistics.NormalDist().cdf((k - 1 + 0.5 - mu) / sd)


def _walsh(d: Sequence[float]) -> np.ndarray:
    x = np.asarray(d, dtype=float)
    i, j = np.triu_indices(len(x))
    return np.sort((x[i] + x[j]) / 2.0)


def hodges_lehmann(d: Sequence[float]) -> float:
    """Hodges-Lehmann location estimate: the median of the Walsh averages (x_i + x_j)/2, i <= j."""
    if len(d) == 0:
        raise ValueError("hodges_lehmann of no samples")
    return float(np.median(_walsh(d)))


def wilcoxon_ci(d: Sequence[float], level: float = LEVEL) -> tuple[float, float, float, float]:
    """Hodges-Lehmann estimate and the exact Wilcoxon signed-rank CI of the centre of `d`.

    Returns (estimate, lo, hi, coverage). Valid for any distribution symmetric
    about its centre (the paired log-ratios of an interleaved comparison are,
    under "no difference"). When n is too small to reach `level` the interval
    is (-inf, inf) with coverage 1.
    """
    n = len(d)
    if n == 0:
        raise ValueError("wilcoxon_ci of no samples")
    w = _walsh(d)
    est = float(np.median(w))
    k = _wilcoxon_k(n, 1.0 - level)
    if k < 1:
        return est, -math.inf, math.inf, 1.0
    m = len(w)
    return est, float(w[k - 1]), float(w[m - k]), _wilcoxon_coverage(n, k)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (Lentz; Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-14:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t with `df` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t (bisection on `t_cdf`; |error| < 1e-10)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p < 0.5:
        return -t_ppf(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2.0


def t_ci(d: Sequence[float], level: float = LEVEL) -> tuple[float, float, float, float]:
    """Mean and Student-t CI of the mean of `d`: (estimate, lo, hi, level)."""
    x = np.asarray(d, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("t_ci of no samples")
    m = float(x.mean())
    if n < 2:
        return m, -math.inf, math.inf, 1.0
    se = float(x.std(ddof=1)) / math.sqrt(n)
    h = t_ppf(1.0 - (1.0 - level) / 2.0, n - 1) * se
    return m, m - h, m + h, level


def bootstrap_ci(x: Sequence[float], stat: Callable[[np.ndarray], float] | str = "mean",
                 level: float = LEVEL, n_boot: int = 4000,
                 seed: int = 0) -> tuple[float, float, float, float]:
    """Percentile bootstrap CI of `stat` ("mean", "median" or a function of a 1-d array).

    Deterministic given (x, seed): resampling uses numpy's PCG64 seeded with `seed`.
    Returns (estimate, lo, hi, level).
    """
    a = np.asarray(x, dtype=float)
    n = len(a)
    if n == 0:
        raise ValueError("bootstrap_ci of no samples")
    if stat == "mean":
        est = float(a.mean())
        f = lambda m: m.mean(axis=1)  # noqa: E731
    elif stat == "median":
        est = float(np.median(a))
        f = lambda m: np.median(m, axis=1)  # noqa: E731
    else:
        est = float(stat(a))
        f = lambda m: np.apply_along_axis(stat, 1, m)  # noqa: E731
    if n < 2:
        return est, -math.inf, math.inf, 1.0
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    boots = np.sort(f(a[idx]))
    q = (1.0 - level) / 2.0
    lo, hi = np.quantile(boots, [q, 1.0 - q])
    return est, float(lo), float(hi), level


def paired_interval(log_ratios: Sequence[float], level: float, method: str = "wilcoxon",
                    seed: int = 0) -> tuple[float, float, float, float]:
    """Estimate and CI of the centre of paired log-ratios by `method`: (est, lo, hi, coverage)."""
    if method == "wilcoxon":
        return wilcoxon_ci(log_ratios, level)
    if method == "t":
        return t_ci(log_ratios, level)
    if method == "bootstrap":
        return bootstrap_ci(log_ratios, "mean", level, seed=seed)
    raise ValueError(f"unknown method {method!r} (wilcoxon | t | bootstrap)")


def summarize(samples: Sequence[float], metric: str = "cpu", level: float = LEVEL,
              target_rel_ci: float = 0.02, min_n: int = 2) -> Measurement:
    """A Measurement (statistics only, no calibration) of `samples`."""
    x = [float(v) for v in samples]
    m = Measurement(metric=metric, samples=x, n=len(x))
    if not x:
        m.ok, m.reason = False, "no samples"
        return m
    arr = np.asarray(x)
    med = float(np.median(arr))
    m.min, m.median, m.mean = float(arr.min()), med, float(arr.mean())
    m.mad = float(np.median(np.abs(arr - med)))
    m.cv = float(arr.std(ddof=1) / m.mean) if len(x) > 1 and m.mean > 0 else (0.0 if len(x) > 1 else None)
    lo, hi, cov = median_ci(x, level)
    m.ci, m.confidence = (lo, hi), cov
    m.rel_ci = (hi - lo) / 2.0 / med if med > 0 else (0.0 if hi == lo else math.inf)
    exact = len(x) >= 2 and lo == hi == float(arr.min()) == float(arr.max())
    m.converged = len(x) >= min_n and m.rel_ci <= target_rel_ci and (cov >= level or exact)
    return m


def noise_floor(measurement: Measurement) -> float:
    """Smallest relative difference `measurement` resolves: the relative half-width of its CI.

    Taken as the smaller of two estimates of that half-width: the exact
    order-statistic interval (`rel_ci`), and the asymptotic one from the
    median absolute deviation, ``1.96 * 1.2533 * 1.4826 * MAD / (median * sqrt(n))``.
    At small n the order-statistic interval is the whole range of the samples,
    so one preempted sample would set the floor; the MAD ignores it. Falls back
    to the CV when neither applies; 0 for exactly repeatable values; inf for a
    failed or empty measurement.
    """
    m = measurement
    if not m.ok or not m.n:
        return math.inf
    if m.n >= 2 and m.min == max(m.samples):
        return 0.0
    cands = []
    if m.rel_ci is not None and m.confidence is not None and m.confidence >= LEVEL - 1e-12:
        cands.append(float(m.rel_ci))
    if m.n >= 5 and m.mad is not None and m.median:
        z = statistics.NormalDist().inv_cdf(0.5 + LEVEL / 2)
        cands.append(z * 1.2533 * 1.4826 * m.mad / (m.median * math.sqrt(m.n)))
    if cands:
        return min(cands)
    return float(m.cv) if m.cv is not None else math.inf


# =========================================================================== running

def _requests(inputs: Iterable[RunRequest | str | bytes] | None) -> list[RunRequest]:
    if inputs is None:
        return [RunRequest()]
    if isinstance(inputs, (str, bytes, RunRequest)):
        inputs = [inputs]
    out = []
    for x in inputs:
        if isinstance(x, RunRequest):
            out.append(x)
        elif isinstance(x, (str, bytes)):
            out.append(RunRequest(stdin=x))
        else:
            raise TypeError(f"an input is a RunRequest or stdin text/bytes, not {type(x).__name__}")
    return out or [RunRequest()]


# The instruction counter. valgrind runs inside the program's own process, so
# its report must not travel on a channel the program controls: the program's
# stderr is discarded and valgrind logs to one file per process, printed only
# after the program has exited, each line prefixed by the shell with the pid
# the file belongs to (text the program writes into a log cannot change the
# prefix the shell puts in front of it). Children are traced and their counts
# added, so work moved into a child process still counts. The shell records
# valgrind's pid so that a missing main log (deleted by the program) is an
# error, and per process the largest reported count is taken, so a forged line
# can only add instructions, never remove any. (The program reaches valgrind's
# stdin through fd 3 because an asynchronous command would read /dev/null.)
_VALGRIND_SCRIPT = r"""
d=$(mktemp -d "${TMPDIR:-/tmp}/codegym-vg.XXXXXX") || exit 125
exec 3<&0
valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes \
  --log-file="$d/log.%p" "$@" <&3 3<&- 2>/dev/null &
p=$!
exec 3<&-
wait "$p"
rc=$?
{ printf '@main %s\n' "$p"
  for f in "$d"/log.*; do
    [ -f "$f" ] && sed "s/^/@${f##*/log.}@ /" "$f"
  done; } >&2
exit $rc
"""
VALGRIND_WRAPPER = ("sh", "-c", _VALGRIND_SCRIPT, "codegym-valgrind")

_LOG_LINE = re.compile(r"^@(\d+)@ ==(\d+)== Collected : (\d+)\s*$")
#: plausibility of a count: callgrind executes far more than this many guest
#: instructions per CPU second once started (measured ~1e8-1e9 here) ...
MIN_INSTRUCTIONS_PER_CPU_S = 5e6
#: ... after this much CPU per traced process for valgrind's own start-up
VALGRIND_STARTUP_CPU_S = 0.5


@dataclass
class ValgrindCount:
    """Instructions of one wrapped run: total, per traced process, and the main process's pid."""

    total: int
    per_pid: dict[str, int]
    main_pid: str | None


def parse_valgrind_instructions(log: str) -> ValgrindCount | None:
    """Instruction count from the wrapper's output (None if there is none).

    Reads only lines ``@P@ ==P== Collected : N`` whose file prefix P (put there
    by the wrapper's shell) names the same process as valgrind's ``==P==``;
    per process the largest count is taken (valgrind writes the genuine
    summary last; forged lines cannot lower it). The main process named by
    the first ``@main P`` line must have a count.
    """
    per_pid: dict[str, int] = {}
    main = None
    for line in log.splitlines():
        if main is None and line.startswith("@main "):
            main = line[6:].strip()
            continue
        mt = _LOG_LINE.match(line)
        if mt and mt.group(1) == mt.group(2):
            pid = mt.group(1)
            per_pid[pid] = max(per_pid.get(pid, 0), int(mt.group(3)))
    if not per_pid or main is None or main not in per_pid:
        return None
    return ValgrindCount(total=sum(per_pid.values()), per_pid=per_pid, main_pid=main)


def _native_language(language: str) -> bool:
    """True if programs of `language` are compiled to a binary that is run directly.

    A compile step alone is not enough (JavaScript has one, a syntax check):
    the run command must execute one of the compile step's artifacts.
    """
    try:
        from codegym.core.languages import get_language
        spec = get_language(language)
    except Exception:  # registry unavailable: the languages known to compile to native code
        return language in ("c", "cpp")
    if not spec.compiled or not spec.artifacts:
        return False
    argv = spec.run_argv()
    exe = argv[0][2:] if argv and argv[0].startswith("./") else (argv[0] if argv else "")
    return exe in set(spec.artifacts)


def check_metric(build: Build, metric: str) -> None:
    """Raise `UnsupportedMetricError` (a ValueError) if `metric` cannot be measured for `build`."""
    if metric not in METRICS:
        raise UnsupportedMetricError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    if metric == "instructions":
        if not _native_language(build.language):
            raise UnsupportedMetricError(
                f"metric 'instructions' is unsupported for {build.language!r}: instruction counts "
                "come from valgrind and are only meaningful for programs compiled to native "
                "code (c, cpp); use metric='cpu' for interpreted and JIT-compiled languages")
        if shutil.which("valgrind") is None:
            raise UnsupportedMetricError(
                "metric 'instructions' needs valgrind: install it (apt-get install valgrind)")


def _instr_limits(lim: Limits) -> Limits:
    """valgrind is slow and reserves address space: more CPU time and memory."""
    t = lim.time_s * VALGRIND_SLOWDOWN + 5.0
    return lim.replace(time_s=t, wall_s=(t * 2 + 5.0), memory_mb=lim.memory_mb + 1024)


class _Sampler:
    """Runs one build over the inputs and turns results into metric values."""

    def __init__(self, sandbox: Sandbox, build: Build, reqs: list[RunRequest], metric: str,
                 limits: Limits | None, verify: Verifier | None = None):
        self.sb, self.build, self.reqs, self.metric = sandbox, build, reqs, metric
        self.limits = limits
        self.verify = verify
        self.runs = 0
        self.error: str | None = None
        self.failure: str | None = None

    def _limits_for(self, req: RunRequest) -> Limits:
        lim = req.limits or self.limits or Limits()
        return _instr_limits(lim) if self.metric == "instructions" else lim

    def run_one(self, req: RunRequest, index: int = 0) -> float | None:
        wrapper = VALGRIND_WRAPPER if self.metric == "instructions" else None
        # (layout randomized: a build must not be faster or slower run after run by where
        # its code and objects happen to land; see `Sandbox.run`)
        r: ExecResult = self.sb.run(self.build, stdin=req.stdin, limits=self._limits_for(req),
                                    argv=req.argv, extra_files=req.extra_files, wrapper=wrapper,
                                    randomize_layout=True)
        self.runs += 1
        if r.status != "ok":
            msg = r.message or (r.stderr.strip().splitlines() or [""])[-1]
            self.error = (f"input {index} (run {self.runs}) ended {r.status}"
                          + (f": {msg[:300]}" if msg else ""))
            self.failure = r.status
            return None
        if self.verify is not None:
            # a timed run is a run like any other: its output must be right (a program
            # must not earn speed by answering wrongly when it is timed)
            try:
                wrong = self.verify(index, r)
            except Exception as e:  # noqa: BLE001 -- the check failed, not the program
                self.error = f"input {index} (run {self.runs}): checking the output failed: {e}"[:500]
                self.failure = "sandbox_error"
                return None
            if wrong:
                status, msg = wrong
                self.error = f"input {index} (run {self.runs}): {status}: {msg[:300]}"
                self.failure = status
                return None
        if self.metric == "cpu":
            return r.cpu_s
        if self.metric == "wall":
            return r.wall_s
        count = parse_valgrind_instructions(r.stderr)
        if count is None:
            tail = r.stderr.strip()[-300:]
            self.error = "valgrind reported no instruction count" + (f": {tail}" if tail else "")
            return None
        # work that escaped counting (e.g. a child that removed its own log) still
        # shows as CPU time: refuse counts far below what that CPU time executes
        budget = max(0.0, r.cpu_s - VALGRIND_STARTUP_CPU_S * len(count.per_pid))
        if count.total < MIN_INSTRUCTIONS_PER_CPU_S * budget:
            self.error = (f"instruction count {count.total} is implausibly low for {r.cpu_s:.2f} s "
                          "of CPU under valgrind: some work escaped counting")
            return None
        return float(count.total)

    def sample(self, min_of: int = 1) -> float | None:
        """k passes over all inputs; the sum over inputs of each input's minimum."""
        best = [math.inf] * len(self.reqs)
        for _ in range(max(1, min_of)):
            for i, req in enumerate(self.reqs):
                v = self.run_one(req, i)
                if v is None:
                    return None
                best[i] = min(best[i], v)
        return float(sum(best))


# =========================================================================== calibration

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


_CAL: "weakref.WeakKeyDictionary[Sandbox, dict[str, _CalState]]" = weakref.WeakKeyDictionary()
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


# =========================================================================== measure

def _invalid(metric: str, reason: str, **kw) -> Measurement:
    return Measurement(metric=metric, ok=False, reason=reason, **kw)


def _build_problem(build: Build) -> str | None:
    if build.ok:
        return None
    r = build.result
    detail = (r.message or r.stderr.strip()[-300:]) if r else ""
    return f"build failed ({r.status if r else 'unknown'})" + (f": {detail}" if detail else "")


def measure(sandbox: Sandbox, build: Build, inputs: Iterable[RunRequest | str | bytes] | None = None,
            metric: str = "cpu", warmups: int = 1, repeats: int = 5, max_repeats: int = 30,
            target_rel_ci: float = 0.02, budget_s: float = 30.0, limits: Limits | None = None,
            min_of: int | None = None, calibrate: bool = True, verify: Verifier | None = None) -> Measurement:
    """Measure `build` on `inputs` until the median is known to `target_rel_ci`.

    One sample is one pass over all inputs (sum of the per-run metric; with
    ``min_of=k`` > 1, k passes and the sum of per-input minima -- default 3 for
    time metrics, 1 for instructions). `warmups` passes come first and are
    discarded. Samples are added until the distribution-free 95 % CI of the
    median has a relative half-width <= `target_rel_ci` (at least `repeats`
    samples), or `max_repeats` samples or `budget_s` seconds are spent
    (`converged` False then). Instruction counts are exactly repeatable, so
    for them two equal samples end the measurement and warm-ups are skipped.

    Any run that does not end "ok", or whose output `verify` rejects, makes the
    measurement invalid (``ok=False``, `reason`, `failure`), never a silently
    included sample. Raises
    `UnsupportedMetricError` for an unknown metric, or instructions of an
    interpreted language or without valgrind.
    """
    t0 = time.monotonic()
    check_metric(build, metric)
    problem = _build_problem(build)
    if problem:
        return _invalid(metric, problem)
    reqs = _requests(inputs)
    k = DEFAULT_MIN_OF[metric] if min_of is None else max(1, int(min_of))
    exact = metric == "instructions"
    if exact:
        warmups, repeats = 0, min(repeats, 2)
    s = _Sampler(sandbox, build, reqs, metric, limits, verify)
    cal_before = _try_calibrate(sandbox, metric) if calibrate else None

    def fail() -> Measurement:
        return _invalid(metric, s.error or "run failed", runs=s.runs, min_of=k, failure=s.failure,
                        elapsed_s=time.monotonic() - t0)

    for _ in range(max(0, warmups)):
        if s.sample(1) is None:
            return fail()
    t_samples = time.monotonic()
    samples: list[float] = []
    while True:
        v = s.sample(k)
        if v is None:
            return fail()
        samples.append(v)
        # converged implies at least `repeats` samples (min_n)
        m = summarize(samples, metric, target_rel_ci=target_rel_ci, min_n=max(1, repeats))
        if m.converged or len(samples) >= max(1, max_repeats):
            break
        # stop when the next sample would likely overrun the budget
        now = time.monotonic()
        if now - t0 + (now - t_samples) / len(samples) > budget_s:
            break
    m.runs, m.min_of = s.runs, k
    if calibrate:
        cal_after = _try_calibrate(sandbox, metric)
        m.calibration, note = _calibration_value(sandbox, metric, cal_before, cal_after)
        if note:
            m.reason = note
        if m.calibration and metric != "instructions" and m.median is not None:
            m.normalized = m.median / m.calibration
    m.elapsed_s = time.monotonic() - t0
    return m


def _try_calibrate(sandbox: Sandbox, metric: str) -> str | None:
    """One calibration sample; returns an error text instead of raising."""
    try:
        _calibrate_sample(sandbox, metric)
        return None
    except Exception as e:  # a broken calibration must not hide the measurement
        return str(e)


def _calibration_value(sandbox: Sandbox, metric: str, *errors: str | None) -> tuple[float | None, str]:
    errs = [e for e in errors if e]
    try:
        return calibration_factor(sandbox, metric), ("calibration: " + errs[0] if errs else "")
    except Exception as e:
        return None, f"calibration failed: {e}"


# =========================================================================== compare

def _look_schedule(first: int, last: int, growth: float = 1.5) -> list[int]:
    """Pair counts at which `compare` looks at the data: first, x1.5, ..., last."""
    first = max(2, min(first, last))
    looks = [first]
    while looks[-1] < last:
        looks.append(min(last, max(looks[-1] + 1, int(math.ceil(looks[-1] * growth)))))
    return looks


def decide(log_ratios: Sequence[float], level: float, floor: float, method: str = "wilcoxon",
           seed: int = 0, futility_floor: float | None = None
           ) -> tuple[float, float, float, float, bool, bool]:
    """One look at paired log-ratios: (est, lo, hi, coverage, significant, settled).

    significant: the CI excludes 0 and |est| exceeds log(1 + floor).
    settled: significant, or futile -- the estimate, or the whole CI, lies
    within +-log(1 + futility_floor) (default `floor`; `compare` passes the
    floor projected to its last look). Stopping for futility never raises the
    false-speedup rate; it only ends comparisons of programs that are, as far
    as can be told, equal.
    """
    est, lo, hi, cov = paired_interval(log_ratios, level, method, seed)
    thr = math.log1p(floor)
    fthr = math.log1p(floor if futility_floor is None else min(floor, futility_floor))
    excl = lo > 0 or hi < 0
    significant = excl and abs(est) > thr
    within = -fthr <= lo and hi <= fthr
    small = abs(est) <= fthr
    settled = significant or within or small
    return est, lo, hi, cov, significant, settled


def _pair_sample(sa: "_Sampler", sb: "_Sampler", k: int, a_first: bool) -> tuple[float | None, float | None]:
    """One pair: k passes over the inputs, runs of A and B interleaved input by input
    (alternating which goes first on every pass), per-input minima summed per build."""
    best_a = [math.inf] * len(sa.reqs)
    best_b = [math.inf] * len(sb.reqs)
    for j in range(max(1, k)):
        first_a = a_first if j % 2 == 0 else not a_first
        for i in range(len(sa.reqs)):
            for is_a in ((True, False) if first_a else (False, True)):
                s, best = (sa, best_a) if is_a else (sb, best_b)
                v = s.run_one(s.reqs[i], i)
                if v is None:
                    return (None, 0.0) if is_a else (0.0, None)
                best[i] = min(best[i], v)
    return float(sum(best_a)), float(sum(best_b))


def compare(sandbox: Sandbox, build_a: Build, build_b: Build,
            inputs: Iterable[RunRequest | str | bytes] | None = None, metric: str = "cpu",
            warmups: int = 1, repeats: int = 8, max_pairs: int = 30, budget_s: float = 60.0,
            limits: Limits | None = None, alpha: float = 0.01, min_effect: float | None = None,
            method: str = "wilcoxon", min_of: int | None = None, seed: int = 0,
            calibrate: bool = True, verify_a: Verifier | None = None,
            verify_b: Verifier | None = None,
            inputs_b: Iterable[RunRequest | str | bytes] | None = None) -> Comparison:
    """Is `build_b` faster than `build_a`? ``speedup = t(a)/t(b)`` (> 1: b is faster).

    A pair is one sample of each build (as in `measure`: ``min_of`` passes over
    the inputs, per-input minima summed), with the runs of A and B interleaved
    input by input and the first build alternating from pass to pass and from
    pair to pair (A B, B A, ...), so that drift, bursts of contention and
    order effects fall on both sides alike. The speedup and its CI come from
    the paired log-ratios log(t_a/t_b) by `method` ("wilcoxon": Hodges-Lehmann
    + exact signed-rank CI, default; "t"; "bootstrap", seeded with `seed`).
    The data are looked at after `repeats` pairs and then at x1.5 steps up to
    `max_pairs`; each look uses the confidence level ``1 - alpha / looks``, so
    the chance of calling two identical programs different stays below `alpha`
    however early the loop stops. The loop stops when significant, when
    futile (see `decide`: the estimate or the whole CI is inside the noise
    floor, or even `max_pairs` pairs could not make the CI exclude 1), or when
    pairs or `budget_s` run out.

    `significant` requires both: the CI excludes 1, and the effect exceeds the
    noise floor ``max(min_effect, noise_floor(ratios))``, the 95 % precision of
    the median per-pair ratio -- a speedup inside the measurement noise earns
    nothing. (The per-build measurements `a` and `b` are reported too; their
    own floors are larger under contention, which pairing cancels.)

    For ``metric="instructions"`` (deterministic) each build is measured twice
    (A B B A); when both repeat exactly, the speedup is exact (degenerate CI)
    and significance is any difference beyond `min_effect` (0.1 %).

    `inputs_b`: B's own requests, input by input the same inputs as A's (for programs
    that travel in the requests, as the judge launches Python programs); default `inputs`.
    `verify_a` / `verify_b` check the output of every run of A / B (see `measure`);
    the first failed run ends the comparison (``ok=False``, `failed`, `failure`).
    """
    t0 = time.monotonic()
    check_metric(build_a, metric)
    check_metric(build_b, metric)
    eff = DEFAULT_MIN_EFFECT[metric] if min_effect is None else float(min_effect)
    cmp = Comparison(metric=metric, method="exact" if metric == "instructions" else method)
    for name, b in (("a", build_a), ("b", build_b)):
        problem = _build_problem(b)
        if problem:
            cmp.ok, cmp.reason = False, f"build {name}: {problem}"
            return cmp
    if method not in ("wilcoxon", "t", "bootstrap"):
        raise ValueError(f"unknown method {method!r} (wilcoxon | t | bootstrap)")
    reqs = _requests(inputs)
    reqs_b = reqs if inputs_b is None else _requests(inputs_b)
    if len(reqs_b) != len(reqs):
        raise ValueError(f"inputs_b has {len(reqs_b)} requests, inputs {len(reqs)}: they must match")
    k = DEFAULT_MIN_OF[metric] if min_of is None else max(1, int(min_of))
    sa = _Sampler(sandbox, build_a, reqs, metric, limits, verify_a)
    sb_ = _Sampler(sandbox, build_b, reqs_b, metric, limits, verify_b)
    cal_err = _try_calibrate(sandbox, metric) if calibrate else None

    def failed(which: str, s: _Sampler) -> Comparison:
        cmp.ok, cmp.reason = False, f"build {which}: {s.error or 'run failed'}"
        cmp.failed, cmp.failure = which, s.failure
        cmp.elapsed_s = time.monotonic() - t0
        return cmp

    if metric == "instructions":
        xa, xb = [], []
        for order in (("a", "b"), ("b", "a")):
            for w in order:
                s = sa if w == "a" else sb_
                v = s.sample(1)
                if v is None:
                    return failed(w, s)
                (xa if w == "a" else xb).append(v)
        _finish_exact(cmp, xa, xb, eff)
    else:
        for _ in range(max(0, warmups)):
            for w, s in (("a", sa), ("b", sb_)):
                if s.sample(1) is None:
                    return failed(w, s)
        looks = _look_schedule(repeats, max_pairs)
        level = 1.0 - alpha / len(looks)
        xa, xb, d = [], [], []
        li = 0
        t_pairs = time.monotonic()
        while True:
            va, vb = _pair_sample(sa, sb_, k, a_first=len(d) % 2 == 0)
            if va is None:
                return failed("a", sa)
            if vb is None:
                return failed("b", sb_)
            xa.append(va)
            xb.append(vb)
            d.append(math.log(max(va, 1e-12)) - math.log(max(vb, 1e-12)))
            now = time.monotonic()
            out_of_budget = now - t0 + (now - t_pairs) / len(d) > budget_s
            at_look = li < len(looks) and len(d) >= looks[li]
            last = len(d) >= max_pairs or out_of_budget
            if not (at_look or last):
                continue
            li += 1
            ma = summarize(xa, metric)
            mb = summarize(xb, metric)
            # the noise of the comparison itself: precision of the median per-pair ratio
            # (pairing cancels the contention both builds saw, unlike the two medians)
            noise = noise_floor(summarize([math.exp(x) for x in d], metric))
            floor = max(eff, noise)
            # stopping for "no difference" must not rest on a floor that more pairs would
            # lower: it is projected to max_pairs (noise ~ 1/sqrt(n))
            fut = max(eff, noise * math.sqrt(len(d) / max(max_pairs, len(d))))
            est, lo, hi, cov, sig, settled = decide(d, level, floor, method, seed, fut)
            if settled or last or li >= len(looks):
                cmp.speedup = math.exp(est)
                cmp.ci = (math.exp(lo), math.exp(hi))
                cmp.significant = sig
                cmp.confidence = cov
                cmp.noise_floor = floor
                cmp.decided = settled
                cmp.a, cmp.b = ma, mb
                break
        cmp.log_ratios = d
        cmp.n_pairs = len(d)
    for m in (cmp.a, cmp.b):
        if m is not None:
            m.min_of = k if metric != "instructions" else 1
    cmp.a.runs, cmp.b.runs = sa.runs, sb_.runs
    if calibrate:
        cal_err2 = _try_calibrate(sandbox, metric)
        cal, note = _calibration_value(sandbox, metric, cal_err, cal_err2)
        cmp.calibration = cal
        for m in (cmp.a, cmp.b):
            m.calibration = cal
            if cal and metric != "instructions" and m.median is not None:
                m.normalized = m.median / cal
        if note:
            cmp.reason = note
    cmp.elapsed_s = time.monotonic() - t0
    return cmp


def _finish_exact(cmp: Comparison, xa: list[float], xb: list[float], eff: float) -> None:
    """Speedup of exactly (or nearly) repeatable counts; the CI spans the observed spread."""
    ma, mb = summarize(xa, cmp.metric), summarize(xb, cmp.metric)
    lo = min(xa) / max(xb)
    hi = max(xa) / min(xb)
    s = statistics.median(xa) / statistics.median(xb)
    cmp.a, cmp.b = ma, mb
    cmp.speedup, cmp.ci = s, (lo, hi)
    cmp.n_pairs = len(xa)
    cmp.log_ratios = [math.log(a / b) for a, b in zip(xa, xb)]
    cmp.confidence = 1.0
    spread = max(noise_floor(ma), noise_floor(mb))
    cmp.noise_floor = max(eff, spread)
    thr = 1.0 + cmp.noise_floor
    cmp.significant = lo > thr or hi < 1.0 / thr
    cmp.decided = True


__all__ = [
    "METRICS", "Measurement", "Comparison", "UnsupportedMetricError", "measure", "compare",
    "calibration_workload", "calibration_factor", "noise_floor", "summarize", "median_ci",
    "hodges_lehmann", "wilcoxon_ci", "t_ci", "t_cdf", "t_ppf", "bootstrap_ci", "paired_interval",
    "decide", "parse_valgrind_instructions", "ValgrindCount", "check_metric", "VALGRIND_WRAPPER",
    "Verifier",
]
