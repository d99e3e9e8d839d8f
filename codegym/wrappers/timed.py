"""`TimedReward` (DMC-Optim): correctness gates speed, and speed is measured, not guessed.

This module owns the timed reward and the performance measurements the reward
wrappers share (`StagedReward` uses them too):

- `TimedReward`: the wrapper (modes ``speedup``, ``percentile``, ``interpolate``).
- `perf_workload(task, files, language, sandbox)`: the runs that time one program on a
  task's perf split and the check of their outputs (`codegym.judge.run.perf_runs`, what
  `codegym.judge.run` measures with ``timing=True``).
- `TimedRunFailed`: raised when a timed run of the candidate answers wrongly or does not
  end ok; the wrappers score the program as incorrect.
- `solution_files(task, name)`, `solution_measurement(...)` (cached per sandbox, task
  content hash, solution and settings: a task's solutions never change under one hash),
  `recorded_runtimes(task)` and `runtime_distribution(...)`: the task's runtime
  distribution, recorded (``perf.runtimes``) or measured on the fly and cached.
- `Unscorable`: raised when a program cannot be timed (unsupported kind or metric, a
  failing run, noise above the threshold); the wrappers turn it into
  ``info["timing"]["scorable"] = False``.

Recorded runtimes (``perf.runtimes``, filled by ``codegym tasks calibrate``) map
solution names to the median of one pass over the perf split in the task's metric
(seconds for cpu/wall). An entry named ``_calibration`` (`CALIBRATION_KEY`) holds the
seconds `codegym.timing.measurement.calibration_workload` took on the machine that recorded them:
when present, recorded seconds are divided by it so they can be compared with
measurements made here (``Measurement.normalized = median / calibration``); without it
recorded seconds are taken as comparable with local seconds as they are.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import gymnasium as gym

#: entry of ``perf.runtimes`` holding the recording machine's calibration seconds
CALIBRATION_KEY = "_calibration"
#: the starter as a solution name (``perf.baseline`` unset means the starter)
STARTER = "starter"

MODES = ("speedup", "percentile", "interpolate")
TRANSFORMS = ("log", "ratio")
AGAINST = ("baseline", "reference")
DISTRIBUTION_SOURCES = ("auto", "recorded", "measured")


class Unscorable(Exception):
    """A program's speed cannot be scored; the message says why. `record`: the last
    (too noisy or failed) comparison, when there was one, for ``info["timing"]``."""

    def __init__(self, message: str, record: "ComparisonRecord | None" = None):
        super().__init__(message)
        self.record = record
        #: the speed score at the pessimistic end of the speedup's interval, when the
        #: mode has a score of the speedup (set by TimedReward; None: nothing is known)
        self.lower_bound: float | None = None


class TimedRunFailed(Exception):
    """A timed run of a program failed: its output was wrong, or it did not end ok (see
    `codegym.judge.run.perf_runs`). Not noise: the program is not correct on that run, and
    the wrappers score it as incorrect. `status` is the run's case status
    (wrong_answer, runtime_error, timeout, ...); `which` names the program."""

    def __init__(self, status: str, message: str, which: str = "candidate",
                 record: "ComparisonRecord | None" = None):
        super().__init__(f"a timed run of the {which} failed ({status}): {message}")
        self.status, self.which, self.record = status, which, record


#: failures of a timed run that are the program's own (sandbox_error is not)
PROGRAM_FAILURES = ("wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit")


def lower_bound_score(rec: "ComparisonRecord | None", score_at: Callable[[float], float]) -> float | None:
    """The score at the lower end of a (too noisy) comparison's speedup interval: 0
    unless the speedup is significant, never more than any point of the interval."""
    if rec is None or rec.ci is None:
        return None
    lo = rec.ci[0]
    if not (rec.significant and math.isfinite(lo) and lo > 1.0):
        return 0.0
    return float(score_at(lo))


# =========================================================================== workloads


@dataclass
class PerfWorkload:
    """What timing one program on a task's perf split runs: a build and its inputs, and
    the check of every timed run's output (`codegym.judge.run.perf_runs`).

    A sample (see `codegym.timing.measurement.measure`) is one pass of `build` over `inputs`.
    `key` is the program's content key: two workloads with equal keys time the same program.
    """

    language: str
    build: Any
    inputs: list
    limits: Any
    verify: Any = None
    files_key: str = ""

    @property
    def key(self) -> str:
        return f"{self.language}:{getattr(self.build, 'key', id(self.build))}:{self.files_key}"


def solution_files(task, name: str | None) -> tuple[str, dict[str, str]]:
    """(language, files) of a named solution; None gives the baseline, ``"starter"`` the
    starter (unless a solution has that name)."""
    if name is None:
        return task.baseline_files()
    if name == STARTER and STARTER not in task.solutions:
        return task.language, task.starter_files()
    sol = task.solution(name)
    return (sol.language or task.language), dict(sol.files)


def baseline_name(task) -> str:
    """Name of the task's baseline (``"starter"`` when the starter is the baseline)."""
    return task.baseline_name or STARTER


