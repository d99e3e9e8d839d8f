"""The statistics of timing, on plain samples: intervals of a median and of a centre.

`median_ci` (distribution-free, binomial order statistics), `hodges_lehmann` and
`wilcoxon_ci` (exact signed-rank interval), Student's t (`t_cdf`, `t_ppf`, `t_ci`),
a seeded percentile `bootstrap_ci`, and `paired_interval`, which picks one of them (or
the anytime-valid confidence sequence of `codegym.timing.sequential`, "cs") for the
paired log-ratios of a comparison. See docs/timing.md for why these.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

import numpy as np

from codegym.timing.sequential import cs_interval

#: confidence level of a Measurement's CI
LEVEL = 0.95
#: the methods `paired_interval` (and so `compare`) accepts; "cs" holds at every look
METHODS = ("cs", "wilcoxon", "t", "bootstrap")


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


def _signed_rank_moments(n: int) -> tuple[float, float]:
    """Mean and standard deviation of T+ (normal approximation, n > EXACT_WILCOXON_MAX_N)."""
    return n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)


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
    mu, sd = _signed_rank_moments(n)
    z = statistics.NormalDist().inv_cdf(1 - alpha / 2)
    return max(0, int(math.floor(mu - z * sd - 0.5)) + 1)


def _wilcoxon_coverage(n: int, k: int) -> float:
    """Exact coverage of the Walsh-average interval [W_(k), W_(M+1-k)] (k >= 1)."""
    if k <= 0:
        return 1.0
    if n <= EXACT_WILCOXON_MAX_N:
        counts = _signed_rank_counts(n)
        return 1.0 - 2 * sum(counts[:k]) / 2 ** n
    mu, sd = _signed_rank_moments(n)
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
    elif isinstance(stat, str):
        raise ValueError(f"unknown statistic {stat!r}: 'mean', 'median' or a function of an array")
    else:
        fn = stat
        est = float(fn(a))
        f = lambda m: np.apply_along_axis(fn, 1, m)  # noqa: E731
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
    """Estimate and CI of the centre of paired log-ratios by `method`: (est, lo, hi, coverage).

    "cs": the Hodges-Lehmann estimate and the anytime-valid interval of `cs_interval`
    (coverage `level` at every look at once)."""
    if method == "cs":
        if len(log_ratios) == 0:
            raise ValueError("paired_interval of no samples")
        lo, hi = cs_interval(log_ratios, 1.0 - level)
        return hodges_lehmann(log_ratios), lo, hi, level
    if method == "wilcoxon":
        return wilcoxon_ci(log_ratios, level)
    if method == "t":
        return t_ci(log_ratios, level)
    if method == "bootstrap":
        return bootstrap_ci(log_ratios, "mean", level, seed=seed)
    raise unknown_method(method)


def unknown_method(method: str) -> ValueError:
    """The error for a `method` outside METHODS."""
    return ValueError(f"unknown method {method!r} (cs | wilcoxon | t | bootstrap)")
