"""Measurements kept for reuse, and the near-tie decision against them.

A reward compares every submission of a task with the same baseline; measuring the
baseline again for each one is most of what a near-tie costs. This module keeps a
measurement per sandbox (per process) and key, with the machine's speed when it was
taken (`codegym.timing.probe`), and gives it back while the machine has not moved beyond
what the probe's correction covers (`DRIFT_LIMIT`) and it is not older than `MAX_AGE_S`
(`keep`); `Passes` are a build's concurrent passes over its inputs, as the judge runs
them (`measure_passes`); `Reference` is what a kept measurement says about one
observation of a candidate, and `NearTie` the candidate's looks: the slow bound, and the
futility rule (`codegym.timing.sequential.futility_log_wealth`), which stop a candidate
whose first passes already rule out a speedup worth rewarding. docs/timing.md
("Kept measurements", "Near-ties") gives the rules and what they assume.
"""

from __future__ import annotations

import math
import statistics
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from codegym.core.limits import Limits
from codegym.sandbox.types import Build, RunRequest, Sandbox
from codegym.timing.measurement import Measurement, Sampler, Verifier, as_requests
from codegym.timing.metrics import DEFAULT_MIN_WORTH
from codegym.timing.probe import SPEED_PROBES, SpeedTrack, probe_applies
from codegym.timing.sequential import futility_log_wealth

#: a kept measurement is taken again after this many seconds (the machine's state drifts
#: beyond what one probe reading describes: other tenants come and go)
MAX_AGE_S = 600.0
#: ... or when the machine's speed moved by more than this since it was taken: the probe's
#: correction was shown on drifts up to ~10 % (docs/timing.md, "Drift"); beyond, measure again
DRIFT_LIMIT = 0.10
#: concurrent passes of a kept baseline: `measure_passes` takes them after one discarded
#: warm-up; `KeptPasses` reaches them one pass per look, seeded by the first submissions
KEPT_PASSES = 5
#: the spread (log) one concurrent pass is assumed to have before its own passes show it:
#: a pool's sample spread is shrunk toward it with the weight of PRIOR_PASSES passes
#: (passes of the suites' baselines, drift-corrected: 1.3-4.7 %, docs/timing.md)
PASS_PRIOR = 0.03
PRIOR_PASSES = 1.0
#: ... until the sandbox's kept pools show it: their pooled spread (`pass_spread`) takes
#: PASS_PRIOR's place from LEARNED_MIN_DOF degrees of freedom on, with the weight of
#: LEARNED_PASSES passes (one machine's passes spread alike: a pool of one or two passes
#: borrows what the others show, smaller on a quiet machine, larger on a loaded one)
LEARNED_MIN_DOF = 6
LEARNED_PASSES = 2.0
#: the futility rule's level: the chance of stopping a candidate that was in fact
#: `min_worth` faster (much less for a faster one: docs/timing.md, "Near-ties")
FUTILITY_ALPHA = 0.10
#: looks at a candidate's concurrent passes (its judged perf split first) before it is measured
MAX_LOOKS = 4
#: concurrent passes (the baseline's and the candidate's together) the looks take after a
#: candidate's judged perf split before one that leans toward a tie (`NearTie.leans_tie`)
#: is scored from them: the cost bound of a near-tie the rules do not decide
LOOK_PASSES = 2
#: the speedup that leaning to a tie must not lose (the timing docs' guarantee: a real 1.1x
#: is found), and the z of the chance it may (`NearTie.leans_tie`: ~5 %)
KEEP_SPEEDUP = 0.10
LOSS_Z = 1.645
#: the noise of a near-tie its looks did not decide (`looked_times`), in scales of its median's error
UNDECIDED_Z = 3.0
#: smallest noise scale (log) a reference claims: timings are not resolved below ~1 %
MIN_SCALE = 0.01
#: a look this many scales beyond the worth boundary ends the looks (`NearTie.clear`)
CLEAR_SCALES = 3.0


# =========================================================================== the store


