"""Rewards of recorded episodes under a reward stack, for the offline simulator.

`Prepared` holds one candidate stack's arguments (each wrapper's own signature and
defaults) and, per recording, what its shaping and penalty wrappers add: those
wrappers are replayed as they are over the recorded steps (`ReplayEnv`). The final
program's score comes from the wrappers' scoring functions on the recorded times:
`staged_score` (`staged_reward` itself) and `timed_score` (`TimedReward`'s modes with
`codegym.wrappers.scoring`; a comparison's interval is the two measurements'
intervals combined on the log scale). docs/simulate.md lists what is approximated.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from codegym.edits.parse import apply_changes, parse_action
from codegym.evaluation.recordings import Interval, MetricTimes, Recording
from codegym.sandbox.types import Sandbox
from codegym.tasks.runtimes import percentile_rank
from codegym.tasks.schema import Task
from codegym.wrappers.base import failed_report
from codegym.wrappers.config import GROUPED, RewardSpec
from codegym.wrappers.measure import ComparisonRecord
from codegym.wrappers.scoring import (
    beat_score,
    counted_speedup,
    interpolation_score,
    lower_bound_score,
    significantly_faster,
    speed_score,
)
from codegym.wrappers.staged import PerfTimes, StageValues, staged_reward

#: wrappers that score the final program (their score replaces the step's reward)
FINAL_TYPES = ("staged", "timed")


class ShapingNeedsTasks(ValueError):
    """`progress_shaping` judges recorded states: it needs the tasks and a sandbox."""


def _arguments(spec: RewardSpec) -> dict[str, Any]:
    """Every constructor argument of the spec's wrapper, its defaults filled in (the
    wrapper's own signature: the simulator has no defaults of its own)."""
    sig = inspect.signature(spec.cls.__init__)
    bound = sig.bind_partial(None, None, **spec.kwargs)
    bound.apply_defaults()
    args = dict(bound.arguments)
    args.pop("self", None)
    args.pop("env", None)
    # grouped settings (StageValues, TimedValues, SpeedScoring, TimingSettings) read field by
    # field, as the wrapper does: a group given whole, then the defaults of the fields a config
    # may give one by one, then the ones it gave (`flat_options`)
    options = args.pop("options", None) or {}
    for name in GROUPED:
        group = args.pop(name, None)
        if dataclasses.is_dataclass(group) and not isinstance(group, type):
            args.update({f.name: getattr(group, f.name) for f in dataclasses.fields(group)})
    flat = getattr(spec.cls, "flat_options", None)
    for k, (_, default) in (flat() if flat is not None else {}).items():
        args.setdefault(k, default)
    args.update(options)
    return args


def _comparison(mt: MetricTimes, cand: Interval, name: str, min_effect: float | None,
                score_at) -> ComparisonRecord:
    """The comparison of the candidate with solution `name` as the timing module would
    report it: speedup t(name)/t(candidate), its interval from both intervals (log scale)."""
    if mt.identical_to == name:
        return ComparisonRecord(against=name, speedup=1.0, ci=(1.0, 1.0), identical=True, decided=True)
    other = mt.solutions[name]
    s = other.value / cand.value
    h = math.hypot(other.log_sigma, cand.log_sigma) * 1.959964
    lo, hi = s * math.exp(-h), s * math.exp(h)
    floor = 1.0 + (min_effect or 0.0)
    rec = ComparisonRecord(against=name, speedup=s, ci=(lo, hi), significant=lo > floor or hi < 1.0 / floor,
                           noise=h, decided=True)
    rec.score_span = abs(score_at(hi) - score_at(lo)) if score_at is not None else math.inf
    return rec


class _Unscorable(Exception):
    def __init__(self, lower: float | None = None):
        super().__init__("unscorable")
        self.lower = lower


def _checked(rec: ComparisonRecord, kw: Mapping[str, Any], score_at, bound: bool) -> ComparisonRecord:
    """`rec`, or `_Unscorable` when it is too noisy to decide (the wrapper's rule)."""
    if rec.noise > kw["max_noise"] and rec.score_span > kw["max_score_span"]:
        raise _Unscorable(lower_bound_score(rec, score_at) if bound else None)
    return rec


