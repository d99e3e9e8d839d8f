"""Kept measurements and the near-tie rules (issue 32): the futility test's guarantee on
seeded synthetic data, the store's reuse and refresh rules, the one-sided futility of
`compare`, and the concurrent passes and looks on real runs (no assertion on a time)."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

import codegym.timing.kept as K
from codegym.timing.comparison import decide
from codegym.timing.measurement import measure
from codegym.timing.sequential import CLIP_SCALES, futility_log_wealth

W = 0.05


def _futile_rate(centre: float, scale: float, n: int, trials: int, alpha: float, seed: int, kind: str = "normal"):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(trials):
        if kind == "normal":
            x = centre + rng.normal(0.0, scale, n)
        else:  # slow bursts: 10 % of observations much slower (only ever toward futility)
            x = centre + rng.normal(0.0, scale, n) - (rng.random(n) < 0.1) * rng.exponential(0.2, n)
        lw = futility_log_wealth(x, [scale] * n, W)
        hits += bool((lw >= math.log(1 / alpha)).any())
    return hits / trials


@pytest.mark.parametrize("scale", [0.01, 0.02, 0.04])
def test_futility_ever_stops_a_worthy_candidate_at_most_alpha_of_the_time(scale):
    """Ville on the futility test: a candidate exactly `worth` faster, looked at after every
    one of 12 observations, is ever called futile at most alpha of the time (Gaussian noise
    of the stated scale, the rule's assumption); a 1.1x one almost never."""
    alpha = 0.1
    at_worth = _futile_rate(math.log1p(W), scale, 12, 3000, alpha, seed=1)
    assert at_worth <= alpha, at_worth
    assert _futile_rate(math.log(1.1), scale, 12, 3000, alpha, seed=2) <= 0.02


def test_futility_decides_a_tie_in_one_look_when_the_noise_is_small():
    """A tie's log wealth grows by w**2 / (2 s**2) per look: at 1.5 % noise one look at the
    baseline's own speed is enough at alpha 0.1; at 4 % it takes several."""
    assert futility_log_wealth([0.0], [0.015], W)[-1] >= math.log(10)
    assert futility_log_wealth([0.0], [0.04], W)[-1] < math.log(10)
    assert futility_log_wealth([0.0] * 6, [0.04] * 6, W)[-1] >= math.log(10)


def test_one_wild_slow_observation_moves_the_wealth_by_a_bounded_step():
    s = 0.02
    w = math.log1p(W)
    lam = w / s ** 2
    bounded = lam * (w + CLIP_SCALES * s) - 0.5 * (lam * s) ** 2
    assert futility_log_wealth([-5.0], [s], W)[-1] == pytest.approx(bounded)
    assert futility_log_wealth([-5.0], [s], W)[-1] == futility_log_wealth([-0.5], [s], W)[-1]
    with pytest.raises(ValueError):
        futility_log_wealth([0.0, 0.1], [0.02], W)


def test_a_near_tie_stops_on_the_bound_or_the_futility_rule():
    ref = K.Reference.of_samples([1.00, 1.01, 0.99, 1.00, 1.02])
    assert ref.scale >= K.MIN_SCALE and ref.median == pytest.approx(1.0)
    slow = K.NearTie(bound=1.0)
    assert slow.observe(1.03, ref) == "slow_bound"
    tie = K.NearTie(bound=None)
    why = ""
    for _ in range(K.MAX_LOOKS):
        why = why or tie.observe(0.995, ref)
    assert why == "futility" and tie.details()["stopped"] == "futility"
    fast = K.NearTie(bound=1.0)
    assert not any(fast.observe(0.8, ref) for _ in range(10))          # 1.25x faster: never stopped
    off = K.NearTie(alpha=None, bound=None)
    assert not any(off.observe(1.0, ref) for _ in range(10))           # no rule: never stopped


def test_compare_can_stop_once_a_worthy_speedup_is_ruled_out():
    """`futile="speedup"`: a comparison stops when its interval lies below +log(1 + worth),
    even when it still admits a large slowdown (a reward paying only speedups needs no more)."""
    rng = np.random.default_rng(3)
    d = list(-0.02 + rng.normal(0.0, 0.03, 20))   # b slightly slower, noisy
    est, lo, hi, cov, sig, settled_band = decide(d, 0.99, 0.01, "cs", 0, 0.05, "band")
    assert hi < math.log(1.05) and lo < -math.log(1.05)
    assert not settled_band
    assert decide(d, 0.99, 0.01, "cs", 0, 0.05, "speedup")[5]


# =========================================================================== the store


class _Box:
    """A stand-in sandbox key (weak-referenceable)."""


def _counting():
    """(calls, compute): ``compute()`` returns how often it was called and a slowness of 1."""
    calls: list[int] = []

    def compute():
        calls.append(1)
        return len(calls), 1.0
    return calls, compute


def test_a_kept_value_is_reused_then_measured_again_when_the_machine_moved_or_it_aged():
    sb = _Box()
    calls, compute = _counting()
    v, how = K.keep(sb, ("k",), compute, speed_now=1.0)
    assert (v, how["kept"], how["why"]) == (1, False, "first")
    v, how = K.keep(sb, ("k",), compute, speed_now=1.05)           # within DRIFT_LIMIT: reused
    assert (v, how["kept"], how["uses"]) == (1, True, 2)
    v, how = K.keep(sb, ("k",), compute, speed_now=1.25)           # the machine moved: measured again
    assert v == 2 and not how["kept"] and "moved" in how["why"]
    v, how = K.keep(sb, ("k",), compute, speed_now=None, max_age_s=0.0)   # aged
    assert v == 3 and "older" in how["why"]
    K.forget_kept(sb)
    assert K.keep(sb, ("k",), compute)[0] == 4


def test_concurrent_callers_of_one_key_measure_it_once():
    sb = _Box()
    calls = []
    gate = threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)
        return "m", None

    out = []
    threads = [threading.Thread(target=lambda: out.append(K.keep(sb, ("x",), compute)[0])) for _ in range(6)]
    for t in threads:
        t.start()
    gate.set()
    for t in threads:
        t.join(10)
    assert out == ["m"] * 6 and len(calls) == 1