@dataclass
class Kept:
    """One kept value: what it is, the machine's slowness when it was taken (None: not
    probed), when (monotonic seconds), and how often it was given out."""

    value: Any
    speed: float | None
    taken_at: float
    uses: int = 0


#: a reading of the machine's slowness now (`codegym.timing.probe.slowness_now`)
Reading = Callable[[], "float | None"]

_STORE: weakref.WeakKeyDictionary[Sandbox, dict] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}


def _entries(sandbox: Sandbox) -> dict:
    with _LOCK:
        return _STORE.setdefault(sandbox, {})


def _key_lock(sandbox: Sandbox, key: tuple) -> threading.Lock:
    with _LOCK:
        return _KEY_LOCKS.setdefault((id(sandbox), key), threading.Lock())


def _how(entry: Kept, reused: bool, why: str) -> dict:
    """How a kept value was had, for ``info``: reused?, why measured, age, uses, its slowness."""
    return {"kept": reused, "why": why, "age_s": round(time.monotonic() - entry.taken_at, 3),
            "uses": entry.uses, "speed": entry.speed}


def forget_kept(sandbox: Sandbox | None = None) -> None:
    """Forget every kept measurement (of one sandbox, or of all)."""
    with _LOCK:
        if sandbox is None:
            _STORE.clear()
            _KEY_LOCKS.clear()
        else:
            _STORE.pop(sandbox, None)


def stale(entry: Kept, speed_now: float | None, max_age_s: float = MAX_AGE_S,
          drift_limit: float = DRIFT_LIMIT, now: float | None = None) -> str:
    """Why `entry` must be measured again ("" when it may be reused)."""
    age = (time.monotonic() if now is None else now) - entry.taken_at
    if age > max_age_s:
        return f"older than {max_age_s:g} s"
    if entry.speed and speed_now and abs(math.log(speed_now / entry.speed)) > math.log1p(drift_limit):
        return (f"the machine's speed moved from {entry.speed:.3f} to {speed_now:.3f} of its reference "
                f"(more than {drift_limit:.0%})")
    return ""


def _stale(entry: Kept, speed_now: float | None, max_age_s: float, drift_limit: float,
           recheck: Reading | None) -> str:
    """`stale`, with a drift seen in one reading read twice more (`recheck`) and judged on
    the median of the three: one probe reading alone is sometimes far off (a burst of
    another tenant), and a pool dropped for it costs the next submissions a cold start."""
    why = stale(entry, speed_now, max_age_s, drift_limit)
    if why and recheck is not None and speed_now and not stale(entry, None, max_age_s, drift_limit):
        again = [speed_now] + [x for x in (recheck(), recheck()) if x]
        why = stale(entry, float(statistics.median(again)), max_age_s, drift_limit)
    return why


def keep(sandbox: Sandbox, key: tuple, compute: Callable[[], tuple[Any, float | None]], *,
         speed_now: float | None = None, max_age_s: float = MAX_AGE_S,
         drift_limit: float = DRIFT_LIMIT, recheck: Reading | None = None) -> tuple[Any, dict]:
    """The value kept for `key` in `sandbox`, measured (``compute() -> (value, slowness)``)
    when there is none or it is `stale` at the machine's slowness `speed_now`.

    Concurrent callers of one key measure it once (the others wait for it). Returns the
    value and how it was had: ``{"kept": reused?, "why": why measured, "age_s", "uses",
    "speed": slowness when taken}``. An exception of `compute` is raised, nothing kept."""
    entries = _entries(sandbox)
    with _key_lock(sandbox, key):
        entry = entries.get(key)
        why = "first" if entry is None else _stale(entry, speed_now, max_age_s, drift_limit, recheck)
        if entry is None or why:
            value, speed = compute()
            entry = entries[key] = Kept(value, speed, time.monotonic())
        entry.uses += 1
        return entry.value, _how(entry, not why, why)


