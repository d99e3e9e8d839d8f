"""Step-level advantages (GiGPO-style): steps that start from the same state are compared.

`discounted_returns` gives ``G_t = r_t + gamma * G_{t+1}``; `step_anchor_advantages`
groups the steps of one ``group_id`` whose pre-step workspace is the same state (an
*anchor-state group*: exact ``Step.pre_state``, or clusters of similar state texts)
and gives each step its return minus its group's mean. docs/rollout.md explains it.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from codegym.edits.similarity import line_similarity
from codegym.rollout.advantages.outcome import field_of, safe_div


def discounted_returns(rewards: Any, gamma: float = 1.0) -> np.ndarray:
    """``G_t = r_t + gamma * G_{t+1}`` (computed backwards, exact for any gamma)."""
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    out = np.empty_like(r)
    g = 0.0
    for t in range(r.shape[0] - 1, -1, -1):
        g = r[t] + gamma * g
        out[t] = g
    return out


def steps_of(traj: Any) -> list[Any]:
    return list(field_of(traj, "steps", None) or [])


def step_returns(traj: Any, gamma: float) -> np.ndarray:
    return discounted_returns([float(field_of(s, "reward", 0.0)) for s in steps_of(traj)], gamma)


def rep_clusters(items: list[tuple[int, Any]], similar: Callable[[Any, Any], bool]) -> list[list[int]]:
    """Non-transitive clustering: each item joins the first cluster whose representative
    (its first member) it is similar to; no chains of near-duplicates."""
    clusters: list[tuple[Any, list[int]]] = []
    for idx, value in items:
        for rep, members in clusters:
            if similar(value, rep):
                members.append(idx)
                break
        else:
            clusters.append((value, [idx]))
    return [m for _, m in clusters]


def step_anchor_advantages(
    trajectories: Sequence[Any],
    gamma: float = 1.0,
    mode: str = "exact",
    threshold: float = 0.9,
    state_text: Callable[[Any], str] | None = None,
    scale: bool = False,
    eps: float = 1e-6,
    ddof: int = 0,
) -> list[np.ndarray]:
    """GiGPO-style step advantages: one array per trajectory, one value per step.

    Steps of the trajectories of one ``group_id`` whose pre-step state is the same form an
    anchor-state group; a step's advantage is ``G_t - mean`` of its group's discounted
    returns (``scale``: divided by ``std + eps``). Steps alone in their group get 0.

    ``mode="exact"``: state = ``Step.pre_state``. ``mode="similarity"``: state text
    ``state_text(step)`` (default ``Step.observation``), clustered around representatives
    with line similarity >= ``threshold`` (identical ``pre_state`` always groups).
    """
    if mode not in ("exact", "similarity"):
        raise ValueError("mode must be 'exact' or 'similarity'")
    get_text = state_text or (lambda s: str(field_of(s, "observation", "") or ""))
    returns = [step_returns(t, gamma) for t in trajectories]
    out = [np.zeros_like(r) for r in returns]
    by_group: dict[Any, list[int]] = defaultdict(list)
    for i, t in enumerate(trajectories):
        by_group[field_of(t, "group_id")].append(i)
    for members in by_group.values():
        keyed: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i in members:
            for s_idx, step in enumerate(steps_of(trajectories[i])):
                key = str(field_of(step, "pre_state", "") or "")
                if not key:
                    # Without a recorded state hash, hash the state text (exact by content).
                    key = "text:" + hashlib.sha256(get_text(step).encode("utf-8", "surrogateescape")).hexdigest()
                keyed[key].append((i, s_idx))
        groups: list[list[tuple[int, int]]]
        if mode == "exact":
            groups = list(keyed.values())
        else:
            keys = list(keyed)
            texts = {k: get_text(steps_of(trajectories[keyed[k][0][0]])[keyed[k][0][1]]).splitlines() for k in keys}
            clusters = rep_clusters(
                [(n, texts[k]) for n, k in enumerate(keys)],
                lambda a, b: line_similarity(a, b) >= threshold,
            )
            groups = [[occ for n in cl for occ in keyed[keys[n]]] for cl in clusters]
        for grp in groups:
            if len(grp) < 2:
                continue
            vals = np.array([returns[i][s] for i, s in grp])
            adv = vals - vals.mean()
            if scale:
                std = vals.std(ddof=ddof) if len(vals) > ddof else 0.0
                adv = safe_div(adv, std + eps)
            for (i, s), a in zip(grp, adv):
                out[i][s] = a
    return out
