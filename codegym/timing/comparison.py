"""Interleaved A/B comparison of two builds: `Comparison`, `decide`, `CompareSettings` and `compare`.

`compare` takes pairs of samples whose runs of A and B alternate (which goes first is a
seeded coin), re-measures a pair that saw a load spike, estimates the speedup
``t(a)/t(b)`` from the paired log-ratios, looks after every pair at an anytime-valid
confidence sequence (or, for the fixed-sample methods, on a schedule with the error rate
spent over the looks), and stops when `decide` finds the answer clear. Instruction
counts are compared exactly. How and why: docs/timing.md.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from codegym.core.groups import grouped
from codegym.core.limits import Limits
from codegym.sandbox.types import Build, RunRequest, Sandbox
from codegym.timing.calibration import calibration_after, sample_calibration
from codegym.timing.load import SpikeFilter, read_host_load, runs_here
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
from codegym.timing.metrics import DEFAULT_MIN_EFFECT, DEFAULT_MIN_WORTH, check_metric, passes_per_sample
from codegym.timing.stats import METHODS, paired_interval, unknown_method

#: the methods whose interval holds at every look (the others look on a schedule)
ANYTIME = ("cs",)
#: when a comparison stops for futility: its interval inside the band +-min_worth, or below
#: +min_worth (a speedup of that size ruled out, for rewards that pay only speedups)
FUTILE = ("band", "speedup")


@dataclass
class Comparison:
    """Interleaved comparison of two builds; ``speedup = t(a) / t(b)`` (> 1: b is faster).

    ci           (lo, hi) of the speedup at `confidence` (method "cs": valid at every look
                 at once; else the level of the look that decided, see `compare`);
                 degenerate (lo == hi) for exact instruction counts
    significant  the CI lies beyond the noise floor: method "cs", entirely outside
                 [1/(1+floor), 1+floor]; else it excludes 1 and the estimate exceeds the floor
    noise_floor  relative effect below which a difference does not count: `min_effect`
                 (method "cs"), or max(min_effect, noise_floor of the per-pair ratios
                 t_a/t_b taken as a Measurement), the 95 % half-width of their median
    decided      True if the loop stopped because the answer was clear (significant, or
                 futile, see `decide`), False if pairs or budget ran out first
    stopped      why the loop stopped: "significant", "futile" (the CI rules out any
                 speedup or slowdown of `min_worth`), "max_pairs", "budget", "failed"
    rejected     pairs measured again because they saw a load spike; `rejections` why, and
                 `rejected_log_ratios` their log-ratios (kept out of the estimate)
    a_first      per kept pair, whether A's run came first in it
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
    stopped: str = ""
    min_worth: float | None = None
    rejected: int = 0
    rejections: list[str] = field(default_factory=list)
    rejected_log_ratios: list[float] = field(default_factory=list)
    a_first: list[bool] = field(default_factory=list)

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


class Decision(NamedTuple):
    """One look's outcome (`decide`): the estimate of the mean log-ratio, its interval,
    the interval's coverage, whether it is significant, whether the comparison may stop."""

    est: float
    lo: float
    hi: float
    coverage: float
    significant: bool
    settled: bool


def decide(log_ratios: Sequence[float], level: float, floor: float, method: str = "wilcoxon",
           seed: int = 0, futility_floor: float | None = None, futile: str = "band") -> Decision:
    """One look at paired log-ratios: a `Decision` (est, lo, hi, coverage, significant, settled).

    Method "cs" (the anytime-valid confidence sequence): significant when the CI lies
    entirely outside +-log(1 + floor); settled when significant, or futile: the CI
    lies entirely inside +-log(1 + futility_floor) (default `floor`), i.e. it rules out
    any speedup or slowdown of that size -- or, with ``futile="speedup"``, entirely below
    +log(1 + futility_floor): it rules out a speedup of b of that size, whatever b's
    slowdown (what a reward that pays only speedups needs to know). Other methods: significant when the CI
    excludes 0 and |est| exceeds log(1 + floor); settled when significant, or when the
    estimate or the whole CI lies within +-log(1 + futility_floor) (at most `floor`).
    Stopping for futility never raises the false-speedup rate; it only ends
    comparisons of programs that are, as far as can be told, equal.
    """
    est, lo, hi, cov = paired_interval(log_ratios, level, method, seed)
    thr = math.log1p(floor)
    if method in ANYTIME:
        fthr = math.log1p(floor if futility_floor is None else futility_floor)
        significant = lo > thr or hi < -thr
        futile_now = hi < fthr and (futile == "speedup" or -fthr < lo)
        return Decision(est, lo, hi, cov, significant, significant or futile_now)
    fthr = math.log1p(floor if futility_floor is None else min(floor, futility_floor))
    excl = lo > 0 or hi < 0
    significant = excl and abs(est) > thr
    within = -fthr <= lo and hi <= fthr
    small = abs(est) <= fthr
    settled = significant or within or small
    return Decision(est, lo, hi, cov, significant, settled)


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


