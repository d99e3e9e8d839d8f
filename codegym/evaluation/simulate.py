"""The offline reward simulator (DMC-Optim's second stage): which reward configuration
gives a useful learning signal, predicted from recorded episodes before a training run.

`load_candidates(path)` reads a YAML list of candidate reward stacks (each validated by
the wrappers' own schema, `codegym.wrappers.config`); `episode_return` recomputes an
episode's return under one stack -- the staged and timed rewards with the wrappers'
scoring functions (`staged_reward`, `codegym.wrappers.scoring`) on the recorded times,
the shaping and penalty wrappers replayed as they are over the recorded steps;
`simulate` forms the GRPO groups and reports, per configuration, the share of groups
with a non-zero advantage, the rank correlation of reward with speedup among correct
programs, ordering violations, the expected reward flips from measurement noise, and a
ranking. docs/simulate.md has the formulas and the YAML form.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codegym.core.yamldoc import Doc, DocError, DocValidationError, format_path, pydantic_message
from codegym.evaluation.recordings import Interval, MetricTimes, Recording
from codegym.evaluation.simrewards import Prepared, check_spec
from codegym.rollout.advantages import grpo
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task
from codegym.wrappers.config import RewardConfigError, RewardSpec, parse_reward_config

_TIE = 1e-9


class SimulationError(DocValidationError):
    """Problems of a candidates file, one ``file:line: path: message`` each."""


class _Weights(BaseModel):
    model_config = ConfigDict(extra="forbid")
    signal: float = 1.0
    correlation: float = 1.0
    violations: float = 4.0
    flips: float = 1.0


class SimSettings(BaseModel):
    """The ``simulation:`` block: noise draws, their seed, groups, ranking weights."""

    model_config = ConfigDict(extra="forbid")
    draws: int = Field(200, ge=1)
    seed: int = 0
    faster_margin: float = Field(0.02, ge=0)
    max_violation_rate: float = Field(0.05, ge=0, le=1)
    weights: _Weights = Field(default_factory=_Weights)


@dataclass
class Candidate:
    """One candidate: a name, a reward stack (first entry innermost) and the base reward."""

    name: str
    specs: list[RewardSpec]
    base: str = "pass_fraction"


class _CandidateModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    reward: list[Any] = Field(default_factory=list)
    base: str = Field("pass_fraction", pattern="^(pass_fraction|binary)$")


def parse_candidates(data: Any, source: str = "<candidates>", line_of=None) -> tuple[list[Candidate], SimSettings]:
    """Candidates and settings from YAML data: ``{configurations: [...], simulation: {...}}``
    or a bare list of ``{name, reward, base}``; every problem at its line."""
    line_of = line_of or (lambda loc: 1)
    errors: list[DocError] = []

    def err(loc: tuple, msg: str) -> None:
        errors.append(DocError(source, line_of(loc), format_path(loc), msg))

    prefix: tuple = ()
    settings = SimSettings()
    if isinstance(data, Mapping):
        extra = set(data) - {"configurations", "simulation"}
        for k in sorted(extra):
            err((k,), "unknown key (expected `configurations` and `simulation`)")
        try:
            settings = SimSettings.model_validate(data.get("simulation") or {})
        except ValidationError as exc:
            for e in exc.errors(include_url=False):
                err(("simulation", *e["loc"]), pydantic_message(e, SimSettings))
        data, prefix = data.get("configurations"), ("configurations",)
    if not isinstance(data, list) or not data:
        err(prefix, "expected a non-empty list of configurations ({name: ..., reward: [...]})")
        raise SimulationError(errors)
    out: list[Candidate] = []
    for i, entry in enumerate(data):
        try:
            m = _CandidateModel.model_validate(entry)
        except ValidationError as exc:
            for e in exc.errors(include_url=False):
                err((*prefix, i, *e["loc"]), pydantic_message(e, _CandidateModel))
            continue
        try:
            specs = parse_reward_config(m.reward, source, line_of, (*prefix, i, "reward"))
        except RewardConfigError as e:
            errors.extend(e.errors)
            continue
        for j, spec in enumerate(specs):
            try:  # the wrapper's own checks of its arguments (values parse_reward_config lets through)
                check_spec(spec)
            except (ValueError, TypeError) as e:
                err((*prefix, i, "reward", j), str(e))
        if m.name in {c.name for c in out}:
            err((*prefix, i, "name"), f"duplicate configuration name {m.name!r}")
        out.append(Candidate(m.name, specs, m.base))
    if errors:
        raise SimulationError(errors)
    return out, settings


def load_candidates(path: str | Path) -> tuple[list[Candidate], SimSettings]:
    """Read a candidates YAML file (see `parse_candidates`)."""
    doc = Doc(Path(path))
    if not doc.load() or doc.errors:
        raise SimulationError(doc.errors)
    return parse_candidates(doc.data, doc.display, doc.line_of)


def episode_return(rec: Recording, cand: Candidate, task: Task | None = None, sandbox: Sandbox | None = None) -> float:
    """The episode's return under `cand` (final score plus shaping terms)."""
    p = Prepared(cand.specs, cand.base, [rec], {rec.task_id: task} if task is not None else None, sandbox)
    return p.final(rec) + p.offsets[0]


