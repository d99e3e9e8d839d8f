"""The performance measurements the reward wrappers share (`TimedReward`, `StagedReward`).

`TimingSettings` (how to measure and compare), `measure_workload` (one program on a
task's perf split, every timed output checked), `solution_measurement` and
`runtime_distribution` (a task's own solutions, kept per sandbox and task content hash
while the machine's speed holds: `keep_for_task`, or its recorded ``perf.runtimes``:
`recorded_runtimes`), and
`calibrated_compare` (an interleaved comparison repeated while too noisy, as a
`ComparisonRecord`). `TimedRunFailed` is raised when a timed run of the candidate
answers wrongly or does not end ok; `Unscorable` (`codegym.judge.perf`) when speed
cannot be scored. docs/rewards.md explains recorded runtimes and the noise rules.
"""

from __future__ import annotations

import math
import time
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from codegym.judge.perf import PerfRuns, Unscorable, perf_workload
from codegym.sandbox.types import Sandbox
from codegym.tasks.runtimes import CALIBRATION_KEY, perf_runtimes
from codegym.tasks.schema import STARTER, Task
from codegym.timing.comparison import CompareSettings, compare
from codegym.timing.kept import forget_kept, keep
from codegym.timing.measurement import measure
from codegym.timing.probe import slowness_now

DISTRIBUTION_SOURCES = ("auto", "recorded", "measured")


class TimedRunFailed(Exception):
    """A timed run of a program failed: its output was wrong, or it did not end ok (see
    `codegym.judge.perf.perf_runs`). Not noise: the program is not correct on that run, and
    the wrappers score it as incorrect. `status` is the run's case status
    (wrong_answer, runtime_error, timeout, ...); `which` names the program."""

    def __init__(self, status: str, message: str, which: str = "candidate",
                 record: ComparisonRecord | None = None):
        super().__init__(f"a timed run of the {which} failed ({status}): {message}")
        self.status, self.which, self.record = status, which, record


#: failures of a timed run that are the program's own (sandbox_error is not)
PROGRAM_FAILURES = ("wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit")


# =========================================================================== workloads


def solution_files(task: Task, name: str | None) -> tuple[str, dict[str, str]]:
    """(language, files) of a named solution; None gives the baseline, ``"starter"`` the
    starter (unless a solution has that name)."""
    if name is None:
        return task.baseline_files()
    if name == STARTER and STARTER not in task.solutions:
        return task.language, task.starter_files()
    sol = task.solution(name)
    return (sol.language or task.language), dict(sol.files)


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

    def metric_for(self, task: Task) -> str:
        return self.metric or task.perf.metric

    def key(self, task: Task) -> tuple:
        return (self.metric_for(task), self.repeats, self.warmups, self.min_of)

    def comparison(self, metric: str, seed: int = 0, futile: str = "band") -> CompareSettings:
        """`codegym.timing.compare`'s settings for a comparison made with these (as many pairs
        as `repeats` at least)."""
        return CompareSettings(metric=metric, warmups=self.warmups, repeats=self.repeats,
                               max_pairs=max(self.repeats, self.max_pairs), budget_s=self.budget_s,
                               alpha=self.alpha, min_effect=self.min_effect, min_of=self.min_of, seed=seed,
                               futile=futile)


#: the fields of `TimingSettings`: the timed rewards also take them one by one as keywords
TIMING_KEYS = ("metric", "repeats", "max_pairs", "warmups", "min_of", "budget_s", "alpha", "min_effect")


def group_options(group: Any) -> dict[str, tuple[Any, Any]]:
    """name -> (type, default) of every field of a settings dataclass (given one by one)."""
    hints = typing.get_type_hints(type(group))
    return {f.name: (hints[f.name], getattr(group, f.name)) for f in fields(group)}


def timing_options(defaults: TimingSettings, keys: Sequence[str] = TIMING_KEYS) -> dict[str, tuple[Any, Any]]:
    """name -> (type, default) of the `TimingSettings` fields `keys` (what a reward config
    may give one by one)."""
    kinds: dict[str, Any] = {"metric": str | None, "min_effect": float | None, "budget_s": float, "alpha": float}
    return {k: (kinds.get(k, int), getattr(defaults, k)) for k in keys}


# =========================================================================== kept measurements


def clear_cache() -> None:
    """Forget every kept measurement (all sandboxes): solutions, distributions, baselines."""
    forget_kept()


def keep_for_task(sandbox: Sandbox, key: tuple, metric: str, compute, speed_now: float | None = None):
    """`codegym.timing.kept.keep` for a task's measurement: taken again when the machine's
    speed (`speed_now`, else read now) moved, or it aged (never for exact instruction counts)."""
    if metric == "instructions":
        return keep(sandbox, key, compute, max_age_s=math.inf)
    return keep(sandbox, key, compute, speed_now=speed_now or slowness_now(sandbox, metric),
                recheck=lambda: slowness_now(sandbox, metric))


def measure_workload(sandbox: Sandbox, wl: PerfRuns, settings: TimingSettings, metric: str,
                     which: str = "candidate", look=None):
    """`codegym.timing.measurement.measure` of a workload with `settings` (and `look` after
    every sample); raises `Unscorable`, or `TimedRunFailed` when a run of the program
    (`which`) failed."""
    try:
        m = measure(sandbox, wl.build, wl.inputs, metric=metric, warmups=settings.warmups,
                    repeats=settings.repeats, max_repeats=max(settings.repeats, settings.max_pairs),
                    budget_s=settings.budget_s, limits=wl.limits, min_of=settings.min_of, verify=wl.verify,
                    look=look)
    except ValueError as e:  # UnsupportedMetricError
        raise Unscorable(str(e)) from e
    if not m.ok:
        if m.failure in PROGRAM_FAILURES:
            raise TimedRunFailed(m.failure, m.reason, which)
        raise Unscorable(f"measurement failed: {m.reason}")
    return m