def peek(sandbox: Sandbox, key: tuple, *, speed_now: float | None = None, max_age_s: float = MAX_AGE_S,
         drift_limit: float = DRIFT_LIMIT, recheck: Reading | None = None) -> tuple[Any, dict]:
    """The value kept for `key` in `sandbox` while it is not `stale` at the slowness
    `speed_now` (a stale one is forgotten), else None; and how: ``{"kept", "why", "age_s",
    "uses", "speed"}`` as `keep` says it. Nothing is measured (`extend` adds to it)."""
    entries = _entries(sandbox)
    with _key_lock(sandbox, key):
        entry = entries.get(key)
        why = "first" if entry is None else _stale(entry, speed_now, max_age_s, drift_limit, recheck)
        if entry is None or why:
            entries.pop(key, None)
            return None, {"kept": False, "why": why, "age_s": 0.0, "uses": 1, "speed": None}
        entry.uses += 1
        return entry.value, _how(entry, True, "")


def extend(sandbox: Sandbox, key: tuple, merge: Callable[[Any], tuple[Any, float | None]]) -> Any:
    """Add to the value kept for `key`: ``merge(value now or None) -> (value, slowness)``
    under the key's lock, so that concurrent callers each add to what the others added.
    A new entry is taken now; an extended one keeps its age (the age bound counts from its
    first part). Returns the value kept."""
    entries = _entries(sandbox)
    with _key_lock(sandbox, key):
        entry = entries.get(key)
        value, speed = merge(None if entry is None else entry.value)
        if entry is None:
            entries[key] = Kept(value, speed, time.monotonic(), uses=1)
        else:
            entry.value, entry.speed = value, speed
        return value


# =========================================================================== concurrent passes


@dataclass
class Passes:
    """Concurrent passes of one build over its inputs (`measure_passes`).

    seconds  per pass, the sum of the per-run metric divided by the machine's slowness
             over it (`SpeedTrack`; seconds at the sandbox's reference speed; raw when not probed)
    raw      the same as timed
    speeds   per pass, the slowness the probe read (empty when not probed)
    """

    metric: str
    seconds: list[float] = field(default_factory=list)
    raw: list[float] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return float(statistics.median(self.seconds))

    @property
    def speed(self) -> float | None:
        return float(statistics.median(self.speeds)) if self.speeds else None

    def add(self, raw: float, speed: float | None) -> Passes:
        """One more pass: `raw` seconds as timed, `speed` the slowness over it (`SpeedTrack`)."""
        self.raw.append(float(raw))
        if speed:
            self.speeds.append(float(speed))
        self.seconds.append(raw / speed if speed else float(raw))
        return self

    def copy(self) -> Passes:
        return Passes(self.metric, list(self.seconds), list(self.raw), list(self.speeds))

    def to_dict(self) -> dict:
        return asdict(self)


class PassFailed(Exception):
    """A run of a concurrent pass failed: `status` how (as `Measurement.failure`), the message why."""

    def __init__(self, status: str | None, message: str):
        super().__init__(message)
        self.status = status


def measure_passes(sandbox: Sandbox, build: Build, inputs: Sequence[RunRequest | str | bytes] | None,
                   metric: str = "cpu", n: int = KEPT_PASSES, warmups: int = 1, limits: Limits | None = None,
                   verify: Verifier | None = None, probes: int = SPEED_PROBES) -> Passes:
    """`n` concurrent passes of `build` over `inputs` (`Sampler.concurrent_pass`: all inputs
    at once on the sandbox's slots, as the judge runs them), after `warmups` discarded
    ones, each divided by the machine's slowness over it (`SpeedTrack`: the median of the
    probe runs of the last few readings, `probes` runs each, one after every pass).
    Raises `PassFailed` when a run fails or its output is rejected."""
    take = pass_taker(sandbox, build, inputs, metric, limits, verify, probes)
    out = Passes(metric)
    for i in range(max(0, warmups) + max(1, n)):
        raw, speed = take()
        if i >= warmups:
            out.add(raw, speed)
    return out