def test_a_failed_measurement_is_not_kept():
    sb = _Box()

    def boom():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        K.keep(sb, ("f",), boom)
    assert K.keep(sb, ("f",), lambda: ("ok", None))[0] == "ok"


# =========================================================================== real runs


LOOP = "import sys\nn = int(sys.stdin.readline())\nprint(sum(i * i % 7 for i in range(n)))\n"


def test_concurrent_passes_time_every_input_and_check_every_output(sb):
    b = sb.build("python", {"main.py": LOOP})
    inputs = ["20000\n", "30000\n", "25000\n"]
    p = K.measure_passes(sb, b, inputs, n=3)
    assert len(p.seconds) == len(p.raw) == 3 and all(x > 0 for x in p.seconds)
    assert p.median > 0 and K.Reference.of_passes(p).n == 3

    def wrong(i, r):
        return ("wrong_answer", "no") if i == 1 else None
    with pytest.raises(K.PassFailed) as e:
        K.measure_passes(sb, b, inputs, n=2, verify=wrong)
    assert e.value.status == "wrong_answer"


def test_a_measurement_stops_when_its_look_says_so(sb):
    b = sb.build("python", {"main.py": LOOP})
    seen = []

    def look(raw, probes):
        seen.append(len(raw))
        return len(raw) >= 2

    m = measure(sb, b, ["20000\n"], repeats=5, max_repeats=10, look=look)
    assert m.ok and m.stopped == "look" and m.n == 2 and seen == [1, 2]
    m = measure(sb, b, ["20000\n"], repeats=3, max_repeats=3)
    assert m.ok and m.stopped == ""


# =========================================================================== seeded kept passes


