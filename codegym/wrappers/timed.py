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
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym

from codegym.core.groups import GroupField, as_group, grouped
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
    group_options,
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


@dataclass(frozen=True)
class TimedValues:
    """What `TimedReward` pays (docs/rewards.md, "TimedReward").

    correct_reward      a correct program whose speed score S is 0
    speed_weight        added times S in [0, 1]
    fail_reward         a program that is not correct
    unscorable_reward   a correct program whose speed cannot be scored (None: what the noise
                        cannot take away, ``correct_reward + speed_weight * S_lo``)
    """

    correct_reward: float = 1.0
    speed_weight: float = 1.0
    fail_reward: float = 0.0
    unscorable_reward: float | None = None

    def __post_init__(self) -> None:
        _set(self, correct_reward=float(self.correct_reward), speed_weight=float(self.speed_weight),
             fail_reward=float(self.fail_reward),
             unscorable_reward=None if self.unscorable_reward is None else float(self.unscorable_reward))


@dataclass(frozen=True)
class SpeedScoring:
    """How `TimedReward` turns measured speed into its score S, and when it trusts a measurement.

    transform, cap          mode ``speedup``: S = min(1, ln s / ln cap) (``log``) or
                            min(1, (s - 1) / (cap - 1)) (``ratio``)
    percentiles             mode ``percentile``: the percentiles of the distribution to beat
    distribution            where that distribution comes from: auto | recorded | measured
    max_noise, max_score_span, retries
                            a comparison too noisy where it matters is made again `retries`
                            times, then the speed is unscorable
    skip_identical          a candidate whose build is the comparand's is not measured (speedup 1)
    seed                    seed of the first episode's comparisons (plus the number of resets)
    slow_bound, futility    a candidate no faster than the baseline is stopped (score 0):
                            at `slow_bound` times the baseline's time (None: no bound), or
                            once its first passes rule out a speedup worth rewarding
    """

    transform: str = "log"
    cap: float = 10.0
    percentiles: Sequence[float] = (50.0,)
    distribution: str = "auto"
    max_noise: float = 0.10
    max_score_span: float = 0.05
    retries: int = 1
    skip_identical: bool = True
    seed: int = 0
    slow_bound: float | None = 1.0
    futility: bool = True

    def __post_init__(self) -> None:
        if self.transform not in TRANSFORMS:
            raise ValueError(f"transform must be one of {TRANSFORMS}, not {self.transform!r}")
        if not self.cap > 1.0:
            raise ValueError("cap must be > 1 (the speedup that earns the full speed score)")
        pct = self.percentiles
        pct = tuple(float(p) for p in ([pct] if isinstance(pct, (int, float)) else pct))
        if not pct or any(not 0.0 < p <= 100.0 for p in pct):
            raise ValueError("percentiles must be numbers in (0, 100]")
        if self.distribution not in DISTRIBUTION_SOURCES:
            raise ValueError(f"distribution must be one of {DISTRIBUTION_SOURCES}")
        if self.max_noise <= 0 or self.max_score_span < 0:
            raise ValueError("max_noise must be > 0 and max_score_span >= 0")
        if self.slow_bound is not None and not self.slow_bound > 0:
            raise ValueError("slow_bound must be > 0 (a factor of the baseline's time) or None")
        _set(self, cap=float(self.cap), percentiles=pct, max_noise=float(self.max_noise),
             max_score_span=float(self.max_score_span), retries=int(self.retries), seed=int(self.seed),
             slow_bound=None if self.slow_bound is None else float(self.slow_bound),
             futility=bool(self.futility))