def solution_measurement(task: Task, name: str, sandbox: Sandbox, settings: TimingSettings | None = None):
    """`codegym.timing.measurement.Measurement` of a task's solution (or ``"starter"``) on the perf
    split; kept per (sandbox, task content hash, name, metric, repeats, warmups, min_of) and
    measured again when the machine's speed moved or it aged (`keep`)."""
    settings = settings or TimingSettings()
    metric = settings.metric_for(task)
    key = ("measure", task.content_hash, name, *settings.key(task))

    def compute():
        lang, files = solution_files(task, name)
        try:
            m = measure_workload(sandbox, perf_workload(task, files, lang, sandbox), settings, metric,
                                 which=f"task's {name!r} solution")
        except TimedRunFailed as e:  # the task's own solution: a broken task, not a verdict
            raise Unscorable(str(e)) from e
        return m, m.speed

    return keep_for_task(sandbox, key, metric, compute)[0]


def recorded_runtimes(task: Task, metric: str | None = None) -> tuple[dict[str, float], float | None]:
    """(runtimes by name without the calibration entry, recording calibration or None).

    From the task's ``perf.runtimes``, else from its suite's ``runtimes.json`` written by
    ``codegym tasks calibrate`` (only when recorded for this content hash and metric)."""
    rt = dict(task.perf.runtimes or {})
    if not rt:
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


def runtime_distribution(task: Task, sandbox: Sandbox, settings: TimingSettings | None = None,
                         source: str = "auto") -> Distribution:
    """The task's runtime distribution: recorded ``perf.runtimes`` (``source="recorded"``),
    or every accepted solution measured in `sandbox` (``"measured"``, each measurement kept
    as `solution_measurement` keeps it); ``"auto"`` uses the recorded one when the task has one."""
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
    # every solution's measurement is kept (`solution_measurement`): the distribution is rebuilt from them
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


def measurement_field(m, key: str) -> Any:
    """A field of a Measurement given as an object or as its dict (None when absent)."""
    return m.get(key) if isinstance(m, Mapping) else getattr(m, key, None)


def measurement_value(m, unit: str) -> float | None:
    """A Measurement (object or dict) in `unit` ("normalized", "s", "instructions")."""
    return measurement_field(m, "normalized" if unit == "normalized" else "median")


def relative_noise(m) -> float:
    """A Measurement's relative noise: its CI's relative half-width, else its CV, else 0."""
    v = measurement_field(m, "rel_ci")
    if v is None or not math.isfinite(v):
        v = measurement_field(m, "cv")
    return float(v) if v is not None and math.isfinite(v) else 0.0



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


def _record(rec: ComparisonRecord, cmp, against: str, score_at: Callable[[float], float] | None) -> None:
    """Copy a finished `codegym.timing.Comparison` into the record."""
    rec.speedup = float(cmp.speedup) if cmp.speedup is not None else 1.0
    rec.ci = tuple(cmp.ci) if cmp.ci is not None else None
    rec.significant = bool(cmp.significant)
    rec.noise = _log_noise(cmp.ci)
    rec.n_pairs = cmp.n_pairs
    rec.decided = bool(cmp.decided)
    rec.noise_floor = cmp.noise_floor
    rec.calibration = cmp.calibration
    rec.samples = {against: list(cmp.a.samples) if cmp.a else [],
                   "candidate": list(cmp.b.samples) if cmp.b else []}
    rec.cv = {against: cmp.a.cv if cmp.a else None, "candidate": cmp.b.cv if cmp.b else None}
    rec.score_span = _score_span(rec.ci, score_at)


def calibrated_compare(sandbox: Sandbox, comparand: PerfRuns, candidate: PerfRuns, *, against: str,
                       metric: str, settings: TimingSettings, max_noise: float, retries: int,
                       skip_identical: bool = True, seed: int = 0,
                       score_at: Callable[[float], float] | None = None,
                       max_score_span: float = 0.0, futile: str = "band") -> ComparisonRecord:
    """Interleaved comparison of `candidate` with `comparand` (`codegym.timing.compare`).

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
    speedup is exactly 1 (the same program cannot be faster than itself). `futile`:
    `codegym.timing.compare`'s (``"speedup"`` stops once a speedup of `min_worth` is ruled out)."""
    rec = ComparisonRecord(against=against)
    if skip_identical and candidate.key == comparand.key:
        rec.identical, rec.ci, rec.decided = True, (1.0, 1.0), True
        return rec
    t0 = time.monotonic()
    reason = ""
    for attempt in range(1 + max(0, retries)):
        rec.attempts = attempt + 1
        try:
            cmp = compare(sandbox, comparand.build, candidate.build, comparand.inputs,
                          settings.comparison(metric, seed + attempt, futile), limits=candidate.limits,
                          verify_a=comparand.verify, verify_b=candidate.verify, inputs_b=candidate.inputs)
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
        _record(rec, cmp, against, score_at)
        if rec.noise <= max_noise or rec.score_span <= max_score_span:
            rec.elapsed_s = time.monotonic() - t0
            return rec
        reason = (f"too noisy: the speedup's interval {_fmt_ci(rec.ci)} is +-{rec.noise:.1%} on the log "
                  f"scale (threshold {max_noise:.1%}) and moves the speed score by {rec.score_span:.3f} "
                  f"(threshold {max_score_span:.3f})")
    rec.elapsed_s = time.monotonic() - t0
    raise Unscorable(reason + f" after {rec.attempts} attempt(s)", rec)