def test_kept_passes_are_seeded_by_their_users_and_shared():
    """`KeptPasses`: nothing kept at first (why "first"); each `grow` takes one pass and adds
    it to the passes kept for the key, so a second user (another env of the process) starts
    from what the first added, and concurrent users add to one pool."""
    sb = _Box()
    taken = []

    def take():
        taken.append(1)
        return 1.0 + 0.01 * len(taken), 1.0

    first = K.KeptPasses(sb, ("b",), "cpu", take, speed_now=1.0, target=3)
    assert first.passes is None and first.short and first.details()["why"] == "first"
    first.grow()
    assert first.n == 1 and first.reference().n == 1
    second = K.KeptPasses(sb, ("b",), "cpu", take, speed_now=1.0, target=3)
    assert second.n == 1 and second.how["kept"] and second.how["uses"] == 2
    second.grow()
    first.grow()                                 # adds to the pool the second user extended
    assert first.n == 3 and not first.short and first.details()["added"] == 2
    third = K.KeptPasses(sb, ("b",), "cpu", take, speed_now=1.0, target=3)
    assert third.n == 3 and not third.short and len(taken) == 3
    moved = K.KeptPasses(sb, ("b",), "cpu", take, speed_now=1.5, target=3)   # the machine moved: afresh
    assert moved.n == 0 and "moved" in moved.how["why"]


def test_a_pass_is_kept_in_seconds_at_the_reference_speed():
    p = K.Passes("cpu").add(1.1, 1.1).add(2.0, None)
    assert p.seconds == pytest.approx([1.0, 2.0]) and p.raw == [1.1, 2.0] and p.speeds == [1.1]


def test_a_short_reference_claims_the_prior_spread_not_its_own():
    """One pass shows no spread: its reference's scale comes from the prior (and the median's
    error at n = 1), not MIN_SCALE; with more passes the samples' own spread weighs in."""
    one = K.Reference.of_samples([1.0], prior=0.03)
    assert one.scale == pytest.approx(math.hypot(0.03, 0.03 * math.sqrt(math.pi / 2)))
    assert K.Reference.of_samples([1.0]).scale == K.MIN_SCALE          # (no prior: what it was)
    tight = [1.0, 1.001, 0.999, 1.0, 1.0005, 0.9995]
    assert K.MIN_SCALE < K.Reference.of_samples(tight, prior=0.03).scale < one.scale
    p = K.Passes("cpu")
    for x in tight:
        p.add(x, None)
    assert K.Reference.of_passes(p).scale == K.Reference.of_samples(tight, prior=K.PASS_PRIOR).scale


def test_a_seeded_tie_is_stopped_and_a_real_speedup_rarely_on_a_short_reference():
    """Simulated looks as `look_at` takes them on a cold task (one baseline pass before the
    first look, one more before each later look while fewer than KEPT_PASSES), with the slow
    bound and the futility rule, at 2 % noise per pass: most ties stop within the looks, a
    1.1x candidate almost never (seeded, no timing)."""
    rng = np.random.default_rng(5)
    ties = fast = 0
    trials = 400
    for _ in range(trials):
        for true_x, hit in ((0.0, "tie"), (math.log(1.1), "fast")):
            pool: list[float] = [float(np.exp(rng.normal(0, 0.02)))]
            tie = K.NearTie(bound=1.0)
            first = K.Reference.of_samples(pool, prior=K.PASS_PRIOR)
            stopped = tie.observe(float(np.exp(-true_x + rng.normal(0, 0.02))), first)
            n = 1
            while not stopped and n < K.MAX_LOOKS:
                n += 1
                if len(pool) < K.KEPT_PASSES:
                    pool.append(float(np.exp(rng.normal(0, 0.02))))
                ref = K.Reference.of_samples(pool, prior=K.PASS_PRIOR)
                stopped = tie.observe(float(np.exp(-true_x + rng.normal(0, 0.02))), ref)
            if stopped and hit == "tie":
                ties += 1
            elif stopped:
                fast += 1
    assert ties / trials >= 0.8, ties
    assert fast / trials <= 0.02, fast


# =========================================================================== drift rechecks


def _never():
    raise AssertionError("recheck called")


class _Rechecks:
    def __init__(self, *values):
        self.values = list(values)
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return self.values.pop(0)


