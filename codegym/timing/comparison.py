"""Interleaved A/B comparison of two builds: `Comparison`, `decide` and `compare`.

`compare` takes pairs of samples whose runs of A and B alternate, estimates the
speedup ``t(a)/t(b)`` from the paired log-ratios, looks at the data on a fixed
schedule of pair counts (the error rate spent over the looks), and stops when
`decide` finds the answer clear. Instruction counts are compared exactly. How and
why: docs/timing.md.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from codegym.core.limits import Limits
from codegym.sandbox.types import Build, RunRequest, Sandbox
from codegym.timing.calibration import calibration_after, sample_calibration
from codegym.timing.measurement import (
    Measurement,
    Sampler,
    Verifier,
    as_requests,
    build_problem,
    jsonable,
    noise_floor,
    normalize,
    summarize,
)
from codegym.timing.metrics import DEFAULT_MIN_EFFECT, check_metric, passes_per_sample
from codegym.timing.stats import METHODS, paired_interval, unknown_method


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
        return jsonable(asdict(self))


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


def _pair_sample(sa: Sampler, sb: Sampler, k: int, a_first: bool) -> tuple[float | None, float | None]:
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
        problem = build_problem(b)
        if problem:
            cmp.ok, cmp.reason = False, f"build {name}: {problem}"
            return cmp
    if method not in METHODS:
        raise unknown_method(method)
    reqs = as_requests(inputs)
    reqs_b = reqs if inputs_b is None else as_requests(inputs_b)
    if len(reqs_b) != len(reqs):
        raise ValueError(f"inputs_b has {len(reqs_b)} requests, inputs {len(reqs)}: they must match")
    k = passes_per_sample(metric, min_of)
    sides = {"a": Sampler(sandbox, build_a, reqs, metric, limits, verify_a),
             "b": Sampler(sandbox, build_b, reqs_b, metric, limits, verify_b)}
    cal_before = sample_calibration(sandbox, metric) if calibrate else None
    if metric == "instructions":
        failed = _compare_exact(cmp, sides, eff)
    else:
        failed = _warm_up(sides, warmups) or _compare_paired(
            cmp, sides["a"], sides["b"], k, eff, repeats=repeats, max_pairs=max_pairs, alpha=alpha,
            budget_s=budget_s, method=method, seed=seed, t0=t0)
    if failed:
        s = sides[failed]
        cmp.ok, cmp.reason = False, f"build {failed}: {s.error or 'run failed'}"
        cmp.failed, cmp.failure = failed, s.failure
    else:
        _finish(cmp, sides, k, sandbox, calibrate, cal_before)
    cmp.elapsed_s = time.monotonic() - t0
    return cmp


def _warm_up(sides: dict[str, Sampler], warmups: int) -> str | None:
    """`warmups` passes of each build, discarded; which build's run failed, if one did."""
    for _ in range(max(0, warmups)):
        for which, s in sides.items():
            if s.sample(1) is None:
                return which
    return None


def _compare_exact(cmp: Comparison, sides: dict[str, Sampler], eff: float) -> str | None:
    """Instruction counts: each build measured twice (A B B A); which build's run failed, if one did."""
    xs: dict[str, list[float]] = {"a": [], "b": []}
    for which in ("a", "b", "b", "a"):
        v = sides[which].sample(1)
        if v is None:
            return which
        xs[which].append(v)
    _finish_exact(cmp, xs["a"], xs["b"], eff)
    return None


def _compare_paired(cmp: Comparison, sa: Sampler, sb: Sampler, k: int, eff: float, *, repeats: int,
                    max_pairs: int, alpha: float, budget_s: float, method: str, seed: int,
                    t0: float) -> str | None:
    """Pairs until a look settles the question, or pairs or budget run out; the last look fills
    `cmp`. Returns which build's run failed, if one did."""
    looks = _look_schedule(repeats, max_pairs)
    level = 1.0 - alpha / len(looks)
    xa, xb, d = [], [], []
    li = 0
    t_pairs = time.monotonic()
    while True:
        va, vb = _pair_sample(sa, sb, k, a_first=len(d) % 2 == 0)
        if va is None:
            return "a"
        if vb is None:
            return "b"
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
        look = _look(xa, xb, d, cmp.metric, level, eff, max_pairs, method, seed)
        if look["decided"] or last or li >= len(looks):
            break
    for name, value in look.items():
        setattr(cmp, name, value)
    cmp.log_ratios = d
    cmp.n_pairs = len(d)
    return None


def _look(xa: list[float], xb: list[float], d: list[float], metric: str, level: float, eff: float,
          max_pairs: int, method: str, seed: int) -> dict:
    """One look at the pairs so far: the Comparison's fields should the loop stop here."""
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
    return {"speedup": math.exp(est), "ci": (math.exp(lo), math.exp(hi)), "significant": sig,
            "confidence": cov, "noise_floor": floor, "decided": settled, "a": ma, "b": mb}


def _finish(cmp: Comparison, sides: dict[str, Sampler], k: int, sandbox: Sandbox, calibrate: bool,
            cal_before: str | None) -> None:
    """Passes and runs of both builds on their measurements, and the calibration."""
    for m in (cmp.a, cmp.b):
        m.min_of = k if cmp.metric != "instructions" else 1
    cmp.a.runs, cmp.b.runs = sides["a"].runs, sides["b"].runs
    if calibrate:
        cal, note = calibration_after(sandbox, cmp.metric, cal_before)
        cmp.calibration = cal
        for m in (cmp.a, cmp.b):
            normalize(m, cal)
        if note:
            cmp.reason = note


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
