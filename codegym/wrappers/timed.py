"""`TimedReward` (DMC-Optim): correctness gates speed, and speed is measured, not guessed.

This module owns the wrapper: on the step that submits, a correct program earns
``correct_reward + speed_weight * S`` with the speed score S of its `mode` (``speedup``,
``percentile``, ``interpolate``; `codegym.wrappers.scoring`), measured in the env's
sandbox with the shared measurements of `codegym.wrappers.measure`. docs/rewards.md
explains the modes, the noise rules and what an unscorable program earns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from codegym.core.groups import with_fields
from codegym.judge.perf import PerfRuns, Unscorable
from codegym.tasks.runtimes import percentile_rank
from codegym.tasks.schema import STARTER
from codegym.wrappers.base import JUDGE_FAILED, FinalReward
from codegym.wrappers.bound import BoundReached, SlowBound, bound_failure, bounded_workload
from codegym.wrappers.feedback import timed_line
from codegym.wrappers.measure import (
    DISTRIBUTION_SOURCES,
    TIMING_KEYS,
    ComparisonRecord,
    TimedRunFailed,
    TimingSettings,
    measurement_value,
    timing_options,
)
from codegym.wrappers.program import Bench, FinalProgram
from codegym.wrappers.scoring import (
    AGAINST,
    MODES,
    TRANSFORMS,
    beat_score,
    counted_speedup,
    interpolation_position,
    interpolation_score,
    lower_bound_score,
    significantly_faster,
    speed_score,
)


class TimedReward(FinalReward, gym.utils.RecordConstructorArgs):
    """Correctness-gated, calibrated speed reward (DMC-Optim), given when the episode is judged.

    Not correct (hidden or perf split fails, or a timed run answers wrongly): `fail_reward`;
    correct: ``correct_reward + speed_weight * S``, S in [0, 1] by `mode` (``speedup`` over
    the `against` solution with a log or ratio `transform` capped at `cap`; ``percentile``:
    beats the `percentiles` of the task's runtime `distribution`; ``interpolate``: position
    between its slowest and fastest solution). A comparison too noisy to decide is retried,
    then reported unscorable and earns S at the pessimistic end of its interval (or
    `unscorable_reward`): noise can lower a reward, never raise it (docs/rewards.md).

    ``info["timing"]``: mode, metric, scorable, reason, correct, score, comparisons,
    elapsed_s (and per mode: speedup, against, percentiles, distribution, position ...).
    ``info["reward_components"]["timed"]`` holds the reward.

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

    info_key = "timing"
    component = "timed"

    def __init__(self, env: gym.Env, mode: str = "speedup", against: str = "baseline",
                 transform: str = "log", cap: float = 10.0, percentiles: Sequence[float] = (50.0,),
                 distribution: str = "auto", timing: TimingSettings | None = None,
                 correct_reward: float = 1.0, speed_weight: float = 1.0, fail_reward: float = 0.0,
                 unscorable_reward: float | None = None, max_noise: float = 0.10, max_score_span: float = 0.05,
                 retries: int = 1, check_perf: bool = True, skip_identical: bool = True, seed: int = 0,
                 slow_bound: float | None = 1.0, futility: bool = True, **options: Any):
        """`timing`: how comparisons are made (`TimingSettings`; its fields -- metric, repeats,
        max_pairs, warmups, min_of, budget_s, alpha, min_effect -- also one by one as
        keywords, as a reward config gives them: `flat_options`)."""
        settings = with_fields(timing or TimingSettings(), options, TIMING_KEYS, "TimedReward")
        metric = settings.metric
        pct = _check_arguments(mode, against, transform, cap, percentiles, distribution, metric,
                               max_noise, max_score_span)
        if slow_bound is not None and not slow_bound > 0:
            raise ValueError("slow_bound must be > 0 (a factor of the baseline's time) or None")
        gym.utils.RecordConstructorArgs.__init__(
            self, mode=mode, against=against, transform=transform, cap=cap, percentiles=pct,
            distribution=distribution, metric=metric, correct_reward=correct_reward,
            speed_weight=speed_weight, fail_reward=fail_reward, unscorable_reward=unscorable_reward,
            max_noise=max_noise, max_score_span=max_score_span, retries=retries,
            **{k: getattr(settings, k) for k in TIMING_KEYS if k != "metric"},
            check_perf=check_perf, skip_identical=skip_identical, seed=seed, slow_bound=slow_bound,
            futility=futility)
        FinalReward.__init__(self, env, check_perf=check_perf)
        self.slow_bound = None if slow_bound is None else float(slow_bound)
        self.futility = bool(futility)
        self.mode, self.against, self.transform, self.cap = mode, against, transform, float(cap)
        self.percentiles = pct
        self.distribution = distribution
        self.correct_reward, self.speed_weight = float(correct_reward), float(speed_weight)
        self.fail_reward = float(fail_reward)
        self.unscorable_reward = None if unscorable_reward is None else float(unscorable_reward)
        self.max_noise, self.retries = float(max_noise), int(retries)
        self.max_score_span = float(max_score_span)
        self.settings = settings
        self.skip_identical = skip_identical
        self.seed = int(seed)
        self._episodes = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._episodes += 1  # each episode's comparisons get their own seed
        return self.env.reset(seed=seed, options=options)

    @classmethod
    def flat_options(cls) -> dict[str, tuple[Any, Any]]:
        """The `TimingSettings` fields a caller (or a reward config) may give one by one:
        name -> (type, default)."""
        return timing_options(TimingSettings())

    # ------------------------------------------------------------------ scoring

    def score_program(self, program: FinalProgram) -> tuple[float, dict]:
        """(reward, info["timing"]) of the judged program."""
        task = program.task
        metric = self.settings.metric_for(task)
        out: dict[str, Any] = {"mode": self.mode, "metric": metric, "scorable": True, "reason": "",
                               "correct": False, "score": 0.0, "comparisons": [], "elapsed_s": 0.0}
        if program.perf is not None:
            out["perf_verdict"] = program.perf.get("verdict")
        verdict = program.report.get("verdict")
        if verdict == "sandbox_error":
            out.update(scorable=False, reason=JUDGE_FAILED)
            # (never below what a program that failed earns: the fault is not the program's)
            return max(self.fail_reward, self.unscorable_reward if self.unscorable_reward is not None
                       else self.fail_reward), out
        if verdict != "accepted":
            out["reason"] = f"not correct ({verdict}): speed is not scored"
            return self.fail_reward, out
        out["correct"] = True
        try:
            score = self._speed(program, metric, out)
        except BoundReached as e:  # no faster than the baseline: the baseline's score, 0
            out.update(bound=e.details(), reason=str(e))
            return self.correct_reward, out
        except TimedRunFailed as e:  # answered wrongly (or crashed) when timed: not correct
            out.update(correct=False, verdict=e.status, reason=str(e))
            return self.fail_reward, out
        except Unscorable as e:
            out.update(scorable=False, reason=str(e))
            if self.unscorable_reward is not None:
                return self.unscorable_reward, out
            if e.lower_bound is not None:  # what the noise cannot take away
                out["score_lower_bound"] = e.lower_bound
                return self.correct_reward + self.speed_weight * e.lower_bound, out
            return self.correct_reward, out
        out["score"] = score
        return self.correct_reward + self.speed_weight * score, out

    def feedback(self, details: Mapping[str, Any]) -> str:
        """``Performance: 3.2x faster than the baseline (95% CI 2.9-3.5x); stage: ...``."""
        than = {"speedup": f"the {self.against}", "interpolate": "the slowest solution"}.get(self.mode, "")
        return timed_line(details, 1.0 - self.settings.alpha, than)

    def _compare(self, bench: Bench, comparand: PerfRuns, candidate: PerfRuns, against: str, metric: str,
                 out: dict, score_at: Callable[[float], float], bound: bool = False) -> ComparisonRecord:
        """One calibrated comparison, kept in ``out["comparisons"]``; with `bound`, an
        Unscorable carries the lower-bound score of its last comparison (modes whose score
        is that comparison's)."""
        try:
            rec = bench.compare(comparand, candidate, against=against, metric=metric, settings=self.settings,
                                max_noise=self.max_noise, retries=self.retries,
                                skip_identical=self.skip_identical, seed=self.seed + self._episodes,
                                score_at=score_at, max_score_span=self.max_score_span,
                                futile="speedup" if self.futility else "band")
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

    def _speed(self, program: FinalProgram, metric: str, out: dict) -> float:
        """The speed score S of the program by the wrapper's mode (raises `BoundReached`
        when its timed runs reach the slow bound, see `_bound`)."""
        bench = program.bench
        wl = bench.workload(program.files, program.language)
        bound = self._bound(bench, wl, metric, program.perf or program.report)
        cand = bounded_workload(wl, bound)
        try:
            return self._score_mode(bench, cand, metric, out)
        except TimedRunFailed as e:  # a capped run stopped by the bound is not a failure
            stopped = bound_failure(bound, wl, cand, e)
            if stopped is None:
                raise
            raise stopped from e

    def _score_mode(self, bench: Bench, cand: PerfRuns, metric: str, out: dict) -> float:
        task = bench.task
        if self.mode == "speedup":
            return self._speedup(bench, cand, metric, out)
        dist = bench.distribution(self.settings, self.distribution)
        ranked = dist.sorted()
        out["distribution"] = {"values": dict(ranked), "unit": dist.unit, "source": dist.source}
        if len(ranked) < 2:
            raise Unscorable(f"the runtime distribution of {task.id} has {len(ranked)} entr"
                             f"{'y' if len(ranked) == 1 else 'ies'}; it needs at least 2")
        if self.mode == "interpolate":
            return self._interpolate(bench, cand, ranked, metric, out)
        return self._percentile(bench, cand, ranked, dist.unit, metric, out)

    def _bound(self, bench: Bench, cand: PerfRuns, metric: str, perf_report) -> SlowBound | None:
        """The slow bound of the candidate, after the looks that stop it when it is no faster
        than the baseline, or when its first passes rule out a speedup worth rewarding (its
        score is then 0; `codegym.wrappers.baseline.look_at`: the baseline kept per task).
        None without `slow_bound` (the looks still stop a near-tie with `futility`), in
        ``interpolate`` mode (a solution slower than the baseline may score there), and for
        the baseline's own program (compared as identical, without runs)."""
        if (self.slow_bound is None and not self.futility) or self.mode == "interpolate":
            return None
        try:
            if self.skip_identical and bench.solution_workload(bench.task.baseline_name).key == cand.key:
                return None
        except (Unscorable, KeyError, ValueError):  # no baseline program: the modes say why
            return None
        looks = bench.look(cand, self.settings, self.slow_bound, perf_report, self.futility)
        if looks is not None:
            return looks.bound if looks.bound.seconds is not None else None
        if self.slow_bound is None:
            return None
        bound = bench.bound(self.settings, self.slow_bound)
        if bound is not None:
            bench.probe(cand, bound, metric, perf_report)
        return bound

    def _speedup(self, bench: Bench, cand: PerfRuns, metric: str, out: dict) -> float:
        task = bench.task
        name = task.baseline_name if self.against == "baseline" else task.reference_name
        if name is None:
            raise Unscorable(f"task {task.id} has no {self.against} solution")
        rec = self._compare(bench, bench.solution_workload(name), cand, name, metric, out,
                            lambda x: speed_score(x, self.cap, self.transform), bound=True)
        out["speedup"] = rec.speedup
        out["against"] = name
        return speed_score(counted_speedup(rec), self.cap, self.transform)

    def _interpolate(self, bench: Bench, cand: PerfRuns, ranked: list[tuple[str, float]], metric: str,
                     out: dict) -> float:
        task = bench.task
        (fast, t_fast), (slow, t_slow) = ranked[0], ranked[-1]
        if not t_slow > t_fast:
            raise Unscorable("the slowest and fastest solutions have the same runtime")
        if slow not in task.solutions and slow != STARTER:
            raise Unscorable(f"the slowest entry {slow!r} of the distribution has no code to compare with")
        r = t_fast / t_slow
        rec = self._compare(bench, bench.solution_workload(slow), cand, slow, metric, out,
                            lambda x: interpolation_score(x, r), bound=True)
        s = counted_speedup(rec)
        out.update(slowest=slow, fastest=fast, speedup=rec.speedup, position=interpolation_position(s, r))
        return interpolation_score(s, r)

    def _percentile(self, bench: Bench, cand: PerfRuns, ranked: list[tuple[str, float]], unit: str,
                    metric: str, out: dict) -> float:
        task = bench.task
        n = len(ranked)
        won: dict[str, bool] = {}
        events = []
        for p in self.percentiles:
            k = percentile_rank(p, n)
            pivot, threshold = ranked[k - 1]
            if pivot not in won:
                if pivot in task.solutions or pivot == STARTER:
                    rec = self._compare(bench, bench.solution_workload(pivot), cand, pivot, metric, out, beat_score)
                    won[pivot] = significantly_faster(rec)
                else:
                    won[pivot] = self._beats_threshold(bench, cand, threshold, unit, metric, out)
            events.append({"percentile": p, "rank": k, "pivot": pivot, "threshold": threshold,
                           "beats": won[pivot]})
        out["percentiles"] = events
        return sum(e["beats"] for e in events) / len(events)  # type: ignore[misc]

    def _beats_threshold(self, bench: Bench, cand: PerfRuns, threshold: float, unit: str, metric: str,
                         out: dict) -> bool:
        """The candidate's calibrated median is below `threshold` (a recorded value without
        code): its CI's upper end, in the distribution's unit, must lie below it."""
        for _ in range(1 + self.retries):
            m = bench.measure(cand, self.settings, metric)
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


def _check_arguments(mode: str, against: str, transform: str, cap: float, percentiles: Any,
                     distribution: str, metric: str | None, max_noise: float,
                     max_score_span: float) -> tuple[float, ...]:
    """Refuse values the wrapper cannot use; returns the percentiles as a tuple of floats."""
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
    return tuple(pct)