def _timed_speed(mt: MetricTimes, kw: Mapping[str, Any]) -> float:
    """The speed score S of `TimedReward`'s mode on the recorded times."""
    cand = mt.candidate
    if cand is None or not mt.solutions:
        raise _Unscorable()
    mode, me = kw["mode"], kw["min_effect"]
    if mode == "speedup":
        name = mt.baseline if kw["against"] == "baseline" else mt.reference
        if name not in mt.solutions:
            raise _Unscorable()
        def score_at(x: float) -> float:
            return speed_score(x, kw["cap"], kw["transform"])
        rec = _checked(_comparison(mt, cand, name, me, score_at), kw, score_at, True)
        return score_at(counted_speedup(rec))
    ranked = sorted(mt.solutions.items(), key=lambda kv: (kv[1].value, kv[0]))
    if len(ranked) < 2:
        raise _Unscorable()
    if mode == "interpolate":
        (_, fast), (slow, slow_t) = ranked[0], ranked[-1]
        if not slow_t.value > fast.value:
            raise _Unscorable()
        r = fast.value / slow_t.value

        def position(x: float) -> float:
            return interpolation_score(x, r)
        rec = _checked(_comparison(mt, cand, slow, me, position), kw, position, True)
        return position(counted_speedup(rec))
    beats = []
    for p in kw["percentiles"]:
        pivot = ranked[percentile_rank(float(p), len(ranked)) - 1][0]
        rec = _checked(_comparison(mt, cand, pivot, me, beat_score), kw, beat_score, False)
        beats.append(significantly_faster(rec))
    return sum(beats) / len(beats)


def timed_score(rec: Recording, kw: Mapping[str, Any], mt: MetricTimes | None) -> float:
    """`TimedReward`'s reward of a recorded final program (arguments `kw`, times `mt`)."""
    verdict = rec.report.get("verdict")
    unscorable = kw["unscorable_reward"]
    if verdict == "sandbox_error":
        return kw["fail_reward"] if unscorable is None else unscorable
    if verdict != "accepted" or (mt is not None and mt.perf_failed):
        return kw["fail_reward"]
    try:
        if mt is None:
            raise _Unscorable()
        s = _timed_speed(mt, kw)
    except _Unscorable as e:
        if unscorable is not None:
            return unscorable
        return kw["correct_reward"] + kw["speed_weight"] * (e.lower or 0.0)
    return kw["correct_reward"] + kw["speed_weight"] * s


def staged_score(rec: Recording, kw: Mapping[str, Any], mt: MetricTimes | None) -> float:
    """`StagedReward`'s reward of a recorded final program (`staged_reward` itself)."""
    values = StageValues(**{k: kw[k] for k in inspect.signature(StageValues).parameters})
    report, times = rec.report, None
    if report.get("verdict") == "accepted" and kw["timed"] and mt is not None:
        if mt.perf_failed:
            total = int(report.get("total") or 0)
            passed = max(0, min(int(report.get("passed") or 0), total) - 1)
            report = failed_report(report, mt.perf_failed[0], mt.perf_failed[1], passed=passed)
        elif mt.candidate is not None and mt.baseline in mt.solutions and mt.reference in mt.solutions:
            cand, b, r = mt.candidate, mt.solutions[mt.baseline], mt.solutions[mt.reference]
            if mt.identical_to in (mt.baseline, mt.reference):
                cand = b if mt.identical_to == mt.baseline else r
            times = PerfTimes(t=cand.value, t_baseline=b.value, t_reference=r.value, unit=mt.unit,
                              source="recorded", noise=cand.rel, noise_baseline=b.rel, noise_reference=r.rel)
    return staged_reward(report, times, values, kw["noise_gate"])[0]


_SCORERS = {"staged": staged_score, "timed": timed_score}


# --------------------------------------------------------------------------- shaping replay