def pass_taker(sandbox: Sandbox, build: Build, inputs: Sequence[RunRequest | str | bytes] | None,
               metric: str = "cpu", limits: Limits | None = None, verify: Verifier | None = None,
               probes: int = SPEED_PROBES, track: SpeedTrack | None = None
               ) -> Callable[[], tuple[float, float | None]]:
    """``take() -> (raw seconds, slowness over it)`` of one concurrent pass of `build` over
    `inputs` (`Sampler.concurrent_pass`; the slowness read by `track` -- a reading of
    `probes` probe runs after each pass, the median over the last few -- None where the
    probe does not apply). Passes of several takers put side by side share one `track`.
    Raises `PassFailed` when a run fails or its output is rejected."""
    s = Sampler(sandbox, build, as_requests(inputs), metric, limits, verify)
    tr = track if track is not None else SpeedTrack(sandbox, metric, probes)
    probed = probe_applies(sandbox, metric)

    def take() -> tuple[float, float | None]:
        if probed:
            tr.start()
        v = s.concurrent_pass()
        if v is None:
            raise PassFailed(s.failure, s.error or "a run failed")
        return v, tr.after() if probed else None
    return take


class KeptPasses:
    """A build's kept concurrent passes (a task's baseline), seeded and extended by the looks
    that use them instead of measured up front.

    The passes kept for `key` are read at once (`peek`: gone when stale); while there are
    fewer than `target`, `grow` takes one more with `take` -- ``() -> (raw seconds, slowness
    over it)`` -- and adds it to the kept ones (`extend`: every concurrent user adds to
    the same pool). A look's reference is the kept passes taken *before* the candidate's
    observation, their spread shrunk toward `pass_prior` (`Reference.of_passes`), so the
    first submission of a task pays one baseline pass, not `target` passes and a warm-up up
    front. docs/timing.md ("Kept measurements") says why that is sound."""

    def __init__(self, sandbox: Sandbox, key: tuple, metric: str, take: Callable[[], tuple[float, float | None]],
                 *, speed_now: float | None = None, target: int = KEPT_PASSES, max_age_s: float = MAX_AGE_S,
                 drift_limit: float = DRIFT_LIMIT, recheck: Reading | None = None):
        self.sandbox, self.key, self.metric, self.take, self.target = sandbox, key, metric, take, int(target)
        self.passes, self.how = peek(sandbox, key, speed_now=speed_now, max_age_s=max_age_s,
                                     drift_limit=drift_limit, recheck=recheck)
        self.added = 0

    @property
    def n(self) -> int:
        return len(self.passes.seconds) if self.passes is not None else 0

    @property
    def short(self) -> bool:
        return self.n < self.target

    def grow(self) -> Passes:
        """One more pass of the build, added to the kept ones (exceptions of `take` propagate)."""
        raw, speed = self.take()

        def merge(old: Passes | None) -> tuple[Passes, float | None]:
            p = (old.copy() if old is not None else Passes(self.metric)).add(raw, speed)
            return p, p.speed

        self.passes = extend(self.sandbox, self.key, merge)
        self.added += 1
        return self.passes

    def reference(self) -> Reference:
        """The kept passes as a look's reference, their spread shrunk toward `pass_prior`."""
        if self.passes is None:
            raise ValueError("no pass kept yet: grow first")
        prior, weight = pass_prior(self.sandbox)
        return Reference.of_passes(self.passes, prior, weight)

    def details(self) -> dict:
        """How the passes were had, for ``info``: `peek`'s dict, the passes now, how many this user added."""
        return {**self.how, "passes": self.n, "added": self.added}


def pass_spread(sandbox: Sandbox) -> tuple[float | None, int]:
    """The spread (log sd) of one concurrent pass pooled over every pool of passes kept in
    `sandbox` (each around its own mean), and its degrees of freedom (None, 0 without any)."""
    with _LOCK:
        kept = list(_STORE.get(sandbox, {}).values())
    ss, dof = 0.0, 0
    for entry in kept:
        p = entry.value
        logs = [math.log(x) for x in p.seconds if x > 0] if isinstance(p, Passes) else []
        if len(logs) > 1:
            mean = statistics.fmean(logs)
            ss += sum((x - mean) ** 2 for x in logs)
            dof += len(logs) - 1
    return (math.sqrt(ss / dof) if dof else None), dof