def reference_name(task) -> str | None:
    """Name of the task's reference solution, None if it has none."""
    return task.reference_name


def perf_workload(task, files: Mapping[str, Any], language: str, sandbox) -> PerfWorkload:
    """The build, inputs and output check that time `files` on the task's perf split
    (hidden split if it has no perf cases), launched as `codegym.judge.run` launches the
    cases, every timed output checked (`codegym.judge.run.perf_runs`).

    Raises `Unscorable` for task kinds that have no timed form (script, repo) or a build
    that fails."""
    from codegym.judge.run import perf_runs
    from codegym.judge.testgen import TestgenError, materialize

    split = "perf" if task.cases("perf") else "hidden"
    try:
        cases = materialize(task, split, sandbox)
    except TestgenError as e:
        raise Unscorable(f"perf tests could not be materialised: {e}") from e
    if not cases:
        raise Unscorable("the task has no perf or hidden cases to time")
    try:
        runs = perf_runs(task, files, sandbox, language, cases)
    except ValueError as e:
        raise Unscorable(str(e)) from e
    if not runs.build.ok:
        res = runs.build.result
        raise Unscorable(f"the program does not build: {(res.message if res else '') or 'build failed'}")
    return PerfWorkload(language=runs.language, build=runs.build, inputs=runs.inputs, limits=runs.limits,
                        verify=runs.verify, files_key=runs.files_key)


# =========================================================================== settings


@dataclass(frozen=True)
class TimingSettings:
    """How measurements and comparisons are made (arguments of `codegym.timing.measurement`).

    metric      cpu | wall | instructions (None: the task's ``perf.metric``)
    repeats     samples of a measurement / first look (pairs) of a comparison
    max_pairs   pairs a comparison may take; warmups: untimed passes first
    min_of      passes per sample (per-input minimum over them)
    budget_s    seconds one measurement or comparison may spend
    alpha       false-speedup rate of a comparison (spread over its looks)
    min_effect  relative effect below which nothing counts (None: timing's default per metric)
    """

    metric: str | None = None
    repeats: int = 8
    max_pairs: int = 16
    warmups: int = 1
    min_of: int = 1
    budget_s: float = 120.0
    alpha: float = 0.05
    min_effect: float | None = None

    def metric_for(self, task) -> str:
        return self.metric or task.perf.metric

    def key(self, task) -> tuple:
        return (self.metric_for(task), self.repeats, self.warmups, self.min_of)


# =========================================================================== cached measurements

_CACHE: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()
#: per-key locks, so that concurrent envs measuring the same solution measure it once
_KEY_LOCKS: dict[tuple, threading.Lock] = {}


def _sandbox_cache(sandbox) -> dict:
    with _CACHE_LOCK:
        try:
            return _CACHE.setdefault(sandbox, {})
        except TypeError:  # not weak-referenceable: keep the cache on the object itself
            d = getattr(sandbox, "_codegym_perf_cache", None)
            if d is None:
                d = {}
                setattr(sandbox, "_codegym_perf_cache", d)
            return d


def clear_cache() -> None:
    """Forget every cached solution measurement and distribution (all sandboxes)."""
    with _CACHE_LOCK:
        _CACHE.clear()
        _KEY_LOCKS.clear()


def _cached(sandbox, key: tuple, compute):
    cache = _sandbox_cache(sandbox)
    hit = cache.get(key)
    if hit is not None:
        return hit
    with _CACHE_LOCK:
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with lock:
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = compute()
        return hit


def measure_workload(sandbox, wl: PerfWorkload, settings: TimingSettings, metric: str,
                     which: str = "candidate"):
    """`codegym.timing.measurement.measure` of a workload with `settings`; raises `Unscorable`, or
    `TimedRunFailed` when a run of the program (`which`) failed."""
    from codegym.timing import measurement as timing
    try:
        m = timing.measure(sandbox, wl.build, wl.inputs, metric=metric, warmups=settings.warmups,
                           repeats=settings.repeats, max_repeats=max(settings.repeats, settings.max_pairs),
                           budget_s=settings.budget_s, limits=wl.limits, min_of=settings.min_of,
                           verify=wl.verify)
    except ValueError as e:  # UnsupportedMetricError
        raise Unscorable(str(e)) from e
    if not m.ok:
        if m.failure in PROGRAM_FAILURES:
            raise TimedRunFailed(m.failure, m.reason, which)
        raise Unscorable(f"measurement failed: {m.reason}")
    return m