class ReplayEnv(gym.Env):
    """Plays a recording's steps back: the shaping wrappers see the recorded infos, and a
    workspace whose files are the recorded actions replayed on the starter (for
    `ProgressShaping`, which judges the public tests of a state it has no report of)."""

    metadata: dict = {"render_modes": []}

    def __init__(self, rec: Recording, task: Task | None = None, sandbox: Sandbox | None = None):
        self.rec, self.task, self.sandbox, self.t = rec, task, sandbox, 0
        self.protected: tuple = ()  # DiffSizePenalty: edits to protected paths were refused when recorded
        self.language = rec.language or (task.language if task is not None else None)
        self.workspace = _Files({})

    def reset(self, *, seed=None, options=None):
        self.t = 0
        self.workspace = _Files(dict(self.task.starter_files()) if self.task is not None else {})
        return "", {"submitted": False}

    def step(self, action):
        s = self.rec.steps[self.t]
        self.t += 1
        if self.task is not None and s.get("action"):
            main = self.task.main_file_for(self.language) or ""
            parsed = parse_action(s["action"], self.workspace.files, main)
            if parsed.error is None and parsed.changes:
                self.workspace = _Files(apply_changes(self.workspace.files, parsed.changes))
        last = self.t >= len(self.rec.steps)
        info = {"diff": s.get("diff") or "", "error": s.get("error"), "judge": s.get("judge"),
                "submitted": bool(s.get("submitted"))}
        return "", 0.0, last and info["submitted"], last and not info["submitted"], info


@dataclass
class _Files:
    files: dict


def shaping_offset(rec: Recording, specs: Sequence[RewardSpec], task: Task | None = None,
                   sandbox: Sandbox | None = None) -> float:
    """What the shaping and penalty wrappers add to the episode's return (their terms do not
    depend on the reward they add to): the real wrappers replayed over the steps, with the
    final wrappers' score replacing the final step's reward at their place in the stack."""
    env: gym.Env = ReplayEnv(rec, task, sandbox)
    shaping = False
    for spec in specs:
        if spec.type in FINAL_TYPES:
            env = _ZeroFinal(env)
        elif spec.type != "diff_credit":
            if spec.type == "progress_shaping" and task is None:
                raise ShapingNeedsTasks(f"{rec.key}: progress_shaping judges the public tests of the recorded "
                                        "states: give the tasks (--suite)")
            env, shaping = spec.apply(env), True
    if not shaping:
        return 0.0
    env.reset()
    total = 0.0
    for _ in rec.steps:
        total += env.step("")[1]
    return total


class _ZeroFinal(gym.Wrapper):
    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        return obs, (0.0 if info.get("submitted") else r), term, trunc, info


def _base_reward(rec: Recording, base: str) -> float:
    rep = rec.report
    if not rep.get("verdict"):
        return 0.0
    if base == "binary":
        return 1.0 if rep.get("verdict") == "accepted" else 0.0
    total = int(rep.get("total") or 0)
    return int(rep.get("passed") or 0) / total if total else 0.0


class Prepared:
    """One reward stack's arguments per wrapper and the shaping offset per recording;
    `final(rec, times)` is the final step's reward (`base`: the env's reward without a
    final wrapper, ``pass_fraction`` or ``binary``)."""

    def __init__(self, specs: Sequence[RewardSpec], base: str, recs: Sequence[Recording],
                 tasks: Mapping[str, Any] | None = None, sandbox: Sandbox | None = None):
        self.base = base
        self.finals = [(s.type, _arguments(s)) for s in specs if s.type in FINAL_TYPES]
        tasks = tasks or {}
        self.offsets = [shaping_offset(r, specs, tasks.get(r.task_id), sandbox) for r in recs]

    def final(self, rec: Recording, times: Mapping[str, MetricTimes] | None = None) -> float:
        if not self.finals or not rec.submitted:
            return _base_reward(rec, self.base)
        kind, kw = self.finals[-1]  # the outermost final wrapper's score is the step's reward
        timings = rec.timings if times is None else times
        mt = timings.get(kw.get("metric") or rec.default_metric or "")
        return _SCORERS[kind](rec, kw, mt)


    def untimed(self, recs: Sequence[Recording]) -> int:
        """Correct recordings the final wrapper would time but that have no times in its metric."""
        if not self.finals or (self.finals[-1][0] == "staged" and not self.finals[-1][1]["timed"]):
            return 0
        metric = self.finals[-1][1].get("metric")
        return sum(1 for r in recs if r.correct and ((mt := r.timings.get(metric or r.default_metric or "")) is None
                                                     or mt.candidate is None))


def check_spec(spec: RewardSpec) -> None:
    """Raise the ValueError the wrapper's constructor raises for these arguments."""
    spec.apply(ReplayEnv(Recording("", "", "", "", {})))
