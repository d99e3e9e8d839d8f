"""`StagedReward` (RLPF): failures ordered by how far execution got, correct programs by speed.

This module owns the staged reward: `StageValues` (the configurable values and weights),
`improvement(...)` (the relative improvement ``I = (t_baseline - t) / (t_baseline -
t_reference)`` from the baseline toward the reference), `staged_reward(...)` (the formula,
a pure function of a report and times; its stages are the judge's `PROGRAM_STAGES`, told by
`codegym.judge.report.program_stage`) and the `StagedReward` wrapper that applies it to the
episode's final judge report, with the measurements of `codegym.wrappers.measure`
(stopped at `codegym.wrappers.bound`). docs/rewards.md has the table of values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import gymnasium as gym

from codegym.core.groups import with_fields
from codegym.judge.perf import Unscorable
from codegym.judge.report import program_stage
from codegym.tasks.schema import Task
from codegym.timing.kept import Reference
from codegym.wrappers.base import JUDGE_FAILED, FinalReward, failed_report
from codegym.wrappers.baseline import Looks, stop_looks, undecided
from codegym.wrappers.bound import BoundReached, bound_failure, bounded_workload
from codegym.wrappers.feedback import staged_line
from codegym.wrappers.measure import (
    TimedRunFailed,
    TimingSettings,
    measurement_value,
    recorded_runtimes,
    relative_noise,
    timing_options,
)
from codegym.wrappers.program import Bench, FinalProgram

RUNTIME_SOURCES = ("auto", "recorded", "measured")
#: a candidate whose recorded-time speedup over the baseline is below this is compared with
#: the baseline measured now (docs/rewards.md, "Anchored to the baseline"): the calibration
#: workload carries recorded times from machine to machine only to within ~1.1-1.4x
ANCHOR_BELOW = 2.0


@dataclass(frozen=True)
class StageValues:
    """Values and weights of the staged reward (the table in docs/rewards.md).

    no_code, compile_error, runtime_error   value of each failure stage
    wrong_answer                            value of a wrong answer with no test passed
    wrong_answer_weight                     added times the fraction of tests passed
    correct                                 value of a correct program no faster than the baseline
    speed_weight                            added times clip(I, 0, 1)
    bonus, bonus_speedup                    beyond the reference: + bonus * clip(log(t_ref/t) /
                                            log(bonus_speedup), 0, 1)
    sandbox_error                           value of a report that is not a verdict

    The order no_code < compile_error < runtime_error < wrong_answer and
    wrong_answer + wrong_answer_weight <= correct is checked: it is the point of the reward.
    """

    no_code: float = 0.0
    compile_error: float = 0.1
    runtime_error: float = 0.2
    wrong_answer: float = 0.3
    wrong_answer_weight: float = 0.3
    correct: float = 0.6
    speed_weight: float = 0.4
    bonus: float = 0.1
    bonus_speedup: float = 2.0
    sandbox_error: float = 0.0

    def __post_init__(self) -> None:
        if not (self.no_code < self.compile_error < self.runtime_error < self.wrong_answer):
            raise ValueError("stage values must increase: no_code < compile_error < runtime_error "
                             f"< wrong_answer (got {self.no_code}, {self.compile_error}, "
                             f"{self.runtime_error}, {self.wrong_answer})")
        if self.wrong_answer_weight <= 0:
            raise ValueError("wrong_answer_weight must be > 0 (more tests passed must earn more)")
        if self.wrong_answer + self.wrong_answer_weight > self.correct + 1e-12:
            raise ValueError("wrong_answer + wrong_answer_weight must be <= correct "
                             "(a wrong program may not out-earn a correct one)")
        if self.speed_weight < 0 or self.bonus < 0:
            raise ValueError("speed_weight and bonus must be >= 0")
        if not self.bonus_speedup > 1:
            raise ValueError("bonus_speedup must be > 1")
        if self.sandbox_error < self.no_code:  # an infrastructure fault is never charged to the program
            raise ValueError("sandbox_error must be >= no_code (a judge failure is not a verdict)")

    def to_dict(self) -> dict:
        return asdict(self)


#: how `StagedReward` measures by default (its `timing`): a comparison takes as many pairs as
#: a measurement takes samples
STAGED_TIMING = TimingSettings(repeats=5, max_pairs=5, warmups=1, min_of=1, budget_s=60.0)
#: the fields of `TimingSettings` `StagedReward` takes one by one
STAGED_TIMING_KEYS = ("metric", "repeats", "warmups", "min_of", "budget_s")


def _grouped(values: StageValues | None, timing: TimingSettings | None,
             options: Mapping[str, Any]) -> tuple[StageValues, TimingSettings]:
    """(`StageValues`, `TimingSettings`) of `StagedReward`'s arguments: the groups given, with
    the fields given one by one over them (TypeError for any other keyword)."""
    stage_keys = tuple(f.name for f in fields(StageValues))
    unknown = sorted(set(options) - set(stage_keys) - set(STAGED_TIMING_KEYS))
    if unknown:
        raise TypeError(f"StagedReward got unexpected keyword argument(s) {', '.join(unknown)}")
    values = with_fields(values or StageValues(), {k: v for k, v in options.items() if k in stage_keys},
                         stage_keys, "StagedReward")
    t = {k: v for k, v in options.items() if k in STAGED_TIMING_KEYS}
    if "repeats" in t:  # a comparison takes as many pairs as a measurement takes samples
        t["max_pairs"] = t["repeats"]
    return values, with_fields(timing or STAGED_TIMING, t, (*STAGED_TIMING_KEYS, "max_pairs"), "StagedReward")


@dataclass
class PerfTimes:
    """Times of the candidate, the baseline and the reference in one unit.

    rel_noise: relative half-width of each one's CI (0 for recorded values).
    """

    t: float
    t_baseline: float
    t_reference: float
    unit: str = "s"
    source: str = "measured"
    noise: float = 0.0
    noise_baseline: float = 0.0
    noise_reference: float = 0.0
    #: recorded times rescaled by the baseline measured now: recorded / live baseline time
    anchor: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _value(m: Any, unit: str) -> float:
    """`measurement_value` of a measurement that has one (a measurement without a value failed:
    Unscorable)."""
    v = measurement_value(m, unit)
    if v is None:
        raise Unscorable(f"a timing measurement has no {unit} value")
    return v


def improvement(times: PerfTimes, noise_gate: bool = True) -> tuple[float, float]:
    """(I, log2 speedup over the reference) of the candidate.

    ``I = (t_baseline - t) / (t_baseline - t_reference)``; with `noise_gate`, I is 0 unless
    the candidate is faster than the baseline by more than their combined relative noise
    (hypot of the CIs' relative half-widths), and the speedup over the reference counts only
    beyond its noise the same way.
    """
    t, tb, tr = times.t, times.t_baseline, times.t_reference
    if not (t > 0 and tb > 0 and tr > 0):
        return 0.0, 0.0
    span = tb - tr
    imp = (tb - t) / span if span > 0 else (1.0 if t <= tr else 0.0)
    if noise_gate and tb / t - 1.0 <= math.hypot(times.noise, times.noise_baseline):
        imp = min(imp, 0.0)
    beyond = math.log2(tr / t) if t < tr else 0.0
    if noise_gate and tr / t - 1.0 <= math.hypot(times.noise, times.noise_reference):
        beyond = 0.0
    return imp, beyond


def staged_reward(report: Mapping[str, Any], times: PerfTimes | None = None,
                  values: StageValues = StageValues(), noise_gate: bool = True) -> tuple[float, dict]:
    """(reward, details) of a judge report, with the candidate's `times` for a correct one
    (None: speed unknown, the correct program earns ``values.correct``)."""
    stage, frac = program_stage(report)  # the judge's stage vocabulary (PROGRAM_STAGES)
    details: dict[str, Any] = {"stage": stage, "fraction": frac, "improvement": None,
                               "log2_speedup_over_reference": None}
    if stage == "wrong_answer":
        return values.wrong_answer + values.wrong_answer_weight * frac, details
    if stage != "correct":
        return float(getattr(values, stage)), details
    r = values.correct
    if times is not None:
        imp, beyond = improvement(times, noise_gate)
        details["improvement"], details["log2_speedup_over_reference"] = imp, beyond
        r += values.speed_weight * min(1.0, max(0.0, imp))
        if beyond > 0:
            r += values.bonus * min(1.0, beyond / math.log2(values.bonus_speedup))
    return r, details


class StagedReward(FinalReward, gym.utils.RecordConstructorArgs):
    """RLPF staged reward on the step that submits (earlier steps pass the env's reward).

    Failures are ordered by how far execution got (no code < compile error < runtime
    error or timeout on every test < wrong answer scaled by the fraction of tests passed);
    correct programs are ranked by their relative improvement
    ``I = (t_baseline - t) / (t_baseline - t_reference)`` from the baseline toward the
    expert reference, clipped to [0, 1], with a bonus beyond the reference. Every value of
    the table in docs/rewards.md is a constructor argument; the page also says where the
    times come from (``runtimes``: recorded or measured) and how ``noise_gate`` works.
    A candidate whose timed runs reach ``slow_bound`` times the baseline's time is stopped
    there and earns ``correct`` (``info["staged"]["bound"]``; None: no bound); so is, with
    ``futility``, a candidate whose first passes rule out a speedup worth rewarding
    (docs/rewards.md, "Near-ties": the baseline is kept per task, not measured per
    submission).

    ``info["staged"]``: stage, fraction, improvement, times (t, t_baseline, t_reference,
    unit, source), scorable, reason; (bound) for a stopped candidate, (looks) for one
    the looks did not stop. ``info["reward_components"]["staged"]``: the reward.

    Example:
        >>> import gymnasium as gym, codegym
        >>> from codegym.wrappers import StagedReward
        >>> env = StagedReward(gym.make("codegym/PerfCode-v0", early_exit=True))
        >>> obs, info = env.reset(options={"task_id": "perfcode/py-range-count"})
        >>> obs, r, term, trunc, info = env.step("```python\\nprint(\\n```\\nsubmit")  # no compile
        >>> info["staged"]["stage"], r
        ('compile_error', 0.1)
    """

    info_key = "staged"
    component = "staged"

    def __init__(self, env: gym.Env, values: StageValues | None = None, timing: TimingSettings | None = None,
                 timed: bool = True, runtimes: str = "auto", noise_gate: bool = True, check_perf: bool = True,
                 slow_bound: float | None = 1.0, futility: bool = True, **options: Any):
        """`values`: the stage table (`StageValues`); `timing`: how a correct candidate is
        measured (`TimingSettings`: metric, repeats, warmups, min_of, budget_s; default
        `STAGED_TIMING`). Their fields are also taken one by one as keywords
        (``correct=0.5``, ``repeats=3``: `flat_options`), as a reward config gives them."""
        if runtimes not in RUNTIME_SOURCES:
            raise ValueError(f"runtimes must be one of {RUNTIME_SOURCES}, not {runtimes!r}")
        if slow_bound is not None and not slow_bound > 0:
            raise ValueError("slow_bound must be > 0 (a factor of the baseline's time) or None")
        values, settings = _grouped(values, timing, options)
        gym.utils.RecordConstructorArgs.__init__(
            self, **values.to_dict(), timed=timed, runtimes=runtimes, metric=settings.metric,
            repeats=settings.repeats, warmups=settings.warmups, min_of=settings.min_of,
            budget_s=settings.budget_s, noise_gate=noise_gate, check_perf=check_perf, slow_bound=slow_bound,
            futility=futility)
        FinalReward.__init__(self, env, check_perf=check_perf)
        self.slow_bound = None if slow_bound is None else float(slow_bound)
        self.futility = bool(futility)
        self._looks: Looks | None = None   # the looks at the program being scored (for info)
        self.values = values
        self.timed = timed
        self.runtimes = runtimes
        self.noise_gate = noise_gate
        self.settings = settings

    @classmethod
    def flat_options(cls) -> dict[str, tuple[Any, Any]]:
        """The grouped settings' fields a caller (or a reward config) may give one by one:
        name -> (type, default)."""
        return {**{f.name: (float, f.default) for f in fields(StageValues)},
                **timing_options(STAGED_TIMING, STAGED_TIMING_KEYS)}

    def score_program(self, program: FinalProgram) -> tuple[float, dict]:
        """(reward, info["staged"]) of the judged program."""
        report = program.report
        times, reason, failed_run, stopped = None, "", None, None
        self._looks = None
        if program.accepted and self.timed:
            try:
                times = self.times(program)
            except BoundReached as e:  # no faster than the baseline: the baseline's score
                stopped = e
                times = self.baseline_times(program.task, e)
            except TimedRunFailed as e:  # a timed run answered wrongly: that case failed
                failed_run = str(e)
                total = int(report.get("total") or 0)
                passed = max(0, min(int(report.get("passed") or 0), total) - 1)
                report = failed_report(report, e.status, failed_run, passed=passed)
            except Unscorable as e:
                reason = f"speed not scored: {e}"
        reward, details = staged_reward(report, times, self.values, self.noise_gate)
        if failed_run:
            details["timed_run_failed"] = failed_run
        if stopped is not None:
            details["bound"] = stopped.details()
        elif self._looks is not None:  # looked at, not stopped: measured
            details["looks"] = {**self._looks.tie.details(), "kept": self._looks.kept}
        details["times"] = times.to_dict() if times is not None else None
        details["scorable"] = details["stage"] != "sandbox_error" and not reason
        details["reason"] = reason or (JUDGE_FAILED if details["stage"] == "sandbox_error" else "")
        details["reward"] = reward
        return reward, details

    def feedback(self, details: Mapping[str, Any]) -> str:
        """``Performance: 3.2x faster than the baseline (...); stage: correct and faster``."""
        return staged_line(details)

    def times(self, program: FinalProgram) -> PerfTimes:
        """The candidate's, baseline's and reference's times in one unit (docs/rewards.md).

        Raises `BoundReached` when the candidate's timed runs reach the slow bound."""
        task, report, bench = program.task, program.report, program.bench
        metric = self.settings.metric_for(task)
        b, r = task.baseline_name, task.reference_name
        if r is None:
            raise Unscorable(f"task {task.id} has no reference solution")
        cand = report.get("timing")
        if not (isinstance(cand, Mapping) and cand.get("ok") and cand.get("metric") == metric):
            cand = self._measure_candidate(program, metric)
        rt, cal = recorded_runtimes(task, metric)
        if cand is None:  # a near-tie the looks did not decide: scored from its looks
            assert self._looks is not None
            return self._looked_times(bench, self._looks, rt)
        use_recorded = self.runtimes == "recorded" or (self.runtimes == "auto" and b in rt and r in rt)
        if use_recorded:
            if b not in rt or r not in rt:
                raise Unscorable(f"task {task.id} has no recorded runtimes of {b!r} and {r!r}")
            if metric != "instructions" and cal and measurement_value(cand, "normalized"):
                unit, tb, tr = "normalized", rt[b] / cal, rt[r] / cal
            else:
                unit, tb, tr = ("instructions" if metric == "instructions" else "s"), rt[b], rt[r]
            t = _value(cand, unit)
            times = PerfTimes(t=t, t_baseline=tb, t_reference=tr, unit=unit, source="recorded",
                              noise=relative_noise(cand))
            if unit == "normalized" and t and tb / t < ANCHOR_BELOW:
                times = self._anchored(bench, b, times)
            return times
        mb = bench.solution_measurement(b, self.settings)
        mr = bench.solution_measurement(r, self.settings)
        if metric == "instructions":
            unit = "instructions"
        elif all(measurement_value(m, "normalized") for m in (cand, mb, mr)):
            unit = "normalized"
        else:
            unit = "s"
        return PerfTimes(t=_value(cand, unit), t_baseline=_value(mb, unit),
                         t_reference=_value(mr, unit), unit=unit, source="measured",
                         noise=relative_noise(cand), noise_baseline=relative_noise(mb),
                         noise_reference=relative_noise(mr))


    def _anchored(self, bench: Bench, baseline: str, times: PerfTimes) -> PerfTimes:
        """`times` with the recorded baseline and reference times rescaled so that the
        baseline's is the baseline measured here (their recorded ratio kept): a candidate
        near the baseline is compared with a measurement of this machine, not with a
        recording carried over by the calibration workload. The measurement is the one
        kept for the task (`solution_measurement`: taken again when the machine's speed
        moved or it aged), not one per submission. Unchanged when the baseline cannot be
        measured."""
        try:
            mb = bench.solution_measurement(baseline, self.settings)
        except Unscorable:
            return times
        live = measurement_value(mb, "normalized")
        if not live:
            return times
        scale = live / times.t_baseline
        return replace(times, t_baseline=live, t_reference=times.t_reference * scale,
                       noise_baseline=relative_noise(mb), anchor=1.0 / scale)

    def _measure_candidate(self, program: FinalProgram, metric: str):
        """The candidate's measurement on the perf split, after the looks of
        `codegym.wrappers.baseline.look_at` (its judged perf split and a few concurrent
        passes against the kept baseline, which stop a near-tie) and with every run capped
        at the slow bound; the looks go on over its samples (against the kept measurement
        of the baseline). Without a kept baseline: a probe pass, then the capped measurement."""
        bench = program.bench
        perf_report = program.perf or program.report
        wl = bench.workload(program.files, program.language)
        looks = self._looks = bench.look(wl, self.settings, self.slow_bound, perf_report, self.futility)
        if looks is not None and undecided(looks):
            return None
        if looks is not None:
            return self._measure_looked(bench, wl, metric, looks)
        bound = bench.bound(self.settings, self.slow_bound)
        if bound is None:
            return bench.measure(wl, self.settings, metric)
        bench.probe(wl, bound, metric, perf_report)
        capped = bounded_workload(wl, bound)
        settings = replace(self.settings, warmups=max(0, self.settings.warmups - 1))
        try:
            return bench.measure(capped, settings, metric)
        except TimedRunFailed as e:
            stopped = bound_failure(bound, wl, capped, e)
            if stopped is None:
                raise
            raise stopped from e

    def _looked_times(self, bench: Bench, looks: Looks, rt: Mapping[str, float]) -> PerfTimes:
        """The times of a near-tie its looks did not decide (`looked_times`: the median of its
        looks against the kept baseline's, each median's noise `UNDECIDED_Z` scales wide),
        in seconds at the reference speed; the reference's time by the recorded ratio, or
        by the ratio of the kept measurements of baseline and reference (`rt`: the task's
        recorded runtimes). docs/rewards.md ("Near-ties") says why this is not measured further."""
        task = bench.task
        b, r = task.baseline_name, task.reference_name
        t, tb, noise, noise_b = bench.looked_times(looks)
        mb: float | None
        mr: float | None
        if r is not None and b in rt and r in rt:
            mb, mr = rt[b], rt[r]
        else:
            try:
                mb = measurement_value(bench.solution_measurement(b, self.settings), "s")
                mr = measurement_value(bench.solution_measurement(r, self.settings), "s") if r else None
            except Unscorable:
                mb = mr = None
        ratio = mb / mr if mb and mr else 1.0
        return PerfTimes(t=t, t_baseline=tb, t_reference=tb / max(ratio, 1.0), unit="s", source="looks",
                         noise=noise, noise_baseline=noise_b, noise_reference=noise_b)

    def _measure_looked(self, bench: Bench, wl, metric: str, looks: Looks):
        """The capped measurement of a candidate the looks did not stop, each sample one
        more look (against the baseline's kept sequential measurement)."""
        capped = bounded_workload(wl, looks.bound)
        settings = replace(self.settings, warmups=max(0, self.settings.warmups - 1))
        look = None
        try:
            ref = Reference.of_measurement(bench.solution_measurement(bench.task.baseline_name, self.settings))
            look = bench.sample_look(metric, looks.tie, ref)
        except (Unscorable, ValueError):
            pass  # no kept measurement: the samples are not looked at
        try:
            m = bench.measure(capped, settings, metric, look=look)
        except TimedRunFailed as e:
            stopped = bound_failure(looks.bound, wl, capped, e)
            if stopped is None:
                raise
            stopped.looks, stopped.kept = looks.tie.details(), looks.kept
            raise stopped from e
        if m.stopped:
            spent = m.raw_samples[-1] if m.raw_samples else m.median
            assert spent is not None  # (a measurement a look stopped has samples)
            stop_looks(looks, spent, "the measurement's samples")
        return m

    def baseline_times(self, task: Task, stopped: BoundReached) -> PerfTimes:
        """The times of a candidate stopped at the slow bound, in the bound's seconds: what it
        had spent (at least the baseline's time, so the improvement is 0 and it earns the
        baseline's score), the baseline's, and the reference's by the recorded ratio (the
        baseline's when none is recorded); ``source`` says where the baseline's came from."""
        b = stopped.bound
        return PerfTimes(t=max(b.baseline_s, stopped.spent_s), t_baseline=b.baseline_s,
                         t_reference=b.baseline_s / max(1.0, _recorded_ratio(task, b.metric)), unit="s",
                         source=b.source)


def _recorded_ratio(task: Task, metric: str) -> float:
    """t_baseline / t_reference from the task's recorded runtimes (1 when unknown)."""
    rt, _ = recorded_runtimes(task, metric)
    tb, tr = rt.get(task.baseline_name), rt.get(task.reference_name or "")
    return tb / tr if tb and tr else 1.0