@dataclass(frozen=True)
class CompareSettings:
    """How `compare` measures and decides (its defaults; docs/timing.md).

    metric          cpu | wall | instructions
    warmups         untimed passes of each build first
    repeats         pairs before the first look of a fixed-sample method
    max_pairs       pairs at most; budget_s: seconds at most
    alpha           the chance of ever calling two identical programs different
    min_effect      the noise floor: a smaller relative effect is not significant (None:
                    `DEFAULT_MIN_EFFECT` of the metric)
    method          "cs" (anytime-valid confidence sequence), "wilcoxon", "t", "bootstrap"
    min_of          passes per sample, per-input minimum over them (None: the metric's default)
    seed            seeds which build goes first in a pair (and the bootstrap)
    calibrate       measure the calibration workload around the comparison
    min_worth       the smallest effect worth rewarding: the futility band (None: `DEFAULT_MIN_WORTH`)
    reject_spikes   measure again a pair that saw a load spike
    futile          "band" (rules out any speedup or slowdown of min_worth) or "speedup"
                    (rules out a speedup of b of min_worth)
    """

    metric: str = "cpu"
    warmups: int = 1
    repeats: int = 8
    max_pairs: int = 30
    budget_s: float = 60.0
    alpha: float = 0.01
    min_effect: float | None = None
    method: str = "cs"
    min_of: int | None = None
    seed: int = 0
    calibrate: bool = True
    min_worth: float | None = None
    reject_spikes: bool = True
    futile: str = "band"