def solution_measurement(task, name: str, sandbox, settings: TimingSettings | None = None):
    """`codegym.timing.measurement.Measurement` of a task's solution (or ``"starter"``) on the perf
    split; cached per (sandbox, task content hash, name, metric, repeats, warmups, min_of)."""
    settings = settings or TimingSettings()
    metric = settings.metric_for(task)
    key = ("measure", task.content_hash, name, *settings.key(task))

    def compute():
        lang, files = solution_files(task, name)
        try:
            return measure_workload(sandbox, perf_workload(task, files, lang, sandbox), settings, metric,
                                    which=f"task's {name!r} solution")
        except TimedRunFailed as e:  # the task's own solution: a broken task, not a verdict
            raise Unscorable(str(e)) from e

    return _cached(sandbox, key, compute)


def recorded_runtimes(task, metric: str | None = None) -> tuple[dict[str, float], float | None]:
    """(runtimes by name without the calibration entry, recording calibration or None).

    From the task's ``perf.runtimes``, else from its suite's ``runtimes.json`` written by
    ``codegym tasks calibrate`` (only when recorded for this content hash and metric)."""
    rt = dict(task.perf.runtimes or {})
    if not rt:
        from codegym.tasks.runtimes import perf_runtimes
        rt = dict(perf_runtimes(task, metric=metric) or {})
    cal = rt.pop(CALIBRATION_KEY, None)
    return rt, (float(cal) if cal else None)


@dataclass
class Distribution:
    """A task's runtime distribution.

    values  name -> time (in `unit`), fastest first
    unit    "normalized" (seconds / calibration seconds), "s", or "instructions"
    source  "recorded" (perf.runtimes) or "measured" (this sandbox, cached)
    """

    values: dict[str, float]
    unit: str
    source: str

    def sorted(self) -> list[tuple[str, float]]:
        return sorted(self.values.items(), key=lambda kv: (kv[1], kv[0]))


def runtime_distribution(task, sandbox, settings: TimingSettings | None = None,
                         source: str = "auto") -> Distribution:
    """The task's runtime distribution: recorded ``perf.runtimes`` (``source="recorded"``),
    or every accepted solution measured in `sandbox` (``"measured"``, cached per task
    content hash); ``"auto"`` uses the recorded one when the task has one."""
    if source not in DISTRIBUTION_SOURCES:
        raise ValueError(f"source must be one of {DISTRIBUTION_SOURCES}, not {source!r}")
    settings = settings or TimingSettings()
    metric = settings.metric_for(task)
    rt, cal = recorded_runtimes(task, metric)
    if source == "recorded" or (source == "auto" and rt):
        if not rt:
            raise Unscorable(f"task {task.id} has no recorded runtimes (perf.runtimes)")
        if metric == "instructions":
            return Distribution(dict(rt), "instructions", "recorded")
        if cal:
            return Distribution({k: v / cal for k, v in rt.items()}, "normalized", "recorded")
        return Distribution(dict(rt), "s", "recorded")
    key = ("distribution", task.content_hash, *settings.key(task))

    def compute() -> Distribution:
        values: dict[str, float] = {}
        raw: dict[str, Any] = {}
        for name, sol in task.solutions.items():
            if getattr(sol, "expect", "accepted") != "accepted":
                continue
            try:
                raw[name] = solution_measurement(task, name, sandbox, settings)
            except Unscorable:
                continue  # e.g. instructions of a Python solution: not part of this metric's view
        if metric == "instructions":
            values = {k: m.median for k, m in raw.items()}
            unit = "instructions"
        elif raw and all(m.normalized for m in raw.values()):
            values = {k: m.normalized for k, m in raw.items()}
            unit = "normalized"
        else:
            values = {k: m.median for k, m in raw.items()}
            unit = "s"
        return Distribution(values, unit, "measured")

    return _cached(sandbox, key, compute)


def measurement_value(m, unit: str) -> float | None:
    """A Measurement (object or dict) in `unit` ("normalized", "s", "instructions")."""
    get = (lambda k: m.get(k)) if isinstance(m, Mapping) else (lambda k: getattr(m, k, None))
    if unit == "normalized":
        return get("normalized")
    return get("median")


# =========================================================================== comparisons


@dataclass
class ComparisonRecord:
    """One calibrated comparison as the reward saw it (JSON-able via `to_dict`).

    against      name of the comparand (baseline, reference, a distribution pivot)
    speedup      t(comparand) / t(candidate) (> 1: the candidate is faster)
    ci           its confidence interval; significant: the CI excludes 1 beyond the noise floor
    noise        relative half-width of the speedup CI on the log scale, (ln hi - ln lo) / 2
    identical    the candidate is the comparand's program (same build): speedup exactly 1
    attempts     comparisons made (a noisy one is repeated)
    samples      per side, the samples of the comparison that was kept
    cv           per side, coefficient of variation of those samples
    """

    against: str
    speedup: float = 1.0
    ci: tuple[float, float] | None = None
    significant: bool = False
    noise: float = 0.0
    identical: bool = False
    attempts: int = 0
    n_pairs: int = 0
    decided: bool = False
    noise_floor: float | None = None
    score_span: float = 0.0
    calibration: float | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)
    cv: dict[str, float | None] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["ci"] = list(self.ci) if self.ci is not None else None
        return d