def _set(group: Any, **values: Any) -> None:
    """Normalised field values of a frozen settings group (in its ``__post_init__``)."""
    for name, value in values.items():
        object.__setattr__(group, name, value)


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
    # the groups' fields read (and set) as attributes too, as before they were grouped
    correct_reward = GroupField("values")
    speed_weight = GroupField("values")
    fail_reward = GroupField("values")
    unscorable_reward = GroupField("values")
    transform = GroupField("scoring")
    cap = GroupField("scoring")
    percentiles = GroupField("scoring")
    distribution = GroupField("scoring")
    max_noise = GroupField("scoring")
    max_score_span = GroupField("scoring")
    retries = GroupField("scoring")
    skip_identical = GroupField("scoring")
    seed = GroupField("scoring")
    slow_bound = GroupField("scoring")
    futility = GroupField("scoring")

    def __init__(self, env: gym.Env, mode: str = "speedup", against: str = "baseline",
                 values: TimedValues | None = None, scoring: SpeedScoring | None = None,
                 timing: TimingSettings | None = None, check_perf: bool = True, **options: Any):
        """`values`: what it pays (`TimedValues`); `scoring`: how speed becomes a score and
        when a measurement is trusted (`SpeedScoring`); `timing`: how comparisons are made
        (`TimingSettings`). Every field of the three is also taken one by one as a keyword
        (``TimedReward(env, cap=5.0, repeats=4)``, as a reward config gives them:
        `flat_options`); a field given so overrides the group's."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if against not in AGAINST:
            raise ValueError(f"against must be one of {AGAINST}, not {against!r}")
        who = "TimedReward"
        groups = grouped(who, options, also=("mode", "against", "values", "scoring", "timing", "check_perf"),
                         values=as_group(values, TimedValues(), who, "values"),
                         scoring=as_group(scoring, SpeedScoring(), who, "scoring"),
                         timing=as_group(timing, TimingSettings(), who, "timing"))
        values, scoring, settings = groups["values"], groups["scoring"], groups["timing"]
        if settings.metric is not None and settings.metric not in ("cpu", "wall", "instructions"):
            raise ValueError("metric must be cpu, wall, instructions or None (the task's)")
        gym.utils.RecordConstructorArgs.__init__(  # flat, as a config gives them: a spec rebuilds it
            self, mode=mode, against=against, **asdict(values), **asdict(scoring),
            **{k: getattr(settings, k) for k in TIMING_KEYS}, check_perf=check_perf)
        FinalReward.__init__(self, env, check_perf=check_perf)
        self.mode, self.against = mode, against
        self.values, self.scoring, self.settings = values, scoring, settings
        self._episodes = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._episodes += 1  # each episode's comparisons get their own seed
        return self.env.reset(seed=seed, options=options)

    @classmethod
    def flat_options(cls) -> dict[str, tuple[Any, Any]]:
        """The grouped settings' fields (`TimedValues`, `SpeedScoring`, `TimingSettings`) a
        caller (or a reward config) may give one by one: name -> (type, default)."""
        return {**group_options(TimedValues()), **group_options(SpeedScoring()),
                **timing_options(TimingSettings())}

    # ------------------------------------------------------------------ scoring

    def score_program(self, program: FinalProgram) -> tuple[float, dict]:
        """(reward, info["timing"]) of the judged program."""
        task = program.task
        metric = self.settings.metric_for(task)
        out: dict[str, Any] = {"mode": self.mode, "metric": metric, "scorable": True, "reason": "",
                               "correct": False, "score": 0.0, "comparisons": [], "elapsed_s": 0.0}
        if program.perf is not None:
            out["perf_verdict"] = program.perf.get("verdict")
        verdict, v = program.report.get("verdict"), self.values
        if verdict == "sandbox_error":
            out.update(scorable=False, reason=JUDGE_FAILED)
            # (never below what a program that failed earns: the fault is not the program's)
            return max(v.fail_reward, v.fail_reward if v.unscorable_reward is None else v.unscorable_reward), out
        if verdict != "accepted":
            out["reason"] = f"not correct ({verdict}): speed is not scored"
            return v.fail_reward, out
        out["correct"] = True
        try:
            score = self._speed(program, metric, out)
        except BoundReached as e:  # no faster than the baseline: the baseline's score, 0
            out.update(bound=e.details(), reason=str(e))
            return v.correct_reward, out
        except TimedRunFailed as e:  # answered wrongly (or crashed) when timed: not correct
            out.update(correct=False, verdict=e.status, reason=str(e))
            return v.fail_reward, out
        except Unscorable as e:
            out.update(scorable=False, reason=str(e))
            if v.unscorable_reward is not None:
                return v.unscorable_reward, out
            if e.lower_bound is not None:  # what the noise cannot take away
                out["score_lower_bound"] = e.lower_bound
                return v.correct_reward + v.speed_weight * e.lower_bound, out
            return v.correct_reward, out
        out["score"] = score
        return v.correct_reward + v.speed_weight * score, out

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
            sc = self.scoring
            rec = bench.compare(comparand, candidate, against=against, metric=metric, settings=self.settings,
                                max_noise=sc.max_noise, retries=sc.retries, skip_identical=sc.skip_identical,
                                seed=sc.seed + self._episodes, score_at=score_at,
                                max_score_span=sc.max_score_span, futile="speedup" if sc.futility else "band")
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
        dist = bench.distribution(self.settings, self.scoring.distribution)
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
        if (self.scoring.slow_bound is None and not self.scoring.futility) or self.mode == "interpolate":
            return None
        try:
            if self.scoring.skip_identical and bench.solution_workload(bench.task.baseline_name).key == cand.key:
                return None
        except (Unscorable, KeyError, ValueError):  # no baseline program: the modes say why
            return None
        looks = bench.look(cand, self.settings, self.scoring.slow_bound, perf_report, self.scoring.futility)
        if looks is not None:
            return looks.bound if looks.bound.seconds is not None else None
        if self.scoring.slow_bound is None:
            return None
        bound = bench.bound(self.settings, self.scoring.slow_bound)
        if bound is not None:
            bench.probe(cand, bound, metric, perf_report)
        return bound

    def _speedup(self, bench: Bench, cand: PerfRuns, metric: str, out: dict) -> float:
        task = bench.task
        name = task.baseline_name if self.against == "baseline" else task.reference_name
        if name is None:
            raise Unscorable(f"task {task.id} has no {self.against} solution")
        rec = self._compare(bench, bench.solution_workload(name), cand, name, metric, out,
                            lambda x: speed_score(x, self.scoring.cap, self.scoring.transform), bound=True)
        out["speedup"] = rec.speedup
        out["against"] = name
        return speed_score(counted_speedup(rec), self.scoring.cap, self.scoring.transform)

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
        for p in self.scoring.percentiles:
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
        return sum(1 for e in events if e["beats"]) / len(events)

    def _beats_threshold(self, bench: Bench, cand: PerfRuns, threshold: float, unit: str, metric: str,
                         out: dict) -> bool:
        """The candidate's calibrated median is below `threshold` (a recorded value without
        code): its CI's upper end, in the distribution's unit, must lie below it."""
        for _ in range(1 + self.scoring.retries):
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
            if noise <= self.scoring.max_noise:
                return hi < threshold
        raise Unscorable(f"too noisy: the candidate's median is known to +-{noise:.1%} only")