def compare(sandbox: Sandbox, build_a: Build, build_b: Build,
            inputs: Iterable[RunRequest | str | bytes] | None = None, settings: CompareSettings | None = None,
            *, limits: Limits | None = None, verify_a: Verifier | None = None, verify_b: Verifier | None = None,
            inputs_b: Iterable[RunRequest | str | bytes] | None = None, **options: Any) -> Comparison:
    """Is `build_b` faster than `build_a`? ``speedup = t(a)/t(b)`` (> 1: b is faster).

    A pair is one sample of each build (as in `measure`: ``min_of`` passes over
    the inputs, per-input minima summed), with the runs of A and B interleaved
    input by input; which build goes first in a pair is a coin seeded by `seed`, and
    it alternates from pass to pass within the pair, so that drift, bursts of
    contention and order effects fall on both sides alike (and, for two identical
    programs, each log-ratio is exactly as likely negative as positive). With
    `reject_spikes`, a pair that saw a load spike -- a run of it preempted, CPU
    pressure or steal time on this host, far above the earlier pairs', see
    `codegym.timing.load.SpikeFilter` -- is measured again (at most a quarter of
    `max_pairs` times).

    The speedup is the Hodges-Lehmann estimate of the paired log-ratios
    log(t_a/t_b). `method` "cs" (default): its interval is a confidence sequence
    (`codegym.timing.sequential`) that holds at every look at once, so the data
    are looked at after every pair from the second on, with the chance of ever
    calling two identical programs different at most `alpha` however the loop stops;
    the loop stops when the interval lies beyond the noise floor `min_effect`
    (significant), when it rules out any speedup or slowdown of `min_worth`, the
    smallest worth rewarding (futile: default 5 % for time; with ``futile="speedup"``,
    as soon as it rules out a speedup of b of `min_worth`, however much slower b may be),
    or when `max_pairs` pairs or `budget_s` run out -- so the number of pairs follows the
    noise seen.
    Fixed-sample methods ("wilcoxon": exact signed-rank CI; "t"; "bootstrap",
    seeded with `seed`) look after `repeats` pairs and then at x1.5 steps, each
    look at level ``1 - alpha / looks`` (see `decide` for their rules).

    For ``metric="instructions"`` (deterministic) each build is measured twice
    (A B B A); when both repeat exactly, the speedup is exact (degenerate CI)
    and significance is any difference beyond `min_effect` (0.1 %).

    `inputs_b`: B's own requests, input by input the same inputs as A's (for programs
    that travel in the requests, as the judge launches Python programs); default `inputs`.
    `verify_a` / `verify_b` check the output of every run of A / B (see `measure`);
    the first failed run ends the comparison (``ok=False``, `failed`, `failure`).
    `limits` bound every run. The settings named above are `settings`' fields
    (`CompareSettings`), each also taken one by one as a keyword (``metric="wall",
    max_pairs=8``), over `settings`.
    """
    t0 = time.monotonic()
    cs = settings or CompareSettings()
    if options:
        cs = grouped("compare()", options, also=("inputs", "limits", "verify_a", "verify_b", "inputs_b"),
                     settings=cs)["settings"]
    metric, method, seed, futile, min_worth = cs.metric, cs.method, cs.seed, cs.futile, cs.min_worth
    check_metric(build_a, metric)
    check_metric(build_b, metric)
    eff = DEFAULT_MIN_EFFECT[metric] if cs.min_effect is None else float(cs.min_effect)
    worth = max(eff, DEFAULT_MIN_WORTH[metric] if min_worth is None else float(min_worth))
    cmp = Comparison(metric=metric, method="exact" if metric == "instructions" else method, min_worth=worth)
    for name, b in (("a", build_a), ("b", build_b)):
        problem = build_problem(b)
        if problem:
            cmp.ok, cmp.reason, cmp.stopped = False, f"build {name}: {problem}", "failed"
            return cmp
    if method not in METHODS:
        raise unknown_method(method)
    if futile not in FUTILE:
        raise ValueError(f"futile must be one of {FUTILE}, not {futile!r}")
    reqs = as_requests(inputs)
    reqs_b = reqs if inputs_b is None else as_requests(inputs_b)
    if len(reqs_b) != len(reqs):
        raise ValueError(f"inputs_b has {len(reqs_b)} requests, inputs {len(reqs)}: they must match")
    k = passes_per_sample(metric, cs.min_of)
    sides = {"a": Sampler(sandbox, build_a, reqs, metric, limits, verify_a),
             "b": Sampler(sandbox, build_b, reqs_b, metric, limits, verify_b)}
    cal_before = sample_calibration(sandbox, metric) if cs.calibrate else None
    if metric == "instructions":
        failed = _compare_exact(cmp, sides, eff)
    else:
        spikes = SpikeFilter(max_rejects=max(2, cs.max_pairs // 4)) if cs.reject_spikes else None
        loop = _PairLoop(cmp, sides["a"], sides["b"], k, eff, worth, alpha=cs.alpha, method=method, seed=seed,
                         host=runs_here(sandbox), spikes=spikes, futile=futile)
        failed = _warm_up(sides, cs.warmups) or loop.run(repeats=cs.repeats, max_pairs=cs.max_pairs,
                                                         budget_s=cs.budget_s, t0=t0)
    if failed:
        s = sides[failed]
        cmp.ok, cmp.reason = False, f"build {failed}: {s.error or 'run failed'}"
        cmp.failed, cmp.failure, cmp.stopped = failed, s.failure, "failed"
    elif cmp.ok:
        _finish(cmp, sides, k, sandbox, cs.calibrate, cal_before)
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


class _PairLoop:
    """The pairs of a time comparison: taken until a look settles the question, or pairs or
    budget run out; the last look fills the Comparison."""

    def __init__(self, cmp: Comparison, sa: Sampler, sb: Sampler, k: int, eff: float, worth: float, *,
                 alpha: float, method: str, seed: int, host: bool, spikes: SpikeFilter | None,
                 futile: str = "band"):
        self.cmp, self.sa, self.sb, self.k, self.eff, self.worth = cmp, sa, sb, k, eff, worth
        self.futile = futile
        self.alpha, self.method, self.seed = alpha, method, seed
        self.coin = random.Random(seed)
        self.host, self.spikes = host, spikes
        self.xa: list[float] = []
        self.xb: list[float] = []
        self.d: list[float] = []

    def _pair(self) -> tuple[str | None, str | None]:
        """One pair, kept unless it saw a load spike: (which build failed, why the pair was rejected)."""
        before = read_host_load() if self.host else None
        self.sa.take_preempted()
        self.sb.take_preempted()
        a_first = self.coin.random() < 0.5
        va, vb = _pair_sample(self.sa, self.sb, self.k, a_first=a_first)
        if va is None or vb is None:
            return ("a" if va is None else "b"), None
        d = math.log(max(va, 1e-12)) - math.log(max(vb, 1e-12))
        if self.spikes is not None:
            signals: dict[str, float | None] = {
                "preempted": max(self.sa.take_preempted() + self.sb.take_preempted(), default=0.0)}
            if before is not None:
                signals["psi"], signals["steal"] = read_host_load().since(before)
            why = self.spikes.check(signals)
            if why:
                self.cmp.rejected_log_ratios.append(d)
                return None, why
        self.xa.append(va)
        self.xb.append(vb)
        self.d.append(d)
        self.cmp.a_first.append(a_first)
        return None, None

    def run(self, *, repeats: int, max_pairs: int, budget_s: float, t0: float) -> str | None:
        """Returns which build's run failed, if one did."""
        cmp = self.cmp
        anytime = self.method in ANYTIME
        looks = [] if anytime else _look_schedule(repeats, max_pairs)
        level = 1.0 - (self.alpha if anytime else self.alpha / len(looks))
        li, tries, look = 0, 0, None
        t_pairs = time.monotonic()
        while True:
            failed, why = self._pair()
            tries += 1
            if failed:
                return failed
            if why:
                cmp.rejected += 1
                if len(cmp.rejections) < 10:
                    cmp.rejections.append(f"pair {len(self.d) + 1}: {why}")
            n = len(self.d)
            now = time.monotonic()
            out_of_budget = now - t0 + (now - t_pairs) / tries > budget_s
            last = n >= max_pairs or out_of_budget
            at_look = (not why and n >= 2) if anytime else (li < len(looks) and n >= looks[li])
            if n and (at_look or last):
                li += 1
                look = self._look(level, max_pairs)
                if look["decided"] or last or (not anytime and li >= len(looks)):
                    break
            elif last:
                break
        if look is None and self.d:
            look = self._look(level, max_pairs)
        if look is None:  # every pair was rejected before the budget ran out
            cmp.ok, cmp.reason, cmp.stopped = False, "no pair was measured without a load spike", "budget"
            return None
        for name, value in look.items():
            setattr(cmp, name, value)
        cmp.stopped = cmp.stopped or ("budget" if out_of_budget and n < max_pairs else "max_pairs")
        cmp.log_ratios = self.d
        cmp.n_pairs = len(self.d)
        return None

    def _look(self, level: float, max_pairs: int) -> dict:
        """One look at the pairs so far: the Comparison's fields should the loop stop here."""
        d = self.d
        ma = summarize(self.xa, self.cmp.metric)
        mb = summarize(self.xb, self.cmp.metric)
        if self.method in ANYTIME:
            floor, fut = self.eff, self.worth
        else:
            # the noise of the comparison itself: precision of the median per-pair ratio
            # (pairing cancels the contention both builds saw, unlike the two medians)
            noise = noise_floor(summarize([math.exp(x) for x in d], self.cmp.metric))
            floor = max(self.eff, noise)
            # stopping for "no difference" must not rest on a floor that more pairs would
            # lower: it is projected to max_pairs (noise ~ 1/sqrt(n))
            fut = max(self.eff, noise * math.sqrt(len(d) / max(max_pairs, len(d))))
        est, lo, hi, cov, sig, settled = decide(d, level, floor, self.method, self.seed, fut, self.futile)
        stopped = ("significant" if sig else "futile") if settled else ""
        return {"speedup": math.exp(est), "ci": (_exp(lo), _exp(hi)), "significant": sig,
                "confidence": cov, "noise_floor": floor, "decided": settled, "stopped": stopped,
                "a": ma, "b": mb}


def _exp(x: float) -> float:
    return math.inf if x > 700 else math.exp(x)


def _finish(cmp: Comparison, sides: dict[str, Sampler], k: int, sandbox: Sandbox, calibrate: bool,
            cal_before: str | None) -> None:
    """Passes and runs of both builds on their measurements, and the calibration."""
    a, b = cmp.a, cmp.b
    assert a is not None and b is not None  # (both sides were measured before they are finished)
    for m in (a, b):
        m.min_of = k if cmp.metric != "instructions" else 1
    a.runs, b.runs = sides["a"].runs, sides["b"].runs
    if calibrate:
        cal, note = calibration_after(sandbox, cmp.metric, cal_before)
        cmp.calibration = cal
        for m in (a, b):
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
