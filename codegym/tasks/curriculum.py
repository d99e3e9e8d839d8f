"""Curricula: choosing the next task from what training has seen so far.

Owns `CurriculumSampler`,
the utility-driven task sampler of ASTOR / DHRCL-style multi-task training, and its
per-task record `TaskStats`. `CodeEnv` uses it through two calls:

    sampler.sample(rng, tasks) -> Task      # at reset (rng: the env's numpy Generator)
    sampler.update(task_id, reward)         # when an episode ends (the env's reward)

A task's utility is its learning signal (p(1-p) of a decayed Beta pass rate, or the
reward variance) plus an exploration bonus; families (id prefixes) get budgets.
Everything is seeded and checkpointable (`state_dict` / `load_state_dict`). The
formulas: docs/tasks.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

SIGNALS = ("pass_rate", "variance")
STATE_VERSION = 1


def family_of(task_id: str) -> str:
    """The family of a task id: its suite prefix (``"perfcode/x"`` -> ``"perfcode"``)."""
    return task_id.split("/", 1)[0] if "/" in task_id else ""


@dataclass
class TaskStats:
    """Running statistics of one task, exponentially decayed (weights sum to `n`).

    n          effective number of episodes
    successes  effective number of successes (reward >= the success threshold)
    mean, m2   weighted mean of the reward and sum of weighted squared deviations
    episodes   episodes seen (not decayed)
    """

    n: float = 0.0
    successes: float = 0.0
    mean: float = 0.0
    m2: float = 0.0
    episodes: int = 0

    def update(self, reward: float, success: bool, decay: float) -> None:
        # West's weighted incremental mean/variance with old weights scaled by `decay`
        self.n *= decay
        self.successes *= decay
        self.m2 *= decay
        self.n += 1.0
        self.successes += 1.0 if success else 0.0
        delta = reward - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (reward - self.mean)
        self.episodes += 1

    @property
    def variance(self) -> float:
        return self.m2 / self.n if self.n > 0 else 0.0

    def to_dict(self) -> dict:
        return asdict(self)


class CurriculumSampler:
    """Utility-weighted task sampling with per-family budgets (see the module docstring).

    Args:
        signal: ``"pass_rate"`` (p(1-p) of the smoothed success rate) or ``"variance"``
            (variance of the rewards).
        success_threshold: a reward >= this is a success (1.0: only fully correct).
        prior: (a, b) of the Beta prior of the success rate.
        exploration: weight of the exploration bonus.
        temperature: > 0; lower concentrates on the highest utilities.
        min_utility: floor of a task's utility, so no task is starved forever.
        decay: in (0, 1]; each update first scales a task's past statistics by it
            (1: plain averages; < 1 follows the current policy).
        family_weights: None, "uniform", "utility" or {family: weight} (module docstring).
        seed: seeds the sampler's own generator (used when `sample` gets rng=None).

    Example:
        >>> from codegym import load_suite
        >>> from codegym.tasks.curriculum import CurriculumSampler
        >>> import numpy as np
        >>> tasks = list(load_suite("examples"))
        >>> s = CurriculumSampler(seed=0, family_weights="uniform")
        >>> t = s.sample(np.random.default_rng(0), tasks)
        >>> s.update(t.id, 1.0)
        >>> s.stats[t.id].episodes
        1
        >>> s2 = CurriculumSampler(); s2.load_state_dict(s.state_dict())
        >>> s2.state_dict() == s.state_dict()
        True
    """

    def __init__(self, signal: str = "pass_rate", success_threshold: float = 1.0,
                 prior: tuple[float, float] = (1.0, 1.0), exploration: float = 0.5,
                 temperature: float = 1.0, min_utility: float = 0.01, decay: float = 0.9,
                 family_weights: str | Mapping[str, float] | None = None, seed: int = 0):
        if signal not in SIGNALS:
            raise ValueError(f"signal must be one of {SIGNALS}, not {signal!r}")
        if not (len(prior) == 2 and prior[0] > 0 and prior[1] > 0):
            raise ValueError("prior must be two positive numbers (a, b)")
        if temperature <= 0:
            raise ValueError("temperature must be > 0")
        if not 0.0 < decay <= 1.0:
            raise ValueError("decay must be in (0, 1]")
        if min_utility <= 0:
            raise ValueError("min_utility must be > 0")
        if isinstance(family_weights, str) and family_weights not in ("uniform", "utility"):
            raise ValueError("family_weights must be None, 'uniform', 'utility' or a mapping")
        if isinstance(family_weights, Mapping):
            if any(float(w) < 0 for w in family_weights.values()):
                raise ValueError("family weights must be >= 0")
            family_weights = {str(k): float(v) for k, v in family_weights.items()}
        self.signal = signal
        self.success_threshold = float(success_threshold)
        self.prior = (float(prior[0]), float(prior[1]))
        self.exploration = float(exploration)
        self.temperature = float(temperature)
        self.min_utility = float(min_utility)
        self.decay = float(decay)
        self.family_weights = family_weights
        self.seed = int(seed)
        self.stats: dict[str, TaskStats] = {}
        self.family_counts: dict[str, int] = {}
        self.total_updates = 0
        self.total_samples = 0
        self._rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ utilities

    def success_rate(self, task_id: str) -> float:
        """Posterior mean of the task's success rate."""
        st = self.stats.get(task_id) or TaskStats()
        a, b = self.prior
        return (st.successes + a) / (st.n + a + b)

    def utility(self, task_id: str) -> float:
        """The task's current utility (module docstring)."""
        st = self.stats.get(task_id)
        n = st.n if st is not None else 0.0
        if self.signal == "pass_rate":
            p = self.success_rate(task_id)
            sig = p * (1.0 - p)
        else:
            sig = st.variance if st is not None and st.n >= 2 else 0.25
        bonus = self.exploration * math.sqrt(math.log(1.0 + self.total_updates) / (1.0 + n)) \
            if self.total_updates else self.exploration
        return sig + bonus

    def _weights(self, ids: Sequence[str]) -> np.ndarray:
        u = np.array([max(self.utility(i), self.min_utility) for i in ids], dtype=float)
        return u ** (1.0 / self.temperature)

    def family_shares(self, tasks: Sequence[Any]) -> dict[str, float]:
        """Target share of each family present in `tasks` (sums to 1)."""
        fams: dict[str, list[str]] = {}
        for t in tasks:
            fams.setdefault(family_of(t.id), []).append(t.id)
        fw = self.family_weights
        if fw is None:
            raw = {f: float(len(ids)) for f, ids in fams.items()}
        elif fw == "uniform":
            raw = {f: 1.0 for f in fams}
        elif fw == "utility":
            raw = {f: float(np.mean([self.utility(i) for i in ids])) for f, ids in fams.items()}
        else:
            assert not isinstance(fw, str)  # (`__init__` admits no other name)
            raw = {f: float(fw.get(f, 0.0)) for f in fams}
        total = sum(raw.values())
        if total <= 0:
            raise ValueError(f"no family of these tasks has a positive weight "
                             f"(families: {sorted(fams)}, weights: {fw})")
        return {f: w / total for f, w in raw.items()}

    def probabilities(self, tasks: Sequence[Any]) -> np.ndarray:
        """Marginal probability of each task being drawn next if families were drawn in
        proportion to their shares (for inspection; `sample` follows the budgets)."""
        shares = self.family_shares(tasks)
        ids = [t.id for t in tasks]
        out = np.zeros(len(ids))
        for f, share in shares.items():
            idx = [k for k, i in enumerate(ids) if family_of(i) == f]
            w = self._weights([ids[k] for k in idx])
            out[idx] = share * w / w.sum()
        return out

    # ------------------------------------------------------------------ the CodeEnv interface

    def sample(self, rng: np.random.Generator | None, tasks: Sequence[Any]):
        """The next task: the family furthest below its budget, then a task of that family
        drawn by utility. `rng`: a numpy Generator (the env's), None for the sampler's own."""
        if not tasks:
            raise ValueError("no tasks to sample from")
        rng = self._rng if rng is None else rng
        shares = self.family_shares(tasks)
        done = sum(self.family_counts.get(f, 0) for f in shares)
        deficit = {f: s * (done + 1) - self.family_counts.get(f, 0) for f, s in shares.items() if s > 0}
        best = max(deficit.values())
        tied = sorted(f for f, d in deficit.items() if d >= best - 1e-12)
        fam = tied[int(rng.integers(len(tied)))] if len(tied) > 1 else tied[0]
        members = [t for t in tasks if family_of(t.id) == fam]
        w = self._weights([t.id for t in members])
        k = int(rng.choice(len(members), p=w / w.sum()))
        self.family_counts[fam] = self.family_counts.get(fam, 0) + 1
        self.total_samples += 1
        return members[k]

    def update(self, task_id: str, reward: float) -> None:
        """Record the outcome of an episode of `task_id`."""
        r = float(reward)
        st = self.stats.setdefault(task_id, TaskStats())
        st.update(r, r >= self.success_threshold, self.decay)
        self.total_updates += 1

    # ------------------------------------------------------------------ checkpoints

    def config(self) -> dict:
        fw = self.family_weights
        return {"signal": self.signal, "success_threshold": self.success_threshold,
                "prior": list(self.prior), "exploration": self.exploration,
                "temperature": self.temperature, "min_utility": self.min_utility, "decay": self.decay,
                "family_weights": dict(fw) if isinstance(fw, Mapping) else fw, "seed": self.seed}

    def state_dict(self) -> dict:
        """JSON-able state: configuration, statistics, family counts, own generator."""
        return {"version": STATE_VERSION, "config": self.config(),
                "stats": {k: v.to_dict() for k, v in sorted(self.stats.items())},
                "family_counts": dict(sorted(self.family_counts.items())),
                "total_updates": self.total_updates, "total_samples": self.total_samples,
                "rng": self._rng.bit_generator.state}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a `state_dict()` (configuration included)."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported curriculum state version {state.get('version')!r}")
        cfg = dict(state["config"])
        cfg["prior"] = tuple(cfg["prior"])
        CurriculumSampler.__init__(self, **cfg)  # (the configuration `config()` wrote: this class's)
        self.stats = {k: TaskStats(**v) for k, v in state["stats"].items()}
        self.family_counts = {k: int(v) for k, v in state["family_counts"].items()}
        self.total_updates = int(state["total_updates"])
        self.total_samples = int(state["total_samples"])
        self._rng.bit_generator.state = state["rng"]