def test_a_drift_seen_in_one_reading_is_read_twice_more_before_an_entry_is_dropped():
    """`_stale`: a drift beyond DRIFT_LIMIT in one reading is judged on the median of it and two
    more readings (`recheck`): not confirmed, the entry is reused; confirmed, it is measured again."""
    entry = K.Kept("v", 1.0, time.monotonic())
    lim = K.DRIFT_LIMIT
    burst = _Rechecks(1.02, 0.99)
    assert K._stale(entry, 1.3, K.MAX_AGE_S, lim, burst) == "" and burst.calls == 2
    moved = _Rechecks(1.25, 1.3)
    assert "moved" in K._stale(entry, 1.3, K.MAX_AGE_S, lim, moved) and moved.calls == 2
    assert "moved" in K._stale(entry, 1.3, K.MAX_AGE_S, lim, _Rechecks(1.25, 1.0))   # median 1.25
    assert K._stale(entry, 1.3, K.MAX_AGE_S, lim, _Rechecks(1.0, 1.05)) == ""          # median 1.05
    assert "moved" in K._stale(entry, 0.8, K.MAX_AGE_S, lim, _Rechecks(0.85, 1.0))    # faster too
    # a failed recheck (None) saves nothing: the reading stands alone
    assert "moved" in K._stale(entry, 1.3, K.MAX_AGE_S, lim, _Rechecks(None, None))
    # no drift, no recheck; without a recheck, one reading decides (as `stale`)
    assert K._stale(entry, 1.05, K.MAX_AGE_S, lim, _never) == ""
    assert "moved" in K._stale(entry, 1.3, K.MAX_AGE_S, lim, None)
    assert K._stale(entry, None, K.MAX_AGE_S, lim, _never) == ""
    assert K._stale(K.Kept("v", None, time.monotonic()), 1.3, K.MAX_AGE_S, lim, _never) == ""


def test_an_aged_entry_is_never_rechecked():
    old = K.Kept("v", 1.0, time.monotonic() - 1000.0)
    assert "older" in K._stale(old, 1.3, 600.0, K.DRIFT_LIMIT, _never)     # aged and drifted
    assert "older" in K._stale(old, 1.0, 600.0, K.DRIFT_LIMIT, _never)     # aged only
    assert "older" in K._stale(old, 1.0, 0.0, K.DRIFT_LIMIT, _never)


def test_keep_peek_and_kept_passes_recheck_a_drift():
    sb = _Box()
    calls, compute = _counting()
    K.keep(sb, ("r",), compute, speed_now=1.0)
    v, how = K.keep(sb, ("r",), compute, speed_now=1.4, recheck=_Rechecks(1.0, 1.01))
    assert (v, how["kept"], how["uses"]) == (1, True, 2)           # a burst: reused
    v, how = K.keep(sb, ("r",), compute, speed_now=1.4, recheck=_Rechecks(1.35, 1.4))
    assert v == 2 and not how["kept"] and "moved" in how["why"]    # confirmed: measured again
    v, how = K.peek(sb, ("r",), speed_now=1.4, recheck=_Rechecks(1.0, 1.0))
    assert v == 2 and how["kept"]
    v, how = K.peek(sb, ("r",), speed_now=1.4, recheck=_Rechecks(1.4, 1.4))
    assert v is None and "moved" in how["why"]
    assert K.peek(sb, ("r",), speed_now=1.0)[0] is None            # a confirmed drift forgot it

    def take():
        return 1.0, 1.0

    kp = K.KeptPasses(sb, ("p",), "cpu", take, speed_now=1.0)
    kp.grow()
    burst = K.KeptPasses(sb, ("p",), "cpu", take, speed_now=1.5, recheck=_Rechecks(1.0, 1.0))
    assert burst.n == 1 and burst.how["kept"]
    moved = K.KeptPasses(sb, ("p",), "cpu", take, speed_now=1.5, recheck=_Rechecks(1.5, 1.5))
    assert moved.n == 0 and "moved" in moved.how["why"]


# =========================================================================== the learned pass prior


def _pool(sb, key, seconds):
    """Put a pool of passes with these seconds into the store (as `KeptPasses.grow` does)."""
    def merge(old):
        p = old.copy() if old is not None else K.Passes("cpu")
        for s in seconds:
            p.add(s, None)
        return p, None
    return K.extend(sb, key, merge)