def pass_prior(sandbox: Sandbox) -> tuple[float, float]:
    """(spread, weight in passes) a pool of `sandbox` is shrunk toward: the pooled
    `pass_spread` once it has LEARNED_MIN_DOF degrees of freedom (at least MIN_SCALE),
    PASS_PRIOR before."""
    sd, dof = pass_spread(sandbox)
    if sd is None or dof < LEARNED_MIN_DOF:
        return PASS_PRIOR, PRIOR_PASSES
    return max(MIN_SCALE, sd), LEARNED_PASSES


# =========================================================================== near-ties


@dataclass(frozen=True)
class Reference:
    """What a kept baseline says about one observation of a candidate: its median (seconds
    at the reference speed) and the noise scale (log) of the observation's log speedup over
    it -- the spread of one pass and the error of the kept median together,
    ``hypot(sd, sqrt(pi / 2) * sd / sqrt(n))`` (the median of n passes), at least MIN_SCALE.
    With a `prior` spread, sd is the samples' own shrunk toward it,
    ``sqrt((w prior**2 + (n - 1) sd**2) / (w + n - 1))`` with the prior's weight w in passes
    (PRIOR_PASSES by default): one or two passes do not show their spread (one shows none)."""

    median: float
    scale: float
    n: int
    #: the spread (log) of one sample, shrunk toward the prior when one was given
    sd: float = 0.0

    @property
    def error(self) -> float:
        """The noise scale (log) of the median itself: ``sqrt(pi / 2) * sd / sqrt(n)``."""
        return self.sd * math.sqrt(math.pi / 2 / self.n)

    @classmethod
    def of_samples(cls, samples: Sequence[float], median: float | None = None,
                   prior: float | None = None, prior_weight: float = PRIOR_PASSES) -> Reference:
        logs = [math.log(x) for x in samples if x > 0]
        if not logs:
            raise ValueError("a reference needs positive samples")
        sd = statistics.stdev(logs) if len(logs) > 1 else 0.0
        if prior is not None:
            dof = len(logs) - 1
            sd = math.sqrt((prior_weight * prior ** 2 + dof * sd ** 2) / (prior_weight + dof))
        se = sd * math.sqrt(math.pi / 2 / len(logs))
        med = float(statistics.median(samples)) if median is None else float(median)
        return cls(median=med, scale=max(MIN_SCALE, math.hypot(sd, se)), n=len(logs), sd=sd)

    @classmethod
    def of_passes(cls, p: Passes, prior: float | None = PASS_PRIOR,
                  prior_weight: float = PRIOR_PASSES) -> Reference:
        return cls.of_samples(p.seconds, prior=prior, prior_weight=prior_weight)

    @classmethod
    def of_measurement(cls, m: Measurement) -> Reference:
        return cls.of_samples(m.samples, m.median)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Look:
    """One look at a candidate: its time (at the reference speed), the log speedup it shows
    over the reference, the scale the look used, and the log wealth after it."""

    seconds: float
    x: float
    scale: float
    log_wealth: float


