"""Advantages for groups of trajectories: outcome, step (anchor states) and diff level.

This module owns every advantage estimator of ``codegym.rollout`` (numpy only; trainers
turn the arrays into tensors). Inputs are plain arrays or trajectories; trajectories
and steps are duck-typed (``codegym.rollout.records.Trajectory``/``Step`` objects or
their ``to_dict()`` dicts).

Outcome level (one value per trajectory; ``group_ids`` says which trajectories form a
group: same task, same start state):

- :func:`grpo` -- ``(r - mean_g) / (std_g + eps)`` (``scale=False``: no division).
- :func:`dr_grpo` -- Dr. GRPO: ``r - mean_g``; no std and, being per trajectory, no
  length normalisation (the trainer must sum token losses, not average them per sequence).
- :func:`rloo` -- leave-one-out: ``r_i - mean_{j != i} r_j``.
- :func:`reinforce_pp` -- REINFORCE++: global batch whitening ``(r - mean) / (std + eps)``
  (its per-token KL shaping is the trainer's business); :func:`reinforce_pp_baseline`
  subtracts the group mean first, then divides by the batch std of the result.
- A group of one has advantage 0 in every group estimator (no baseline exists), and a
  group whose rewards are all equal has advantage 0 (numerator 0, whatever ``eps``).

Step level (GiGPO-style):

- :func:`discounted_returns` -- ``G_t = r_t + gamma * G_{t+1}``.
- :func:`step_anchor_advantages` -- steps of one group whose pre-step workspace is the
  same state form an *anchor-state group*; a step's advantage is its discounted return
  minus (and, with ``scale``, divided by the std of) its anchor group's returns.
  ``mode="exact"`` keys states by ``Step.pre_state`` (a hash of the workspace);
  ``mode="similarity"`` clusters the workspace texts (``state_text(step)``, default the
  step's observation) whose line similarity reaches ``threshold``.

Diff level (DiDPO, as in xuc865/verl-code ``didpo/core_didpo.py``; re-implemented here
on ``Step.diff_units``):

- :func:`diff_anchor_advantages` -- the sub-diffs ("units") of the G trajectories of a
  task are *occurrences*; candidate anchor groups are occurrences with the same exact key
  and, for ``eta < 1``, fuzzy clusters around each exact group (line similarity >= eta to
  its representative). Each candidate has a groupability score
  ``GS = (1 - exp(-Lbar/s0)) * (1 - exp(-(n-1)/g0))`` (``Lbar`` mean ``n_lines`` of the
  members, ``n`` their number, so singletons score 0 and never anchor). Anchors are
  chosen greedily by GS (at most ``cap`` per group): the best candidate claims its
  members; an occurrence belongs to at most one anchor, and occurrences of the same step
  whose spans overlap a claimed one are cut too, so lower-GS candidates lose them and are
  re-scored with what is left. At most one occurrence per (trajectory, step) per anchor.
  The advantage of a member is its step return minus its anchor's mean return.
- :func:`project_to_tokens` -- each token of a step's response takes the advantage of the
  highest-GS anchor whose unit span covers it (spans are characters of the action text;
  tokens via :mod:`codegym.rollout.tokens` offsets of the sampled ``response_ids``, or
  characters when a step has no ids); uncovered tokens get 0.
- :func:`token_advantages` -- per trajectory, per step, one array aligned with the step's
  ``response_ids``: ``episode advantage + lam * diff advantage`` (``+ omega * step
  advantage`` when step-level advantages are given).

The two anchor keys:

- ``key="subdiff"`` (DiDPO): the key is the unit's ``signature`` (kind + normalised pre
  and post images) and similarity compares whole units (pre and post images). An anchor
  holds *the same edit* made in different trajectories (or turns); the advantage says
  whether that edit was followed by better or worse outcomes than on average when it was
  made. It credits edits by their consequences but says nothing about alternatives.
- ``key="preimage"`` (GiGPO-faithful): the key is the code *before* the edit (file path +
  normalised pre image; pure insertions use path + scope). An anchor holds occurrences
  that started from the same code and may have changed it differently, like GiGPO's
  anchor states: the advantage compares *different actions from the same state*.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import numpy as np

__all__ = [
    "grpo",
    "dr_grpo",
    "rloo",
    "reinforce_pp",
    "reinforce_pp_baseline",
    "episode_advantages",
    "discounted_returns",
    "step_anchor_advantages",
    "groupability_score",
    "Occurrence",
    "Anchor",
    "DiffAnchors",
    "diff_anchor_advantages",
    "project_to_tokens",
    "token_advantages",
]


# --------------------------------------------------------------------------- helpers
def _get(obj: Any, name: str, default: Any = None) -> Any:
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


def _safe_div(num: np.ndarray, den: Any) -> np.ndarray:
    """``num / den`` with 0 where ``den == 0`` (a constant group divided by std + eps=0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def _group_mean(r: np.ndarray, inv: np.ndarray, counts: np.ndarray) -> np.ndarray:
    sums = np.bincount(inv, weights=r, minlength=counts.shape[0])
    return sums / np.maximum(counts, 1.0)


# --------------------------------------------------------------------------- outcome level
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
        centred = _safe_div(centred, std[inv] + eps)
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
    return _safe_div(r - r.mean(), r.std(ddof=ddof) + eps)


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
    out[keep] = _safe_div(ak - ak.mean(), ak.std(ddof=ddof) + eps)
    return out


_ESTIMATORS: dict[str, Callable[..., np.ndarray]] = {
    "grpo": grpo,
    "dr_grpo": dr_grpo,
    "rloo": rloo,
    "reinforce_pp": lambda r, g, **kw: reinforce_pp(r, **kw),
    "reinforce_pp_baseline": reinforce_pp_baseline,
}


def episode_advantages(trajectories: Sequence[Any], method: str = "grpo", reward: str = "final", **kw: Any) -> np.ndarray:
    """Outcome advantages of trajectories grouped by ``group_id``.

    ``reward``: ``"final"`` (``final_reward``) or ``"total"`` (``total_reward``).
    ``method``: grpo | dr_grpo | rloo | reinforce_pp | reinforce_pp_baseline.
    """
    if method not in _ESTIMATORS:
        raise ValueError(f"unknown method {method!r}; one of {sorted(_ESTIMATORS)}")
    if reward not in ("final", "total"):
        raise ValueError("reward must be 'final' or 'total'")
    r = [float(_get(t, f"{reward}_reward", 0.0)) for t in trajectories]
    g = [_get(t, "group_id") for t in trajectories]
    return _ESTIMATORS[method](r, g, **kw)


# --------------------------------------------------------------------------- step level
def discounted_returns(rewards: Any, gamma: float = 1.0) -> np.ndarray:
    """``G_t = r_t + gamma * G_{t+1}`` (computed backwards, exact for any gamma)."""
    r = np.asarray(rewards, dtype=np.float64).reshape(-1)
    out = np.empty_like(r)
    g = 0.0
    for t in range(r.shape[0] - 1, -1, -1):
        g = r[t] + gamma * g
        out[t] = g
    return out


def _lines_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    from codegym.edits.units import line_similarity  # lazy: keeps this module numpy-only at import

    return line_similarity(a, b)


def _steps(traj: Any) -> list[Any]:
    return list(_get(traj, "steps", None) or [])


def _step_returns(traj: Any, gamma: float) -> np.ndarray:
    return discounted_returns([float(_get(s, "reward", 0.0)) for s in _steps(traj)], gamma)


def _rep_clusters(items: list[tuple[int, Any]], similar: Callable[[Any, Any], bool]) -> list[list[int]]:
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
    get_text = state_text or (lambda s: str(_get(s, "observation", "") or ""))
    returns = [_step_returns(t, gamma) for t in trajectories]
    out = [np.zeros_like(r) for r in returns]
    by_group: dict[Any, list[int]] = defaultdict(list)
    for i, t in enumerate(trajectories):
        by_group[_get(t, "group_id")].append(i)
    for members in by_group.values():
        keyed: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i in members:
            for s_idx, step in enumerate(_steps(trajectories[i])):
                key = str(_get(step, "pre_state", "") or "")
                if not key:
                    # Without a recorded state hash, hash the state text (exact by content).
                    key = "text:" + hashlib.sha256(get_text(step).encode("utf-8", "surrogateescape")).hexdigest()
                keyed[key].append((i, s_idx))
        groups: list[list[tuple[int, int]]]
        if mode == "exact":
            groups = list(keyed.values())
        else:
            keys = list(keyed)
            texts = {k: get_text(_steps(trajectories[keyed[k][0][0]])[keyed[k][0][1]]).splitlines() for k in keys}
            clusters = _rep_clusters(
                [(n, texts[k]) for n, k in enumerate(keys)],
                lambda a, b: _lines_similarity(a, b) >= threshold,
            )
            groups = [[occ for n in cl for occ in keyed[keys[n]]] for cl in clusters]
        for grp in groups:
            if len(grp) < 2:
                continue
            vals = np.array([returns[i][s] for i, s in grp])
            adv = vals - vals.mean()
            if scale:
                std = vals.std(ddof=ddof) if len(vals) > ddof else 0.0
                adv = _safe_div(adv, std + eps)
            for (i, s), a in zip(grp, adv):
                out[i][s] = a
    return out


# --------------------------------------------------------------------------- diff level
def groupability_score(mean_lines: float, n: int, s0: float = 8.0, g0: float = 8.0) -> float:
    """``GS = (1 - exp(-Lbar/s0)) * (1 - exp(-(n-1)/g0))``; 0 for ``n <= 1``."""
    if n <= 1:
        return 0.0
    return (1.0 - math.exp(-max(0.0, mean_lines) / s0)) * (1.0 - math.exp(-(n - 1) / g0))


@dataclass
class Occurrence:
    """One diff unit of one step of one trajectory (indices into the inputs)."""

    traj: int
    step: int
    unit: int
    key: str  # exact grouping key (signature, or hash of path + pre image)
    n_lines: int
    span: tuple[int, int] | None
    ret: float  # discounted return of its step
    kind: str = ""
    path: str = ""
    pre_image: list[str] = field(default_factory=list)
    post_image: list[str] = field(default_factory=list)
    anchor: int | None = None  # index into DiffAnchors.anchors
    advantage: float = 0.0


@dataclass
class Anchor:
    """A selected group of occurrences (>= 2, at most one per trajectory step)."""

    index: int
    group_id: Any
    key: str  # exact key of its representative
    gs: float
    mean_lines: float
    mean_return: float
    members: list[Occurrence]


@dataclass
class DiffAnchors:
    """Result of :func:`diff_anchor_advantages`."""

    anchors: list[Anchor]
    occurrences: list[Occurrence]
    key: str
    params: dict[str, Any]

    def of_step(self, traj: int, step: int) -> list[Occurrence]:
        """Occurrences of one step (anchored or not), in unit order."""
        return [o for o in self.occurrences if o.traj == traj and o.step == step]

    def unit_advantages(self) -> dict[tuple[int, int, int], float]:
        """``{(traj, step, unit): advantage}`` of the anchored occurrences."""
        return {(o.traj, o.step, o.unit): o.advantage for o in self.occurrences if o.anchor is not None}

    def diagnostics(self) -> dict[str, float]:
        n = len(self.occurrences)
        covered = sum(1 for o in self.occurrences if o.anchor is not None)
        sizes = [len(a.members) for a in self.anchors]
        return {
            "n_units": float(n),
            "n_anchors": float(len(self.anchors)),
            "anchored_frac": covered / n if n else 0.0,
            "mean_anchor_size": float(np.mean(sizes)) if sizes else 0.0,
            "mean_gs": float(np.mean([a.gs for a in self.anchors])) if self.anchors else 0.0,
        }


def _span(u: Any) -> tuple[int, int] | None:
    sp = _get(u, "span")
    if sp is None:
        return None
    return int(sp[0]), int(sp[1])


def _unit_key(u: Any, key: str) -> str:
    if key == "subdiff":
        sig = _get(u, "signature")
        if sig:
            return str(sig)
        payload = [_get(u, "kind", ""), list(_get(u, "pre_image", []) or []), list(_get(u, "post_image", []) or [])]
    else:
        pre = list(_get(u, "pre_image", []) or [])
        # Pure insertions have no code before them: the place (path + scope) stands in.
        payload = [_get(u, "path", ""), pre, "" if pre else str(_get(u, "scope", ""))]
    return hashlib.sha256(repr(payload).encode("utf-8", "surrogateescape")).hexdigest()


def _norm(lines: Sequence[str]) -> list[str]:
    from codegym.edits.units import normalise_lines  # lazy: numpy-only at import

    return normalise_lines(lines)


def _bounded_ratio(x: list[str], y: list[str]) -> tuple[float, Callable[[], float]]:
    """(cheap upper bound of the difflib ratio, exact ratio thunk) of normalised lines."""
    if not x and not y:
        return 1.0, lambda: 1.0
    sm = SequenceMatcher(None, x, y, autojunk=False)
    return min(sm.real_quick_ratio(), sm.quick_ratio()), sm.ratio


def _similar(a: Occurrence, b: Occurrence, key: str, eta: float, norm: Callable[[Occurrence], tuple[list[str], list[str]]]) -> bool:
    """Line similarity of two occurrences >= eta (the same definition as
    ``codegym.edits.units.unit_similarity`` / ``line_similarity``), with cheap upper bounds
    first so that the all-pairs comparison of a large group stays fast."""
    if a.key == b.key:
        return True
    (ap, aq), (bp, bq) = norm(a), norm(b)
    if key == "subdiff":
        # DiDPO's unit similarity: same kind, line-weighted similarity of both images
        # (weights from the raw image sizes, as unit_similarity does).
        if a.kind != b.kind:
            return False
        parts = []
        for x, y, w in ((ap, bp, len(a.pre_image) + len(b.pre_image)), (aq, bq, len(a.post_image) + len(b.post_image))):
            if w:
                parts.append((w, *_bounded_ratio(x, y)))
        weight = sum(w for w, _, _ in parts)
        if not weight:
            return True
        if sum(w * ub for w, ub, _ in parts) / weight < eta:
            return False
        return sum(w * exact() for w, _, exact in parts) / weight >= eta
    # preimage: same file, both non-empty pre images similar enough.
    if a.path != b.path or not ap or not bp:
        return False
    ub, exact = _bounded_ratio(ap, bp)
    return ub >= eta and exact() >= eta


def _overlaps(a: Occurrence, b: Occurrence) -> bool:
    if a.traj != b.traj or a.step != b.step:
        return False
    if a.unit == b.unit:
        return True
    if a.span is None or b.span is None:
        return False
    return a.span[0] < b.span[1] and b.span[0] < a.span[1]


def diff_anchor_advantages(
    trajectories: Sequence[Any],
    key: str = "subdiff",
    eta: float = 0.8,
    s0: float = 8.0,
    g0: float = 8.0,
    cap: int | None = 64,
    gamma: float = 1.0,
    scale: bool = False,
    eps: float = 1e-6,
) -> DiffAnchors:
    """DiDPO anchors and the advantage of each anchored diff-unit occurrence.

    Trajectories are grouped by ``group_id`` (anchors never cross groups). Per group:
    occurrences = every unit of every step (``Step.diff_units``: ``signature``,
    ``pre_image``, ``post_image``, ``n_lines``, ``span``, ``kind``, ``path``, ``scope``);
    candidates = exact-key buckets plus, if ``eta < 1``, the fuzzy cluster around each
    bucket's representative (all buckets similar to it, >= ``eta``); greedy selection by
    GS (see module docstring) up to ``cap`` anchors. Member advantage = its step return
    (discounted by ``gamma``) minus the anchor's mean return (``scale``: divided by the
    anchor's return std + ``eps``).
    """
    if key not in ("subdiff", "preimage"):
        raise ValueError("key must be 'subdiff' or 'preimage'")
    occs: list[Occurrence] = []
    by_group: dict[Any, list[int]] = defaultdict(list)
    for ti, traj in enumerate(trajectories):
        by_group[_get(traj, "group_id")].append(ti)
        rets = _step_returns(traj, gamma)
        for si, step in enumerate(_steps(traj)):
            for ui, u in enumerate(_get(step, "diff_units", None) or []):
                occs.append(
                    Occurrence(
                        traj=ti, step=si, unit=ui, key=_unit_key(u, key),
                        n_lines=int(_get(u, "n_lines", 0) or 0), span=_span(u), ret=float(rets[si]),
                        kind=str(_get(u, "kind", "") or ""), path=str(_get(u, "path", "") or ""),
                        pre_image=list(_get(u, "pre_image", []) or []),
                        post_image=list(_get(u, "post_image", []) or []),
                    )
                )
    anchors: list[Anchor] = []
    traj_group = {ti: gid for gid, tis in by_group.items() for ti in tis}
    occ_by_group: dict[Any, list[int]] = defaultdict(list)
    for oi, o in enumerate(occs):
        occ_by_group[traj_group[o.traj]].append(oi)

    for gid, members in occ_by_group.items():
        # Exact buckets in first-appearance order.
        buckets: dict[str, list[int]] = {}
        for oi in members:
            buckets.setdefault(occs[oi].key, []).append(oi)
        cands: list[tuple[str, list[int]]] = [(k, v) for k, v in buckets.items()]
        if eta < 1.0 and len(buckets) > 1:
            keys = list(buckets)
            cache: dict[int, tuple[list[str], list[str]]] = {}

            def norm(o: Occurrence) -> tuple[list[str], list[str]]:
                k = id(o)
                if k not in cache:
                    cache[k] = (_norm(o.pre_image), _norm(o.post_image))
                return cache[k]

            # Fuzzy candidates: around each bucket, every bucket whose representative is
            # similar to its representative (facility-location style, not transitive).
            seen = {tuple(v) for _, v in cands}
            for k in sorted(keys, key=lambda k: -len(buckets[k])):
                rep = occs[buckets[k][0]]
                cl = [oi for k2 in keys for oi in buckets[k2]
                      if k2 == k or _similar(rep, occs[buckets[k2][0]], key, eta, norm)]
                if tuple(cl) not in seen:
                    seen.add(tuple(cl))
                    cands.append((k, cl))
        # Candidates spanning fewer than two steps can never anchor; availability only
        # shrinks, so they are dropped for good (as are those that fall below two later).
        live = [ci for ci, (_, cl) in enumerate(cands) if len({(occs[o].traj, occs[o].step) for o in cl}) > 1]
        claimed: dict[tuple[int, int], list[Occurrence]] = defaultdict(list)
        n_sel = 0
        while live and (cap is None or n_sel < cap):
            best: tuple[float, int, int] | None = None
            best_members: list[int] = []
            still: list[int] = []
            for ci in live:
                avail = _available(cands[ci][1], occs, claimed)
                if len(avail) < 2:
                    continue
                still.append(ci)
                gs = groupability_score(float(np.mean([occs[o].n_lines for o in avail])), len(avail), s0, g0)
                if gs <= 0.0:
                    continue
                rank = (gs, len(avail), -ci)  # ties: larger group, then earlier candidate
                if best is None or rank > best:
                    best, best_members = rank, avail
            live = still
            if best is None:
                break
            ci = -best[2]
            rets = np.array([occs[o].ret for o in best_members])
            adv = rets - rets.mean()
            if scale:
                adv = _safe_div(adv, rets.std() + eps)
            anchor = Anchor(
                index=len(anchors), group_id=gid, key=cands[ci][0], gs=best[0],
                mean_lines=float(np.mean([occs[o].n_lines for o in best_members])),
                mean_return=float(rets.mean()), members=[occs[o] for o in best_members],
            )
            for o, a in zip(best_members, adv):
                occs[o].anchor = anchor.index
                occs[o].advantage = float(a)
                claimed[(occs[o].traj, occs[o].step)].append(occs[o])
            anchors.append(anchor)
            n_sel += 1
    return DiffAnchors(anchors=anchors, occurrences=occs, key=key,
                       params={"eta": eta, "s0": s0, "g0": g0, "cap": cap, "gamma": gamma, "scale": scale})


def _available(cl: list[int], occs: list[Occurrence], claimed: Mapping[tuple[int, int], list[Occurrence]]) -> list[int]:
    """Members not claimed and not overlapping an occurrence claimed in the same step, one
    per (traj, step): the largest unit (then the first) of a step represents it."""
    best: dict[tuple[int, int], int] = {}
    for oi in cl:
        o = occs[oi]
        k = (o.traj, o.step)
        if o.anchor is not None or any(_overlaps(o, c) for c in claimed.get(k, ())):
            continue
        if k not in best or o.n_lines > occs[best[k]].n_lines:
            best[k] = oi
    return sorted(best.values())


# --------------------------------------------------------------------------- tokens
def _step_offsets(step: Any, decode: Any) -> list[tuple[int, int]] | None:
    """Char offsets of the step's response tokens, or None when the step has no ids."""
    ids = _get(step, "response_ids")
    if ids is None:
        return None
    info = _get(step, "info", None) or {}
    pre = info.get("token_char_offsets") if isinstance(info, Mapping) else None
    if pre is not None and len(pre) == len(ids):
        return [(int(a), int(b)) for a, b in pre]
    if decode is None:
        raise ValueError(
            "steps carry response_ids: pass decode= (a tokenizer or callable) so that unit spans can be mapped to tokens"
        )
    from codegym.rollout.tokens import token_char_offsets

    return token_char_offsets(ids, decode, text=str(_get(step, "action", "") or ""))


def project_to_tokens(
    trajectories: Sequence[Any], anchors: DiffAnchors, decode: Any = None
) -> list[list[np.ndarray]]:
    """Per trajectory, per step: diff advantages aligned with the step's ``response_ids``
    (or with the characters of its action text when it has no ids).

    A token takes the advantage of the highest-GS anchor with a member unit whose span
    overlaps it (ties: the anchor selected first); other tokens get 0.
    """
    from codegym.rollout.tokens import span_to_token_range

    by_step: dict[tuple[int, int], list[Occurrence]] = defaultdict(list)
    for o in anchors.occurrences:
        if o.anchor is not None and o.span is not None:
            by_step[(o.traj, o.step)].append(o)
    out: list[list[np.ndarray]] = []
    for ti, traj in enumerate(trajectories):
        per_step: list[np.ndarray] = []
        for si, step in enumerate(_steps(traj)):
            occ = by_step.get((ti, si), [])
            # Paint lowest priority first so that the highest-GS anchor wins.
            occ.sort(key=lambda o: (anchors.anchors[o.anchor].gs, -o.anchor))
            ids = _get(step, "response_ids")
            if ids is None:
                # No sampled ids: one value per character of the action text.
                arr = np.zeros(len(str(_get(step, "action", "") or "")), dtype=np.float64)
                for o in occ:
                    a, b = max(0, o.span[0]), min(arr.shape[0], o.span[1])
                    if b > a:
                        arr[a:b] = o.advantage
            else:
                arr = np.zeros(len(ids), dtype=np.float64)
                offsets = _step_offsets(step, decode) if occ else None
                for o in occ:
                    a, b = span_to_token_range(offsets, o.span)
                    if b > a:
                        arr[a:b] = o.advantage
            per_step.append(arr)
        out.append(per_step)
    return out


def token_advantages(
    trajectories: Sequence[Any],
    episode_adv: Any,
    lam: float = 1.0,
    decode: Any = None,
    *,
    anchors: DiffAnchors | None = None,
    step_adv: Sequence[Any] | None = None,
    omega: float = 1.0,
    **anchor_kw: Any,
) -> list[list[np.ndarray]]:
    """Final per-token advantages: ``episode_adv[i] + lam * diff + omega * step_adv[i][t]``.

    ``episode_adv``: one value per trajectory (e.g. :func:`grpo`). The diff term comes from
    ``anchors`` or :func:`diff_anchor_advantages` (``**anchor_kw``: key, eta, s0, g0, cap,
    gamma ...); ``step_adv`` (optional) from :func:`step_anchor_advantages`. Each array is
    aligned with the step's ``response_ids`` (characters of the action when none).
    """
    ep = np.asarray(episode_adv, dtype=np.float64).reshape(-1)
    if ep.shape[0] != len(trajectories):
        raise ValueError(f"episode_adv has {ep.shape[0]} values for {len(trajectories)} trajectories")
    if anchors is None:
        anchors = diff_anchor_advantages(trajectories, **anchor_kw)
    elif anchor_kw:
        raise TypeError("give either anchors= or anchor parameters, not both")
    diff = project_to_tokens(trajectories, anchors, decode)
    out: list[list[np.ndarray]] = []
    for ti, steps in enumerate(diff):
        row = []
        for si, d in enumerate(steps):
            v = ep[ti] + lam * d
            if step_adv is not None:
                v = v + omega * float(np.asarray(step_adv[ti], dtype=np.float64)[si])
            row.append(v)
        out.append(row)
    return out