def test_pass_spread_pools_every_kept_pool_around_its_own_mean():
    sb = _Box()
    assert K.pass_spread(sb) == (None, 0)
    d = [0.0, 0.02, -0.02]
    _pool(sb, ("a",), [math.exp(x) for x in d])                 # around 1 s
    _pool(sb, ("b",), [5.0 * math.exp(x) for x in d])           # around 5 s: the means do not count
    _pool(sb, ("one",), [3.0])                                   # one pass: no degree of freedom
    K.keep(sb, ("m",), lambda: ("a measurement, not passes", None))   # not Passes: ignored
    sd, dof = K.pass_spread(sb)
    assert dof == 4 and sd == pytest.approx(math.sqrt(2 * 0.0008 / 4))
    other = _Box()
    assert K.pass_spread(other) == (None, 0)                     # per sandbox
    K.forget_kept(sb)
    assert K.pass_spread(sb) == (None, 0)


def test_pass_prior_is_learned_from_learned_min_dof_on_and_floored():
    sb = _Box()
    assert K.pass_prior(sb) == (K.PASS_PRIOR, K.PRIOR_PASSES)
    spread = 0.08
    xs = [math.exp(spread * (1 if i % 2 else -1)) for i in range(K.LEARNED_MIN_DOF)]   # one dof short
    _pool(sb, ("a",), xs)
    sd, dof = K.pass_spread(sb)
    assert dof == K.LEARNED_MIN_DOF - 1 and sd > K.PASS_PRIOR
    assert K.pass_prior(sb) == (K.PASS_PRIOR, K.PRIOR_PASSES)
    _pool(sb, ("a",), [math.exp(spread)])                        # one more pass: learned
    sd, dof = K.pass_spread(sb)
    assert dof == K.LEARNED_MIN_DOF
    assert K.pass_prior(sb) == (pytest.approx(sd), K.LEARNED_PASSES)
    # a kept baseline of one pass borrows the learned spread
    kp = K.KeptPasses(sb, ("new",), "cpu", lambda: (2.0, None), speed_now=None)
    kp.grow()
    assert kp.reference().sd == pytest.approx(sd) and kp.reference().n == 1
    K.forget_kept(sb)
    assert K.pass_prior(sb) == (K.PASS_PRIOR, K.PRIOR_PASSES)
    quiet = _Box()
    _pool(quiet, ("q",), [1.0] * (K.LEARNED_MIN_DOF + 3))       # no spread at all: the floor
    assert K.pass_spread(quiet) == (0.0, K.LEARNED_MIN_DOF + 2)
    assert K.pass_prior(quiet) == (K.MIN_SCALE, K.LEARNED_PASSES)
    assert K.KeptPasses(quiet, ("q",), "cpu", lambda: (1.0, None)).reference().sd == pytest.approx(
        math.sqrt(K.LEARNED_PASSES * K.MIN_SCALE ** 2 / (K.LEARNED_PASSES + K.LEARNED_MIN_DOF + 2)))


# =========================================================================== undecided near-ties (looked_times)


def _tie(seconds, ref):
    tie = K.NearTie(alpha=None, bound=None)          # (no rule: the looks go on)
    for s in seconds:
        tie.observe(s, ref)
    return tie


def _gate(t, tb, noise, noise_b, ratio=5.0):
    from codegym.wrappers.staged import PerfTimes, improvement

    return improvement(PerfTimes(t=t, t_baseline=tb, t_reference=tb / ratio, source="looks",
                                 noise=noise, noise_baseline=noise_b, noise_reference=noise_b))


def test_a_reference_error_is_the_noise_of_its_median():
    ref = K.Reference.of_samples([1.0, 1.02, 0.98, 1.01], prior=0.03)
    assert ref.error == pytest.approx(ref.sd * math.sqrt(math.pi / 2 / 4))
    assert ref.scale == pytest.approx(max(K.MIN_SCALE, math.hypot(ref.sd, ref.error)))
    heavy = K.Reference.of_samples([1.0, 1.0, 1.0], prior=0.03, prior_weight=4.0)
    assert heavy.sd == pytest.approx(math.sqrt(4 * 0.03 ** 2 / (4 + 2)))
    assert K.Reference.of_samples([1.0, 1.0, 1.0]).error == 0.0


