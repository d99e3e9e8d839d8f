"""An anytime-valid confidence sequence for the centre of paired log-ratios (testing by betting).

`cs_interval(d, alpha)` is an interval for the centre of symmetry of `d` that holds at every
look at once: the chance that it ever excludes the true centre, however often it is looked
at and whenever the looking stops, is at most `alpha` (Ville's inequality on a test
martingale). `cs_wealth` is that martingale at one centre. docs/timing.md derives it and
states what its guarantee assumes (symmetry of each log-ratio about the centre given the past:
exact for identical programs when the order within a pair is a fair coin).
`futility_log_wealth` is the one-sided test of the futility rule: evidence against "the
candidate is at least `worth` faster", which can decide after one observation where the
noise scale is known from a kept measurement (docs/timing.md, "Near-ties").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

#: the largest fraction of its wealth a bet may stake (a bet of 1 could lose everything)
MAX_BET = 0.9
#: the stake of each side on the first pair, before any data (one side wins it, the other
#: loses it; simulated, it saves about one pair per decision over not betting at first)
FIRST_BET = 0.75
#: a log-ratio is clipped at this many robust scales: one wild pair moves the wealth by a bounded step
CLIP_SCALES = 2.0
#: scale assumed before three pairs are seen, and the weight (in pairs) of that prior afterwards
PRIOR_SCALE = 0.03
PRIOR_WEIGHT = 2.0
#: scales below this are not trusted (log-ratios are resolved to ~0.1 % at best)
MIN_SCALE = 1e-3
#: grid points per side when the interval's ends are searched
GRID = 256


def predictable_scales(d: ArrayLike, prior: float = PRIOR_SCALE) -> np.ndarray:
    """Per pair i, the spread of the log-ratios *before* it: 1.4826 MAD of ``d[:i]``, shrunk
    toward `prior` (weight PRIOR_WEIGHT pairs); `prior` alone before three pairs.

    Predictable (pair i's own value is not used), so a bet built on it stays fair."""
    x = np.asarray(d, dtype=float)
    out = np.empty(len(x))
    for i in range(len(x)):
        if i < 3:
            s = prior
        else:
            past = x[:i]
            mad = 1.4826 * float(np.median(np.abs(past - np.median(past))))
            s = math.sqrt((PRIOR_WEIGHT * prior ** 2 + i * mad ** 2) / (PRIOR_WEIGHT + i))
        out[i] = max(s, MIN_SCALE)
    return out


def log_wealth_paths(d: ArrayLike, thetas: ArrayLike,
                     scales: np.ndarray | None = None) -> np.ndarray:
    """Running maximum of log M_t(theta), shape (len(thetas), len(d)): row j, column t is
    the largest log wealth against centre ``thetas[j]`` after pairs ``d[:t+1]``.

    M = (M+ + M-) / 2, M+ = prod(1 + l+_i psi_i), M- = prod(1 - l-_i psi_i), with
    psi_i = clip((d_i - theta) / (CLIP_SCALES s_i), -1, 1) and predictable bets l+-
    (FIRST_BET on the first pair, then the plug-in ``mean / second moment`` of the past
    psi, one prior pseudo-pair at 0, capped at MAX_BET). Under symmetry about theta, E[psi_i | past] = 0: both products
    are nonnegative martingales, and so is their mean."""
    x = np.asarray(d, dtype=float)
    th = np.asarray(thetas, dtype=float)
    sc = predictable_scales(x) if scales is None else scales
    g, n = len(th), len(x)
    psi = np.clip((x[None, :] - th[:, None]) / (CLIP_SCALES * sc[None, :]), -1.0, 1.0)
    lp = np.zeros(g)
    lm = np.zeros(g)
    s1 = np.zeros(g)
    s2 = np.full(g, 0.25)  # the prior pseudo-pair: psi 0, second moment 1/4
    best = np.full(g, -np.inf)
    out = np.empty((g, n))
    for i in range(n):
        if i == 0:
            up = down = np.full(g, FIRST_BET)
        else:
            bet = s1 / s2  # (mean / second moment; the counts cancel)
            up = np.clip(bet, 0.0, MAX_BET)
            down = np.clip(-bet, 0.0, MAX_BET)
        p = psi[:, i]
        lp += np.log1p(up * p)
        lm += np.log1p(-down * p)
        s1 += p
        s2 += p * p
        best = np.maximum(best, np.logaddexp(lp, lm) - math.log(2.0))
        out[:, i] = best
    return out


def _log_wealth_paths(d: np.ndarray, thetas: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The last column of `log_wealth_paths` (the running maximum after all pairs)."""
    if len(d) == 0:
        return np.zeros(len(thetas))
    return log_wealth_paths(d, thetas, scales)[:, -1]


def cs_wealth(d: Sequence[float], theta: float = 0.0, prior_scale: float = PRIOR_SCALE) -> float:
    """The largest value the betting martingale against "the centre is `theta`" has reached
    over the pairs `d` (1 before any pair). Under that hypothesis P(ever >= 1/alpha) <= alpha."""
    x = np.asarray(d, dtype=float)
    if len(x) == 0:
        return 1.0
    lw = _log_wealth_paths(x, np.array([float(theta)]), predictable_scales(x, prior_scale))[0]
    return math.exp(min(lw, 700.0))


def _excluded(x: np.ndarray, thetas: np.ndarray, scales: np.ndarray, log_bar: float) -> np.ndarray:
    return _log_wealth_paths(x, thetas, scales) >= log_bar


def _refine(x: np.ndarray, scales: np.ndarray, log_bar: float, out: float, inn: float) -> float:
    """Zoom between an excluded centre `out` and a kept one `inn` (two rounds of 32 points);
    returns the outermost kept centre found."""
    for _ in range(2):
        pts = np.linspace(out, inn, 33)
        kept = ~_excluded(x, pts, scales, log_bar)
        j = int(np.flatnonzero(kept)[0])  # pts[-1] (inn) is kept
        out, inn = (float(pts[j - 1]), float(pts[j])) if j > 0 else (out, float(pts[0]))
    return inn


def cs_interval(d: Sequence[float], alpha: float = 0.05,
                prior_scale: float = PRIOR_SCALE) -> tuple[float, float]:
    """Anytime-valid (1 - alpha) interval for the centre of symmetry of `d`: (lo, hi).

    The centres whose martingale never reached 1/alpha, as an interval (the hull of
    those kept on a grid, each end refined by bisection); infinite ends when even a
    centre beyond all data is kept (too few pairs yet)."""
    x = np.asarray(d, dtype=float)
    if len(x) == 0:
        return -math.inf, math.inf
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    scales = predictable_scales(x, prior_scale)
    log_bar = math.log(1.0 / alpha)
    # beyond this margin every psi is +-1: the wealth is the same as at +-infinity
    margin = CLIP_SCALES * float(scales.max()) * 1.01
    lo_g, hi_g = float(x.min()) - margin, float(x.max()) + margin
    grid = np.linspace(lo_g, hi_g, 2 * GRID + 1)
    kept = ~_excluded(x, grid, scales, log_bar)
    if not kept.any():
        # nothing kept on the grid (possible only between grid points): the best-supported centre
        c = float(np.median(x))
        return c, c
    idx = np.flatnonzero(kept)
    i0, i1 = int(idx[0]), int(idx[-1])
    lo = -math.inf if i0 == 0 else _refine(x, scales, log_bar, float(grid[i0 - 1]), float(grid[i0]))
    hi = math.inf if i1 == len(grid) - 1 else _refine(x, scales, log_bar, float(grid[i1 + 1]), float(grid[i1]))
    return lo, hi


def futility_log_wealth(x: Sequence[float], scales: Sequence[float], worth: float) -> np.ndarray:
    """Log wealth, after each observation, of the test against "the centre of `x` is at
    least log(1 + worth)" (the candidate at least `worth` faster), betting that it is lower.

    `x[i]` is one observation of the log speedup, log(t_baseline / t_candidate) (> 0: the
    candidate is faster), and `scales[i]` a sub-Gaussian scale of its noise, fixed before
    it was seen. The bet on observation i is the likelihood ratio of a tie against the
    boundary, ``lambda_i = w / s_i**2`` with ``w = log(1 + worth)``, on the evidence
    ``min(w - x_i, w + CLIP_SCALES * s_i)`` (one wild slow run counts as CLIP_SCALES
    scales slow). If each x_i is sub-Gaussian with scale s_i around a centre >= w given the
    past, ``E exp(lambda (w - x) - lambda**2 s**2 / 2) <= 1`` and the clipping only lowers
    the evidence: the wealth is a nonnegative supermartingale from 1, and by Ville's
    inequality it ever reaches 1/alpha with probability at most alpha. A tie's expected
    log wealth grows by ``w**2 / (2 s**2)`` per observation: one observation decides when
    the noise is below ``w / sqrt(2 log(1/alpha))`` (2.4 % at worth 5 %, alpha 0.1)."""
    xs = np.asarray(x, dtype=float)
    ss = np.maximum(np.asarray(scales, dtype=float), MIN_SCALE)
    if xs.shape != ss.shape:
        raise ValueError("one scale per observation")
    w = math.log1p(float(worth))
    if not w > 0:
        raise ValueError("worth must be > 0")
    lam = w / ss ** 2
    evidence = np.minimum(w - xs, w + CLIP_SCALES * ss)
    return np.cumsum(lam * evidence - 0.5 * (lam * ss) ** 2)


