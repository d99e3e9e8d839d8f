"""The anytime-valid comparison's statistics, on seeded synthetic log-ratios (no runs).

Every draw is seeded, so a rate asserted here is a fixed number, not a chance event:
the assertions check the guarantees (an interval that ever excludes the truth at most
alpha of the time, however often it is looked at) with the margin the seeds give.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import codegym.timing as T
from codegym.timing import sequential
from codegym.timing.load import STEAL_SPIKE, SpikeFilter
from codegym.timing.probe import speeds
from codegym.timing.sequential import cs_interval, cs_wealth
from codegym.timing.stats import hodges_lehmann, paired_interval, t_ppf


def _streams(kind: str, n: int, trials: int, seed: int, centre: float = 0.0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        if kind == "normal":
            x = rng.normal(0.0, 0.03, n)
        elif kind == "heavy":  # Student t with 2 degrees of freedom: no variance
            x = rng.standard_t(2, n) * 0.02
        else:  # mostly quiet, 15 % of pairs hit by a burst on one side or the other
            hit = rng.random(n) < 0.15
            x = np.where(hit, rng.choice([-1.0, 1.0], n) * rng.exponential(0.2, n), rng.normal(0.0, 0.01, n))
        out.append(centre + x)
    return out


@pytest.mark.parametrize("kind", ["normal", "heavy", "bursts"])
def test_the_interval_ever_excludes_the_truth_at_most_alpha_of_the_time(kind):
    """Ville: looking after every one of 40 pairs, the chance the interval *ever* excludes the
    true centre stays below alpha (a fixed-sample interval looked at 40 times would not)."""
    alpha = 0.05
    streams = _streams(kind, 40, 250, seed=11, centre=0.07)
    ever = sum(cs_wealth(d, 0.07) >= 1 / alpha for d in streams)
    assert ever / len(streams) <= alpha
    # the fixed-sample t interval, looked at after every pair from the 5th, does worse
    q = {n: t_ppf(1 - alpha / 2, n - 1) for n in range(5, 41)}
    fixed = 0
    for d in streams:
        for n in range(5, 41):
            x = d[:n]
            if abs(x.mean() - 0.07) > q[n] * x.std(ddof=1) / math.sqrt(n):
                fixed += 1
                break
    assert fixed / len(streams) > alpha


def test_wealth_is_a_running_maximum_and_the_interval_shrinks():
    d = _streams("normal", 60, 1, seed=3, centre=math.log(1.1))[0]
    paths = sequential.log_wealth_paths(d, [0.0, math.log(1.1)])
    assert np.all(np.diff(paths, axis=1) >= 0)  # a running maximum never falls
    assert paths[0, -1] > math.log(1000) > paths[1, -1]  # against 0: overwhelming; the truth: not
    widths = []
    for n in (12, 24, 48):
        lo, hi = cs_interval(d[:n], 0.05)
        assert lo <= math.log(1.1) <= hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]


def test_too_few_pairs_give_an_unbounded_interval_and_a_clear_effect_decides_within_a_dozen():
    d = np.full(30, math.log(2.0)) + np.random.default_rng(5).normal(0, 0.02, 30)
    assert cs_interval(d[:3], 0.01) == (-math.inf, math.inf)
    first = next(n for n in range(2, 31) if cs_interval(d[:n], 0.01)[0] > 0)
    assert 8 <= first <= 12  # (2**7 < 2/alpha: no bet on signs alone can be sure earlier)
    est, lo, hi, cov = paired_interval(d, 0.99, "cs")
    assert lo < est < hi and cov == 0.99 and est == pytest.approx(hodges_lehmann(d))


def test_decide_cs_significance_needs_the_interval_beyond_the_noise_floor():
    rng = np.random.default_rng(8)
    # a real 0.5 % difference, measured very precisely: the CI excludes 0 but not the 1 % floor
    d = np.full(40, math.log(1.005)) + rng.normal(0, 1e-4, 40)
    est, lo, hi, cov, sig, settled = T.decide(d, 0.99, floor=0.01, method="cs", futility_floor=0.05)
    assert lo > 0 and not sig and settled  # futile: the interval rules out 5 %
    # a 1.1x speedup: significant; a noisy 2 % one: neither significant nor futile yet
    d = np.full(16, math.log(1.1)) + rng.normal(0, 0.01, 16)
    assert T.decide(d, 0.99, 0.01, "cs", futility_floor=0.05)[4:] == (True, True)
    d = np.full(16, math.log(1.02)) + rng.normal(0, 0.05, 16)
    *_, sig, settled = T.decide(d, 0.99, 0.01, "cs", futility_floor=0.05)
    assert not sig and not settled


def test_futility_only_when_the_interval_rules_out_the_smallest_speedup_worth_rewarding():
    """A real 4 % speedup must not be stopped as 'futile' while its interval still admits 5 %,
    however small its estimate looked early on; an identical pair is, once its interval is
    inside +-5 %."""
    rng = np.random.default_rng(9)
    for _ in range(12):
        d = rng.normal(math.log(1.04), 0.03, 30)
        for n in range(4, 31, 2):
            est, lo, hi, cov, sig, settled = T.decide(d[:n], 0.99, 0.01, "cs", futility_floor=0.05)
            if settled and not sig:
                assert hi < math.log(1.05) and lo > -math.log(1.05)
    d = rng.normal(0.0, 0.01, 30)
    assert any(T.decide(d[:n], 0.99, 0.01, "cs", futility_floor=0.05)[5] for n in range(2, 31))


def test_the_sequential_rule_replayed_on_identical_streams_rarely_fires():
    """The whole rule of `compare` (look after every pair, stop when significant or futile):
    identical programs come out significant at most alpha of the time."""
    alpha, e, w = 0.01, math.log1p(0.01), math.log1p(0.05)
    false = 0
    streams = _streams("bursts", 30, 200, seed=21) + _streams("normal", 30, 200, seed=22)
    for d in streams:
        paths = sequential.log_wealth_paths(d, [-w, -e, 0.0, e, w]) >= math.log(1 / alpha)
        sig = paths[1] & paths[2] & paths[3]
        fut = paths[0] & paths[4]
        t_sig = int(np.argmax(sig)) if sig.any() else 99
        t_fut = int(np.argmax(fut)) if fut.any() else 99
        false += t_sig < 99 and t_sig <= t_fut
    assert false / len(streams) <= alpha


def test_scales_are_predictable():
    d = [0.0, 0.0, 0.0, 5.0, 0.01, -0.01]
    s = sequential.predictable_scales(d)
    assert s[0] == s[1] == s[2] == sequential.PRIOR_SCALE
    # pair i's own value never enters its scale (so a bet built on it stays fair) ...
    assert s[3] == sequential.predictable_scales([0.0, 0.0, 0.0, -7.0])[3]
    # ... and one wild pair does not blow up the scales after it (a robust spread)
    assert s[4] < sequential.PRIOR_SCALE and s[5] < sequential.PRIOR_SCALE
    wild = sequential.predictable_scales([0.0, 0.02, -0.02, 0.01, 0.5, -0.5, 0.6, -0.6, 0.0])
    assert wild[-1] > wild[4]  # a spread that lasts is followed


def test_spike_filter_judges_against_the_comparisons_own_history():
    f = SpikeFilter(max_rejects=2)
    # a machine busy all the time: every run waits ~60 % of its time -- nothing rejected
    for v in (0.6, 0.62, 0.58, 0.61, 0.6, 0.59, 0.63):
        assert f.check({"preempted": v, "psi": 0.9, "steal": 0.0}) is None
    assert f.check({"preempted": 0.97, "psi": 0.9, "steal": 0.0}) is not None  # a spike
    assert f.check({"preempted": 0.6, "psi": 0.9, "steal": STEAL_SPIKE * 2}) is not None  # the hypervisor
    assert f.check({"preempted": 0.99, "psi": None, "steal": None}) is None  # max_rejects reached
    assert f.rejected == 2
    fresh = SpikeFilter()
    assert fresh.check({"preempted": 0.99}) is None  # no history yet: nothing to stand out from


def test_probe_speeds_pool_neighbouring_samples():
    probes = [1.0, 1.0, 3.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    sp = speeds(probes, probe_ref=1.0, smooth=2)
    assert sp[2] == 1.0  # one wild probe run is outvoted by its neighbours
    assert sp[-1] == 2.0  # a lasting slowdown is followed
    assert speeds([0.5], 0.25) == [2.0]
