"""Outcome-level advantages: one value per trajectory, baselined within its group.

``group_ids`` says which trajectories form a group (same task, same start state).
A group of one has advantage 0 in every group estimator (no baseline exists), and
a group whose rewards are all equal has advantage 0 (numerator 0, whatever ``eps``).
Numpy only; trajectories are duck-typed (`codegym.rollout.records.Trajectory` objects
or their ``to_dict()`` dicts), read with `field_of`. Formulas: docs/rollout.md.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np


def field_of(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or mapping item (records are objects or their dicts)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _groups(rewards: Any, group_ids: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    g = list(group_ids) if not isinstance(group_ids, np.ndarray) else list(group_ids.reshape(-1))
    if len(g) != r.shape[0]:
        raise ValueError(f"rewards has {r.shape[0]} values but group_ids has {len(g)}")
    # First-appearance order so that group indices do not depend on id types.
    index: dict[Hashable, int] = {}
    inv = np.fromiter((index.setdefault(x, len(index)) for x in g), dtype=np.int64, count=len(g))
    counts = np.bincount(inv, minlength=len(index)).astype(np.float64)
    return r, inv, counts


def safe_div(num: np.ndarray, den: Any) -> np.ndarray:
    """``num / den`` with 0 where ``den == 0`` (a constant group divided by std + eps=0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _group_mean(r: np.ndarray, inv: np.ndarray, counts: np.ndarray) -> np.ndarray:
    sums = np.bincount(inv, weights=r, minlength=counts.shape[0])
    return sums / np.maximum(counts, 1.0)


def grpo(rewards: Any, group_ids: Any, eps: float = 1e-6, ddof: int = 0, scale: bool = True) -> np.ndarray:
    """GRPO: ``(r - mean_g) / (std_g + eps)`` per group (``scale=False``: ``r - mean_g``).

    ``ddof`` is the std's delta degrees of freedom (0: population std; 1: the unbiased std
    TRL/verl get from ``torch.std``). Groups of one (or of ``n <= ddof``) give 0.
    """
    r, inv, counts = _groups(rewards, group_ids)
    if r.size == 0:
        return r.copy()
    mean = _group_mean(r, inv, counts)
    centred = r - mean[inv]
    if scale:
        sq = np.bincount(inv, weights=centred**2, minlength=counts.shape[0])
        denom = counts - ddof
        with np.errstate(invalid="ignore", divide="ignore"):
            std = np.sqrt(np.where(denom > 0, sq / np.where(denom > 0, denom, 1.0), 0.0))
        # A constant group has centred == 0: keep 0 even with eps=0 (no 0/0 = nan).
        centred = safe_div(centred, std[inv] + eps)
    out = np.where(counts[inv] > max(1, ddof), centred, 0.0)
    return out


def dr_grpo(rewards: Any, group_ids: Any) -> np.ndarray:
    """Dr. GRPO: ``r - mean_g`` (no std division; no length normalisation)."""
    return grpo(rewards, group_ids, scale=False)


def rloo(rewards: Any, group_ids: Any) -> np.ndarray:
    """RLOO: ``r_i - mean_{j != i} r_j`` = ``n/(n-1) * (r_i - mean_g)``; 0 for groups of one."""
    r, inv, counts = _groups(rewards, group_ids)
    if r.size == 0:
        return r.copy()
    sums = np.bincount(inv, weights=r, minlength=counts.shape[0])
    n = counts[inv]
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = (sums[inv] - r) / (n - 1.0)
    return np.where(n > 1, r - loo, 0.0)


def reinforce_pp(rewards: Any, eps: float = 1e-6, ddof: int = 0, group_ids: Any = None) -> np.ndarray:
    """REINFORCE++: ``(r - mean_batch) / (std_batch + eps)``; ``group_ids`` is ignored
    (accepted so that all estimators share a call shape). A batch of one gives 0."""
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    if r.size <= max(1, ddof):
        return np.zeros_like(r)
    return safe_div(r - r.mean(), r.std(ddof=ddof) + eps)


def reinforce_pp_baseline(rewards: Any, group_ids: Any, eps: float = 1e-6, ddof: int = 0) -> np.ndarray:
    """REINFORCE++-baseline: ``a = r - mean_g`` then ``(a - mean_batch(a)) / (std_batch(a) + eps)``.

    Trajectories in groups of one get 0 (their ``a`` is 0 and they are left out of the
    batch statistics, which would otherwise be diluted by them).
    """
    r, inv, counts = _groups(rewards, group_ids)
    a = dr_grpo(r, inv)
    keep = counts[inv] > 1
    out = np.zeros_like(r)
    if keep.sum() <= max(1, ddof):
        return out
    ak = a[keep]
    out[keep] = safe_div(ak - ak.mean(), ak.std(ddof=ddof) + eps)
    return out


_ESTIMATORS: dict[str, Callable[..., np.ndarray]] = {
    "grpo": grpo,
    "dr_grpo": dr_grpo,
    "rloo": rloo,
    "reinforce_pp": lambda r, g, **kw: reinforce_pp(r, **kw),
    "reinforce_pp_baseline": reinforce_pp_baseline,
}


def episode_advantages(trajectories: Sequence[Any], method: str = "grpo", reward: str = "final",
                       **kw: Any) -> np.ndarray:
    """Outcome advantages of trajectories grouped by ``group_id``.

    ``reward``: ``"final"`` (``final_reward``) or ``"total"`` (``total_reward``).
    ``method``: grpo | dr_grpo | rloo | reinforce_pp | reinforce_pp_baseline.
    """
    if method not in _ESTIMATORS:
        raise ValueError(f"unknown method {method!r}; one of {sorted(_ESTIMATORS)}")
    if reward not in ("final", "total"):
        raise ValueError("reward must be 'final' or 'total'")
    r = [float(field_of(t, f"{reward}_reward", 0.0)) for t in trajectories]
    g = [field_of(t, "group_id") for t in trajectories]
    return _ESTIMATORS[method](r, g, **kw)