def test_looks_at_the_baselines_speed_earn_no_improvement():
    ref = K.Reference.of_samples([1.0, 1.01, 0.99, 1.0, 1.005], prior=K.PASS_PRIOR)
    t, tb, noise, noise_b = K.looked_times(_tie([1.0, 1.0, 1.0, 1.0], ref), ref)
    assert (t, tb) == (pytest.approx(1.0), ref.median) and noise > 0 and noise_b > 0
    assert _gate(t, tb, noise, noise_b)[0] <= 0
    # looks 2 % faster than the kept median: within the noise of the two medians, no improvement
    t, tb, noise, noise_b = K.looked_times(_tie([0.98, 0.985, 0.975, 0.98], ref), ref)
    assert tb / t - 1 > 0 and _gate(t, tb, noise, noise_b)[0] <= 0


def test_looks_clearly_faster_pass_the_gate():
    ref = K.Reference.of_samples([1.0, 1.01, 0.99, 1.0, 1.005], prior=K.PASS_PRIOR)
    looks = [1 / 1.3, 1 / 1.31, 1 / 1.29, 1 / 1.3]
    t, tb, noise, noise_b = K.looked_times(_tie(looks, ref), ref)
    imp, _ = _gate(t, tb, noise, noise_b, ratio=5.0)
    assert imp == pytest.approx((tb - t) / (tb - tb / 5.0)) and imp > 0


def test_looked_times_noise_is_z_errors_of_each_median():
    ref = K.Reference.of_samples([1.0, 1.03, 0.97, 1.0, 1.01], prior=K.PASS_PRIOR)
    seconds = [0.95, 0.97, 0.96]
    tie = _tie(seconds, ref)
    cand = K.Reference.of_samples(seconds, prior=0.05, prior_weight=2.0)
    t, tb, noise, noise_b = K.looked_times(tie, ref, prior=0.05, prior_weight=2.0, z=1.0)
    assert t == pytest.approx(0.96) and tb == ref.median
    assert noise == pytest.approx(cand.error) and noise_b == pytest.approx(ref.error)
    wide = K.looked_times(tie, ref, prior=0.05, prior_weight=2.0, z=4.0)
    assert wide[2] == pytest.approx(4 * noise) and wide[3] == pytest.approx(4 * noise_b)
    default = K.looked_times(tie, ref, prior=0.05, prior_weight=2.0)
    assert default[2] == pytest.approx(K.UNDECIDED_Z * noise)
    # a wider prior, a wider candidate noise
    assert K.looked_times(tie, ref, prior=0.10, prior_weight=2.0, z=1.0)[2] > noise
    with pytest.raises(ValueError):
        K.looked_times(K.NearTie(), ref)


def _tie_with(xs, ref):
    tie = K.NearTie(alpha=None, bound=None)
    for x in xs:
        tie.observe(ref.median * math.exp(-x), ref)
    return tie


def test_leaning_to_a_tie_splits_by_the_noise_and_keeps_a_real_1_1x():
    """The split is the worth on a quiet pool, shrinks with the noise so that a real 1.1x
    does not lean to a tie, and never goes below half the worth."""
    w = math.log1p(K.DEFAULT_MIN_WORTH["cpu"]) if hasattr(K, "DEFAULT_MIN_WORTH") else math.log1p(0.05)
    quiet = K.Reference.of_samples([1.0, 1.004, 0.996, 1.002, 0.998])            # sd ~0.3 %
    assert _tie_with([0.04, 0.04], quiet).leans_tie(quiet)                       # below w (4.9 %)
    assert not _tie_with([0.06, 0.06], quiet).leans_tie(quiet)
    noisy = K.Reference.of_samples([1.0, 1.06, 0.94, 1.05, 0.95])                # sd ~5 %
    assert not _tie_with([0.03, 0.03], noisy).leans_tie(noisy)                   # the floor: w / 2
    assert _tie_with([0.02, 0.02], noisy).leans_tie(noisy)
    mid = K.Reference.of_samples([1.0, 1.035, 0.965, 1.03, 0.97])                # sd ~3 %
    tie = _tie_with([0.045, 0.045], mid)
    s = math.hypot(mid.sd * math.sqrt(math.pi / 4), mid.error)
    split = max(w / 2, min(w, math.log1p(K.KEEP_SPEEDUP) - K.LOSS_Z * s))
    assert w / 2 < split < w and tie.leans_tie(mid) == (0.045 < split)
    assert not K.NearTie().leans_tie(mid)                                        # no looks: nothing leans