# --------------------------------------------------------------------------- metrics


@dataclass
class ConfigResult:
    """What `simulate` reports for one candidate."""

    name: str
    rewards: list[float]
    nonzero_share: float
    speed_signal_share: float
    rank_correlation: float | None
    violations: int
    violation_pairs: int
    violation_rate: float
    expected_flips: float
    flip_pairs: int
    flip_rate: float
    score: float = 0.0
    sound: bool = True
    rank: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("name", "rank", "sound", "score", "nonzero_share", "speed_signal_share",
                                            "rank_correlation", "violations", "violation_pairs",
                                            "violation_rate", "expected_flips", "flip_pairs", "flip_rate")}
        d["details"] = self.details
        return d


def _ranks(x: Sequence[float]) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a))
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and a[order[j + 1]] == a[order[i]]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (average ranks for ties); None when undefined."""
    if len(x) < 2:
        return None
    rx, ry = _ranks(x), _ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def _groups(recs: Sequence[Recording]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, r in enumerate(recs):
        out.setdefault(r.group, []).append(i)
    return out


def _faster(a: Recording, b: Recording, margin: float) -> bool:
    """a is a faster correct program than b, for sure: both speedups known and apart by
    `margin`, or their measured intervals do not overlap."""
    sa, sb = a.speedup(), b.speedup()
    if sa is None or sb is None:
        return False
    if a.true_speedup is not None and b.true_speedup is not None:
        return sa > sb * (1 + margin)
    ta, tb = a.times(), b.times()
    if ta is None or tb is None or ta.candidate is None or tb.candidate is None:
        return False
    return ta.candidate.hi < tb.candidate.lo and sa > sb * (1 + margin)


def _violations(recs: Sequence[Recording], rewards: Sequence[float], groups, margin: float) -> tuple[int, int, dict]:
    bad = pairs = slow_above = wrong_above = 0
    for members in groups.values():
        for i in members:
            for j in members:
                if i >= j:
                    continue
                a, b = recs[i], recs[j]
                if a.correct and b.correct:
                    for x, y in ((i, j), (j, i)):
                        if _faster(recs[x], recs[y], margin):
                            pairs += 1
                            if rewards[x] < rewards[y] - _TIE:
                                bad += 1
                                slow_above += 1
                elif a.correct != b.correct:
                    pairs += 1
                    c, w = (i, j) if a.correct else (j, i)
                    if rewards[w] > rewards[c] + _TIE:
                        bad += 1
                        wrong_above += 1
    return bad, pairs, {"slower_above_faster": slow_above, "wrong_above_correct": wrong_above}


def _perturbed(recs: Sequence[Recording], rng: random.Random) -> list[dict[str, MetricTimes]]:
    """Every recording's timings redrawn within their intervals (log-normal); a task's
    solutions get one draw shared by its recordings (the wrappers measure them once)."""
    shared: dict[tuple, float] = {}

    def move(iv: Interval, key: tuple | None) -> Interval:
        if key is None:
            z = rng.gauss(0.0, 1.0)
        else:
            z = shared.setdefault(key, rng.gauss(0.0, 1.0))
        return iv.scaled(math.exp(iv.log_sigma * z))

    out = []
    for r in recs:
        t: dict[str, MetricTimes] = {}
        for m, mt in r.timings.items():
            sols = {n: move(iv, (r.task_id, m, n)) for n, iv in mt.solutions.items()}
            cand = mt.candidate
            if cand is not None:
                cand = sols[mt.identical_to] if mt.identical_to in sols else move(cand, None)
            t[m] = MetricTimes(mt.unit, cand, sols, mt.baseline, mt.reference, mt.identical_to, mt.perf_failed)
        out.append(t)
    return out


def _flips(prep: Prepared, recs: Sequence[Recording], nominal: Sequence[float], groups,
           settings: SimSettings) -> tuple[float, int]:
    pairs = [(i, j) for m in groups.values() for i in m for j in m if i < j]
    if not pairs:
        return 0.0, 0
    base = np.sign(np.array([nominal[i] - nominal[j] for i, j in pairs]).round(9))
    rng = random.Random(settings.seed)
    flips = 0
    for _ in range(settings.draws):
        times = _perturbed(recs, rng)
        r = [prep.final(rec, times[k]) + prep.offsets[k] for k, rec in enumerate(recs)]
        now = np.sign(np.array([r[i] - r[j] for i, j in pairs]).round(9))
        flips += int(np.count_nonzero(now != base))
    return flips / settings.draws, len(pairs)


def _evaluate(cand: Candidate, recs: Sequence[Recording], settings: SimSettings, tasks,
              sandbox: Sandbox) -> ConfigResult:
    prep = Prepared(cand.specs, cand.base, recs, tasks, sandbox)
    rewards = [prep.final(r) + prep.offsets[i] for i, r in enumerate(recs)]
    groups = _groups(recs)
    adv = grpo(np.array(rewards), [r.group for r in recs])
    multi = [m for m in groups.values() if len(m) > 1]
    nonzero = sum(1 for m in multi if np.any(np.abs(adv[m]) > _TIE))
    speed_groups = [[i for i in m if recs[i].correct] for m in multi]
    speed_groups = [m for m in speed_groups if len(m) > 1]
    speed_signal = sum(1 for m in speed_groups if np.ptp([rewards[i] for i in m]) > _TIE)
    rhos, weights = [], []
    for m in groups.values():
        pts = [(recs[i].speedup(), rewards[i]) for i in m if recs[i].correct and recs[i].speedup() is not None]
        rho = spearman([p[0] for p in pts], [p[1] for p in pts]) if len(pts) >= 3 else None
        if rho is not None:
            rhos.append(rho)
            weights.append(len(pts))
    rho_all = float(np.average(rhos, weights=weights)) if rhos else None
    bad, vpairs, vdetail = _violations(recs, rewards, groups, settings.faster_margin)
    flips, fpairs = _flips(prep, recs, rewards, groups, settings)
    return ConfigResult(
        name=cand.name, rewards=rewards, nonzero_share=nonzero / len(multi) if multi else 0.0,
        speed_signal_share=speed_signal / len(speed_groups) if speed_groups else 0.0,
        rank_correlation=rho_all, violations=bad, violation_pairs=vpairs,
        violation_rate=bad / vpairs if vpairs else 0.0, expected_flips=flips, flip_pairs=fpairs,
        flip_rate=flips / fpairs if fpairs else 0.0,
        details={**vdetail, "groups": len(groups), "groups_with_2+": len(multi),
                 "correlation_groups": len(rhos), "mean_reward": float(np.mean(rewards)) if rewards else 0.0,
                 "correct_without_times": prep.untimed(recs)})


def simulate(recs: Sequence[Recording], candidates: Sequence[Candidate], settings: SimSettings | None = None,
             tasks: Mapping[str, Any] | None = None, sandbox: Sandbox | None = None) -> list[ConfigResult]:
    """Every candidate evaluated on the recordings, ranked best first (docs/simulate.md):
    sound configurations (no wrong program above a correct one, at most
    `max_violation_rate` of the faster/slower pairs inverted) before the others, each by
    ``score = w_signal * nonzero_share + w_correlation * rank_correlation
    - w_violations * violation_rate - w_flips * flip_rate``. `tasks` (id -> Task) and
    `sandbox` are needed only by ``progress_shaping`` (it judges recorded states)."""
    settings = settings or SimSettings()
    if not recs:
        raise ValueError("no recorded episodes to simulate on")
    w = settings.weights
    results = [_evaluate(c, recs, settings, tasks, sandbox) for c in candidates]
    for res in results:
        res.score = (w.signal * res.nonzero_share + w.correlation * (res.rank_correlation or 0.0)
                     - w.violations * res.violation_rate - w.flips * res.flip_rate)
        res.sound = res.details["wrong_above_correct"] == 0 and res.violation_rate <= settings.max_violation_rate
    results.sort(key=lambda r: (not r.sound, -r.score, r.name))
    for k, res in enumerate(results, 1):
        res.rank = k
    return results