def _score_span(ci: tuple[float, float] | None, score_at: Callable[[float], float] | None) -> float:
    """How much the score changes across the speedup's interval (inf when it cannot be told)."""
    if score_at is None or ci is None:
        return math.inf
    lo, hi = ci
    if not (lo > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return math.inf
    return abs(score_at(hi) - score_at(lo))


def _fmt_ci(ci) -> str:
    return f"[{ci[0]:.4g}, {ci[1]:.4g}]" if ci else "None"


def _log_noise(ci: tuple[float, float] | None) -> float:
    if ci is None:
        return math.inf
    lo, hi = ci
    if not (lo and hi and lo > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return math.inf
    return (math.log(hi) - math.log(lo)) / 2.0


def calibrated_compare(sandbox, comparand: PerfWorkload, candidate: PerfWorkload, *, against: str,
                       metric: str, settings: TimingSettings, max_noise: float, retries: int,
                       skip_identical: bool = True, seed: int = 0,
                       score_at: Callable[[float], float] | None = None,
                       max_score_span: float = 0.0) -> ComparisonRecord:
    """Interleaved comparison of `candidate` with `comparand` (`codegym.timing.measurement.compare`).

    A comparison is too noisy when its noise (`ComparisonRecord.noise`) exceeds
    `max_noise` *and* that noise matters: the score the reward derives from a speedup,
    `score_at(s)`, differs by more than `max_score_span` between the two ends of the
    speedup's interval (a 100x speedup known to +-15 % still earns the capped score; a
    speedup whose interval straddles a decision does not). A too noisy comparison, or
    one whose runs failed for the sandbox's reasons, is repeated up to `retries` times; if
    it stays so, `Unscorable` is raised (with the last comparison as its `record`). Every
    timed run's output is checked (the workloads' `verify`): a run of the candidate that
    answers wrongly or does not end ok raises `TimedRunFailed` at once (the comparand's:
    `Unscorable`, the task is broken).
    With `skip_identical`, a candidate whose build is the comparand's is not measured: its
    speedup is exactly 1 (the same program cannot be faster than itself)."""
    from codegym.timing import measurement as timing
    rec = ComparisonRecord(against=against)
    if skip_identical and candidate.key == comparand.key:
        rec.identical, rec.ci, rec.decided = True, (1.0, 1.0), True
        return rec
    t0 = time.monotonic()
    reason = ""
    for attempt in range(1 + max(0, retries)):
        rec.attempts = attempt + 1
        try:
            cmp = timing.compare(sandbox, comparand.build, candidate.build, comparand.inputs,
                                 metric=metric, warmups=settings.warmups, repeats=settings.repeats,
                                 max_pairs=max(settings.repeats, settings.max_pairs),
                                 budget_s=settings.budget_s, limits=candidate.limits,
                                 alpha=settings.alpha, min_effect=settings.min_effect,
                                 min_of=settings.min_of, seed=seed + attempt,
                                 verify_a=comparand.verify, verify_b=candidate.verify,
                                 inputs_b=candidate.inputs)
        except ValueError as e:  # UnsupportedMetricError
            raise Unscorable(str(e)) from e
        if not cmp.ok:
            if cmp.failure in PROGRAM_FAILURES:
                # a program's own failure is not noise: never retried, never averaged away
                rec.elapsed_s = time.monotonic() - t0
                if cmp.failed == "b":
                    raise TimedRunFailed(cmp.failure, cmp.reason, "candidate", rec)
                raise Unscorable(f"a timed run of the {against} failed ({cmp.failure}): {cmp.reason}", rec)
            reason = f"comparison with the {against} failed: {cmp.reason}"
            continue
        noise = _log_noise(cmp.ci)
        rec.speedup = float(cmp.speedup) if cmp.speedup is not None else 1.0
        rec.ci = tuple(cmp.ci) if cmp.ci is not None else None
        rec.significant = bool(cmp.significant)
        rec.noise = noise
        rec.n_pairs = cmp.n_pairs
        rec.decided = bool(cmp.decided)
        rec.noise_floor = cmp.noise_floor
        rec.calibration = cmp.calibration
        rec.samples = {against: list(cmp.a.samples) if cmp.a else [],
                       "candidate": list(cmp.b.samples) if cmp.b else []}
        rec.cv = {against: cmp.a.cv if cmp.a else None, "candidate": cmp.b.cv if cmp.b else None}
        rec.score_span = _score_span(rec.ci, score_at)
        if noise <= max_noise or rec.score_span <= max_score_span:
            rec.elapsed_s = time.monotonic() - t0
            return rec
        reason = (f"too noisy: the speedup's interval {_fmt_ci(rec.ci)} is +-{noise:.1%} on the log "
                  f"scale (threshold {max_noise:.1%}) and moves the speed score by {rec.score_span:.3f} "
                  f"(threshold {max_score_span:.3f})")
    rec.elapsed_s = time.monotonic() - t0
    raise Unscorable(reason + f" after {rec.attempts} attempt(s)", rec)


# =========================================================================== helpers shared by wrappers


def is_final(info: Mapping[str, Any]) -> bool:
    """True when this step's judge report decides the episode (the hidden tests ran)."""
    return bool(info.get("submitted")) and isinstance(info.get("judge"), Mapping)


def set_component(info: dict, name: str, value: float) -> None:
    """Record a reward component in ``info["reward_components"]`` (copied, not shared)."""
    comps = dict(info.get("reward_components") or {})
    comps[name] = float(value)
    info["reward_components"] = comps


def perf_cases_judged(report: Mapping[str, Any]) -> bool:
    """True when the report's verdict already covers the perf split (env ``timing=True``)."""
    return any((c.get("split") == "perf") for c in report.get("cases") or ())


def check_perf_split(env, report: Mapping[str, Any], files: Mapping[str, Any], language: str):
    """Judge the perf split when the report does not cover it yet; returns the perf report
    as a dict (None when the report already covers it). Correctness on the large inputs
    is part of correctness: a program that fails them is not scored as correct."""
    if perf_cases_judged(report):
        return None
    base = env.unwrapped
    task = base.task
    if not task.cases("perf"):
        return None
    from codegym.judge.run import judge
    rep = judge(task, files, sandbox=base.sandbox, split="perf", early_exit=True, language=language)
    return rep.to_dict()


def merge_reports(hidden: Mapping[str, Any], perf: Mapping[str, Any] | None) -> dict:
    """The hidden report with the perf report's cases appended (passed/total over both; the
    verdict is the hidden one unless it was accepted and the perf split failed)."""
    if perf is None:
        return dict(hidden)
    out = dict(hidden)
    out["passed"] = int(hidden.get("passed") or 0) + int(perf.get("passed") or 0)
    out["total"] = int(hidden.get("total") or 0) + int(perf.get("total") or 0)
    out["cases"] = list(hidden.get("cases") or []) + list(perf.get("cases") or [])
    if hidden.get("verdict") == "accepted" and perf.get("verdict") != "accepted":
        out["verdict"] = perf.get("verdict")
        out["stage"] = "ran"
        out["message"] = "perf split: " + str(perf.get("message") or "")
        total = out["total"]
        out["progress"] = 0.5 + 0.5 * out["passed"] / total if total else 0.5
    return out


def percentile_rank(p: float, n: int) -> int:
    """Nearest rank (1-based, fastest first) of the p-th percentile of n runtimes: the
    smallest k with k / n >= p / 100."""
    return min(n, max(1, math.ceil(p / 100.0 * n - 1e-9)))


def _speed_score(s: float, cap: float, transform: str) -> float:
    """Score in [0, 1] of a speedup s over the comparand: 0 at s <= 1, 1 at s >= cap."""
    if s <= 1.0:
        return 0.0
    if transform == "log":
        return min(1.0, math.log(s) / math.log(cap))
    return min(1.0, (s - 1.0) / (cap - 1.0))


# =========================================================================== the wrapper


class TimedReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Correctness-gated, calibrated speed reward (DMC-Optim), given when the episode is judged.

    On the step that submits, with the hidden report in ``info["judge"]``::

        not correct (hidden or perf split fails,  ->  fail_reward            (default 0)
          or a timed run answers wrongly)
        correct, speed scorable                   ->  correct_reward + speed_weight * S
        correct, speed unscorable (too noisy)     ->  correct_reward + speed_weight * S_lo
                                                      (or unscorable_reward when set)

    with the speed score S in [0, 1] by `mode`:

    - ``speedup``: s = t(against) / t(candidate), `against` the baseline (default) or
      the reference, measured interleaved in the env's sandbox (`codegym.timing.measurement.compare`).
      S = min(1, ln s / ln cap) (``transform="log"``) or min(1, (s-1)/(cap-1))
      (``"ratio"``), and S = 0 unless the speedup is significant (its CI excludes 1
      beyond the noise floor): a speedup inside the noise earns nothing.
    - ``percentile``: the strict top-X% event of DMC-Optim. The task's runtime
      distribution (recorded ``perf.runtimes``, or all its solutions measured here
      and cached) sorted fastest first; the X-th percentile is the nearest-rank value,
      rank ceil(X/100 * n). S = mean over `percentiles` of [candidate significantly
      faster than that solution] (compared interleaved with it; when it is a recorded
      name without code, the candidate's calibrated median's CI must lie below it).
    - ``interpolate``: Mercury-style position between the slowest and the fastest
      solution of the distribution, S = clip((t_slow - t) / (t_slow - t_fast), 0, 1),
      computed as (1 - 1/s) / (1 - r) from s = t_slow / t (interleaved, significant or
      0) and r = t_fast / t_slow (the distribution).

    A comparison whose speedup CI is wider than ``max_noise`` (relative half-width on
    the log scale) where that width matters -- the speed score differs by more than
    ``max_score_span`` between the CI's ends -- is repeated `retries` times, then the
    program is reported unscorable (``info["timing"]["scorable"] = False``), never
    guessed: it earns what is known -- the program is correct, and its speed score is
    at least S_lo, the score at the lower end of the speedup's interval (0 unless the
    speedup is significant; ``speedup`` and ``interpolate`` modes; ``percentile``: 0),
    reported as ``info["timing"]["score_lower_bound"]``. Noise can only lower a reward,
    never raise it: a program with erratic timing earns less, not more. (A reward of 0
    would punish correct programs for the machine's noise, and fast ones most: the
    wider a speedup's interval, the more its score moves, while a program no faster
    than the baseline scores 0 at both ends and stays scorable.) `unscorable_reward`
    replaces all this with a fixed reward. A judge that fails
    (``sandbox_error``) earns `unscorable_reward` if set, else `fail_reward`.
    ``metric="instructions"`` (valgrind; compiled languages only) makes the reward
    exactly repeatable, for tests and ``check_env``.

    Timed runs are judged runs too: they are launched as the judge launches the cases
    (a stdio program cannot tell them apart) and each one's output is checked against
    the case (`codegym.judge.run.perf_runs`). A timed run of the candidate that answers wrongly
    or does not end ok makes it incorrect: `fail_reward`, ``info["timing"]["correct"]``
    False and ``["verdict"]`` the run's status -- a program cannot buy speed with wrong
    answers it gives only when timed.

    Defaults: speedup over the baseline, log transform, cap 10 (a 10x speedup earns the
    full score), correct_reward 1, speed_weight 1 (rewards in {0} and [1, 2]); the
    task's metric; comparisons of 8 to 16 interleaved pairs (one pass each, one warm-up
    pass), alpha 0.05, 120 s budget; max_noise 0.10, max_score_span 0.05, one retry.

    ``info["timing"]``: mode, metric, scorable, reason, score, comparisons (speedup, ci,
    significant, noise, samples, cv, calibration per comparison), elapsed_s.
    ``info["reward_components"]["timed"]`` holds the reward. Earlier steps pass the
    env's reward through. Correctness on the perf split is checked here (one judge run)
    unless the env judged it (``CodeEnv(timing=True)``).

    Example:
        >>> import gymnasium as gym, codegym
        >>> from codegym.wrappers import TimedReward
        >>> env = TimedReward(gym.make("codegym/PerfCode-v0", early_exit=True), mode="speedup")
        >>> obs, info = env.reset(options={"task_id": "perfcode/py-range-count"})
        >>> from codegym.agents import OracleAgent
        >>> agent = OracleAgent(); agent.reset(task=env.unwrapped.task)
        >>> obs, r, term, trunc, info = env.step(agent.act(obs, info))
        >>> info["timing"]["scorable"], r > 1.0          # correct and significantly faster
        (True, True)
    """

    def __init__(self, env: gym.Env, mode: str = "speedup", against: str = "baseline",
                 transform: str = "log", cap: float = 10.0, percentiles: Sequence[float] = (50.0,),
                 distribution: str = "auto", metric: str | None = None,
                 correct_reward: float = 1.0, speed_weight: float = 1.0, fail_reward: float = 0.0,
                 unscorable_reward: float | None = None, max_noise: float = 0.10, max_score_span: float = 0.05,
                 retries: int = 1,
                 repeats: int = 8, max_pairs: int = 16, warmups: int = 1, min_of: int = 1,
                 budget_s: float = 120.0, alpha: float = 0.05, min_effect: float | None = None,
                 check_perf: bool = True, skip_identical: bool = True, seed: int = 0):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if against not in AGAINST:
            raise ValueError(f"against must be one of {AGAINST}, not {against!r}")
        if transform not in TRANSFORMS:
            raise ValueError(f"transform must be one of {TRANSFORMS}, not {transform!r}")
        if not cap > 1.0:
            raise ValueError("cap must be > 1 (the speedup that earns the full speed score)")
        pct = [float(p) for p in ([percentiles] if isinstance(percentiles, (int, float)) else percentiles)]
        if not pct or any(not 0.0 < p <= 100.0 for p in pct):
            raise ValueError("percentiles must be numbers in (0, 100]")
        if distribution not in DISTRIBUTION_SOURCES:
            raise ValueError(f"distribution must be one of {DISTRIBUTION_SOURCES}")
        if metric is not None and metric not in ("cpu", "wall", "instructions"):
            raise ValueError("metric must be cpu, wall, instructions or None (the task's)")
        if max_noise <= 0 or max_score_span < 0:
            raise ValueError("max_noise must be > 0 and max_score_span >= 0")
        gym.utils.RecordConstructorArgs.__init__(
            self, mode=mode, against=against, transform=transform, cap=cap, percentiles=tuple(pct),
            distribution=distribution, metric=metric, correct_reward=correct_reward,
            speed_weight=speed_weight, fail_reward=fail_reward, unscorable_reward=unscorable_reward,
            max_noise=max_noise, max_score_span=max_score_span, retries=retries, repeats=repeats,
            max_pairs=max_pairs,
            warmups=warmups, min_of=min_of, budget_s=budget_s, alpha=alpha, min_effect=min_effect,
            check_perf=check_perf, skip_identical=skip_identical, seed=seed)
        gym.Wrapper.__init__(self, env)
        self.mode, self.against, self.transform, self.cap = mode, against, transform, float(cap)
        self.percentiles = tuple(pct)
        self.distribution = distribution
        self.correct_reward, self.speed_weight = float(correct_reward), float(speed_weight)
        self.fail_reward = float(fail_reward)
        self.unscorable_reward = None if unscorable_reward is None else float(unscorable_reward)
        self.max_noise, self.retries = float(max_noise), int(retries)
        self.max_score_span = float(max_score_span)
        self.settings = TimingSettings(metric=metric, repeats=int(repeats), max_pairs=int(max_pairs),
                                       warmups=int(warmups), min_of=int(min_of), budget_s=float(budget_s),
                                       alpha=float(alpha), min_effect=min_effect)
        self.check_perf = check_perf
        self.skip_identical = skip_identical
        self.seed = int(seed)
        self._episodes = 0

    # ------------------------------------------------------------------ gymnasium

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._episodes += 1
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not is_final(info):
            return obs, reward, terminated, truncated, info
        info = dict(info)
        reward, timing_info = self.score(info)
        info["timing"] = timing_info
        set_component(info, "timed", reward)
        return obs, reward, terminated, truncated, info

    # ------------------------------------------------------------------ scoring

    def score(self, info: Mapping[str, Any]) -> tuple[float, dict]:
        """(reward, info["timing"]) of a final step's info."""
        t0 = time.monotonic()
        base = self.env.unwrapped
        task = base.task
        metric = self.settings.metric_for(task)
        out: dict[str, Any] = {"mode": self.mode, "metric": metric, "scorable": True, "reason": "",
                               "correct": False, "score": 0.0, "comparisons": [], "elapsed_s": 0.0}
        report = info["judge"]
        files = base.workspace.files  # info["files"] is the snapshot before the step's edit
        language = info.get("language") or base.language
        if report.get("verdict") == "accepted" and self.check_perf:
            perf = check_perf_split(self.env, report, files, language)
            if perf is not None:
                out["perf_verdict"] = perf.get("verdict")
                report = merge_reports(report, perf)
        if report.get("verdict") == "sandbox_error":
            out.update(scorable=False, reason="the judge failed (sandbox_error): not a verdict")
            out["elapsed_s"] = time.monotonic() - t0
            return (self.fail_reward if self.unscorable_reward is None else self.unscorable_reward), out
        if report.get("verdict") != "accepted":
            out["reason"] = f"not correct ({report.get('verdict')}): speed is not scored"
            out["elapsed_s"] = time.monotonic() - t0
            return self.fail_reward, out
        out["correct"] = True
        try:
            score = self._speed(task, files, language, metric, out)
        except TimedRunFailed as e:  # answered wrongly (or crashed) when timed: not correct
            out.update(correct=False, verdict=e.status, reason=str(e))
            out["elapsed_s"] = time.monotonic() - t0
            return self.fail_reward, out
        except Unscorable as e:
            out.update(scorable=False, reason=str(e))
            out["elapsed_s"] = time.monotonic() - t0
            if self.unscorable_reward is not None:
                return self.unscorable_reward, out
            lb = getattr(e, "lower_bound", None)
            if lb is not None:  # what the noise cannot take away
                out["score_lower_bound"] = lb
                return self.correct_reward + self.speed_weight * lb, out
            return self.correct_reward, out
        out["score"] = score
        out["elapsed_s"] = time.monotonic() - t0
        return self.correct_reward + self.speed_weight * score, out

    def _workload(self, task, name: str) -> PerfWorkload:
        sb = self.env.unwrapped.sandbox
        lang, files = solution_files(task, name)
        return perf_workload(task, files, lang, sb)

    def _compare(self, comparand: PerfWorkload, candidate: PerfWorkload, against: str, metric: str,
                 out: dict, score_at: Callable[[float], float], bound: bool = False) -> ComparisonRecord:
        """One calibrated comparison; with `bound`, an Unscorable carries the lower-bound
        score of its last comparison (modes whose score is that comparison's)."""
        try:
            rec = calibrated_compare(self.env.unwrapped.sandbox, comparand, candidate, against=against,
                                     metric=metric, settings=self.settings, max_noise=self.max_noise,
                                     retries=self.retries, skip_identical=self.skip_identical,
                                     seed=self.seed + self._episodes, score_at=score_at,
                                     max_score_span=self.max_score_span)
        except TimedRunFailed as e:
            if e.record is not None:
                out["comparisons"].append(e.record.to_dict())
            raise
        except Unscorable as e:
            if e.record is not None:  # the samples of an unscorable comparison are kept too
                out["comparisons"].append(e.record.to_dict())
            if bound:
                e.lower_bound = lower_bound_score(e.record, score_at)
            raise
        out["comparisons"].append(rec.to_dict())
        if rec.calibration is not None:
            out["calibration"] = rec.calibration
        return rec

    def _speed(self, task, files, language: str, metric: str, out: dict) -> float:
        sb = self.env.unwrapped.sandbox
        cand = perf_workload(task, files, language, sb)
        if self.mode == "speedup":
            name = baseline_name(task) if self.against == "baseline" else reference_name(task)
            if name is None:
                raise Unscorable(f"task {task.id} has no {self.against} solution")
            rec = self._compare(self._workload(task, name), cand, name, metric, out,
                                lambda x: _speed_score(x, self.cap, self.transform), bound=True)
            s = rec.speedup if rec.significant and rec.speedup > 1.0 else 1.0
            out["speedup"] = rec.speedup
            out["against"] = name
            return _speed_score(s, self.cap, self.transform)
        dist = runtime_distribution(task, sb, self.settings, self.distribution)
        ranked = dist.sorted()
        out["distribution"] = {"values": dict(ranked), "unit": dist.unit, "source": dist.source}
        if len(ranked) < 2:
            raise Unscorable(f"the runtime distribution of {task.id} has {len(ranked)} entr"
                             f"{'y' if len(ranked) == 1 else 'ies'}; it needs at least 2")
        if self.mode == "interpolate":
            (fast, t_fast), (slow, t_slow) = ranked[0], ranked[-1]
            if not t_slow > t_fast:
                raise Unscorable("the slowest and fastest solutions have the same runtime")
            if slow not in task.solutions and slow != STARTER:
                raise Unscorable(f"the slowest entry {slow!r} of the distribution has no code to compare with")
            r = t_fast / t_slow
            rec = self._compare(self._workload(task, slow), cand, slow, metric, out,
                                lambda x: min(1.0, max(0.0, (1.0 - 1.0 / x) / (1.0 - r))), bound=True)
            s = rec.speedup if rec.significant and rec.speedup > 1.0 else 1.0
            pos = (1.0 - 1.0 / s) / (1.0 - r)
            out.update(slowest=slow, fastest=fast, speedup=rec.speedup, position=pos)
            return min(1.0, max(0.0, pos))
        # percentile
        n = len(ranked)
        beats: dict[str, bool] = {}
        recs: dict[str, ComparisonRecord] = {}
        events = []
        for p in self.percentiles:
            k = percentile_rank(p, n)
            pivot, threshold = ranked[k - 1]
            if pivot not in beats:
                if pivot in task.solutions or pivot == STARTER:
                    rec = recs[pivot] = self._compare(self._workload(task, pivot), cand, pivot, metric, out,
                                                      lambda x: 1.0 if x > 1.0 else 0.0)
                    beats[pivot] = bool(rec.significant and rec.speedup > 1.0)
                else:
                    beats[pivot] = self._beats_threshold(cand, threshold, dist.unit, metric, out)
            events.append({"percentile": p, "rank": k, "pivot": pivot, "threshold": threshold,
                           "beats": beats[pivot]})
        out["percentiles"] = events
        return sum(e["beats"] for e in events) / len(events)

    def _beats_threshold(self, cand: PerfWorkload, threshold: float, unit: str, metric: str,
                         out: dict) -> bool:
        """The candidate's calibrated median is below `threshold` (a recorded value without
        code): its CI's upper end, in the distribution's unit, must lie below it."""
        sb = self.env.unwrapped.sandbox
        for attempt in range(1 + self.retries):
            m = measure_workload(sb, cand, self.settings, metric)
            med = measurement_value(m, unit)
            if med is None:
                raise Unscorable(f"the candidate's measurement has no {unit} value (no calibration)")
            scale = med / m.median if m.median else 1.0
            hi = m.ci[1] * scale if m.ci else math.inf
            noise = m.rel_ci if m.rel_ci is not None else math.inf
            out["comparisons"].append({"against": f"threshold {threshold:.6g} {unit}", "median": med,
                                       "ci_high": hi, "noise": noise, "samples": {"candidate": m.samples},
                                       "cv": {"candidate": m.cv}, "calibration": m.calibration})
            if noise <= self.max_noise:
                return hi < threshold
        raise Unscorable(f"too noisy: the candidate's median is known to +-{noise:.1%} only")


__all__ = ["TimedReward", "Unscorable", "TimedRunFailed", "PerfWorkload", "TimingSettings", "Distribution",
           "ComparisonRecord", "perf_workload", "solution_files", "solution_measurement",
           "runtime_distribution", "recorded_runtimes", "calibrated_compare", "measure_workload",
           "clear_cache", "percentile_rank", "CALIBRATION_KEY", "STARTER", "MODES"]