class NearTie:
    """The looks at one candidate against kept references, and when they stop it.

    `observe(seconds, ref)` takes one observation: the candidate's time per pass at the
    reference speed (its raw time divided by the slowness the probe read), against the
    reference of the same kind of pass. It returns why the candidate stops -- "slow_bound"
    (the pass took `bound` times the reference's median or more), "futility" (the test
    against "at least `worth` faster" reached 1/alpha) -- or "" to go on. An observation
    enters the test with the reference's scale, or the spread of the candidate's own
    earlier observations when that is larger (both known before the observation: the bet
    stays predictable)."""

    def __init__(self, worth: float | None = None, alpha: float | None = FUTILITY_ALPHA,
                 bound: float | None = None, metric: str = "cpu"):
        self.worth = DEFAULT_MIN_WORTH[metric] if worth is None else float(worth)
        self.alpha = None if alpha is None else float(alpha)   # None: no futility rule, the bound only
        self.bound = bound
        self.looks: list[Look] = []
        self.stopped = ""
        self._evidence: list[float] = []

    def scale_for(self, ref: Reference) -> float:
        own = [lk.x for lk in self.looks]
        sd = statistics.stdev(own) if len(own) > 1 else 0.0
        return max(ref.scale, sd)

    def observe(self, seconds: float, ref: Reference) -> str:
        if self.stopped:
            return self.stopped
        x = math.log(ref.median) - math.log(max(seconds, 1e-12))
        scale = self.scale_for(ref)
        self._evidence.append(x)
        lw = float(futility_log_wealth(self._evidence, [lk.scale for lk in self.looks] + [scale], self.worth)[-1])
        self.looks.append(Look(seconds, x, scale, lw))
        if self.bound is not None and seconds >= self.bound * ref.median:
            self.stopped = "slow_bound"
        elif self.alpha is not None and lw >= math.log(1.0 / self.alpha):
            self.stopped = "futility"
        return self.stopped

    def clear(self) -> bool:
        """Whether the last look shows the candidate clearly faster than a tie (its log
        speedup beyond log(1 + worth) by CLEAR_SCALES scales): more looks would not stop
        it, so its caller measures it at once (a cost rule: it decides nothing)."""
        if not self.looks:
            return False
        lk = self.looks[-1]
        return lk.x > math.log1p(self.worth) + CLEAR_SCALES * lk.scale

    def leans_tie(self, ref: Reference) -> bool:
        """Whether the looks' median speedup over `ref` is below the split
        ``max(w / 2, min(w, log(1 + KEEP_SPEEDUP) - LOSS_Z * s))`` (w = log(1 + worth), s the
        noise of that median: the looks' medians error, with the kept passes' spread or the
        looks' own when larger, and the kept median's): a candidate the rules leave
        undecided then is scored from its looks (`looked_times`), one that leans the other
        way is measured. The split keeps a real KEEP_SPEEDUP (1.1x) from leaning to a tie
        more than ~5 % of the time while the noise allows (a point estimate, not a test:
        docs/timing.md, "Near-ties", gives what it loses)."""
        xs = [math.log(ref.median) - math.log(max(lk.seconds, 1e-12)) for lk in self.looks]
        if not xs:
            return False
        sd = max(ref.sd, statistics.stdev(xs) if len(xs) > 2 else 0.0)  # (the looks' own spread)
        s = math.hypot(sd * math.sqrt(math.pi / 2 / len(xs)), ref.error)
        w = math.log1p(self.worth)
        split = max(w / 2, min(w, math.log1p(KEEP_SPEEDUP) - LOSS_Z * s))
        return statistics.median(xs) < split

    def details(self) -> dict:
        """For ``info``: the looks, the rule's parameters and why it stopped."""
        return {"looks": [asdict(lk) for lk in self.looks], "worth": self.worth, "alpha": self.alpha,
                "bound": self.bound, "stopped": self.stopped}


def looked_times(tie: NearTie, ref: Reference, prior: float = PASS_PRIOR, prior_weight: float = PRIOR_PASSES,
                 z: float = UNDECIDED_Z) -> tuple[float, float, float, float]:
    """(t, t_baseline, noise, noise_baseline) of a near-tie its looks did not decide: the
    median of its looks and the kept baseline's median `ref` (seconds at the reference
    speed), each with the relative noise of its median, `z` scales (`Reference.error`; the
    looks' spread shrunk toward `prior` as the kept passes' is, `pass_prior`). `z` is wider
    than a confidence interval's: a tie gets here because its looks came out fast (with
    the slow bound at 1, none was slower than the kept median), a selected sample."""
    if not tie.looks:
        raise ValueError("no looks to score")
    cand = Reference.of_samples([lk.seconds for lk in tie.looks], prior=prior, prior_weight=prior_weight)
    return cand.median, ref.median, z * cand.error, z * ref.error
