"""Diff-level advantages (DiDPO): the same sub-diff across the trajectories of a task is an anchor.

The diff units (``Step.diff_units``) of a group's trajectories are *occurrences*;
candidate anchors are occurrences with the same key (``"subdiff"``: the same edit;
``"preimage"``: the same code before the edit) plus fuzzy clusters (line similarity
>= ``eta``), chosen greedily by groupability score. A member's advantage is its step
return minus its anchor's mean return. As in xuc865/verl-code ``didpo/core_didpo.py``,
re-implemented on codegym's diff units; docs/rollout.md has the definitions.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

import numpy as np

from codegym.edits.similarity import normalise_lines
from codegym.rollout.advantages.outcome import field_of, safe_div
from codegym.rollout.advantages.steps import step_returns, steps_of


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
    sp = field_of(u, "span")
    if sp is None:
        return None
    return int(sp[0]), int(sp[1])


def _unit_key(u: Any, key: str) -> str:
    if key == "subdiff":
        sig = field_of(u, "signature")
        if sig:
            return str(sig)
        payload = [field_of(u, "kind", ""), list(field_of(u, "pre_image", []) or []),
                   list(field_of(u, "post_image", []) or [])]
    else:
        pre = list(field_of(u, "pre_image", []) or [])
        # Pure insertions have no code before them: the place (path + scope) stands in.
        payload = [field_of(u, "path", ""), pre, "" if pre else str(field_of(u, "scope", ""))]
    return hashlib.sha256(repr(payload).encode("utf-8", "surrogateescape")).hexdigest()


def _bounded_ratio(x: list[str], y: list[str]) -> tuple[float, Callable[[], float]]:
    """(cheap upper bound of the difflib ratio, exact ratio thunk) of normalised lines."""
    if not x and not y:
        return 1.0, lambda: 1.0
    sm = SequenceMatcher(None, x, y, autojunk=False)
    return min(sm.real_quick_ratio(), sm.quick_ratio()), sm.ratio


def _similar(a: Occurrence, b: Occurrence, key: str, eta: float,
             norm: Callable[[Occurrence], tuple[list[str], list[str]]]) -> bool:
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
    GS (see docs/rollout.md) up to ``cap`` anchors. Member advantage = its step return
    (discounted by ``gamma``) minus the anchor's mean return (``scale``: divided by the
    anchor's return std + ``eps``).
    """
    if key not in ("subdiff", "preimage"):
        raise ValueError("key must be 'subdiff' or 'preimage'")
    occs, occ_by_group = _occurrences(trajectories, key, gamma)
    anchors: list[Anchor] = []
    for gid, members in occ_by_group.items():
        cands = _candidates(members, occs, key, eta)
        _select(gid, cands, occs, anchors, s0, g0, cap, scale, eps)
    return DiffAnchors(anchors=anchors, occurrences=occs, key=key,
                       params={"eta": eta, "s0": s0, "g0": g0, "cap": cap, "gamma": gamma, "scale": scale})


def _occurrences(trajectories: Sequence[Any], key: str,
                 gamma: float) -> tuple[list[Occurrence], dict[Any, list[int]]]:
    """Every unit of every step as an `Occurrence`, and their indices per group id."""
    occs: list[Occurrence] = []
    by_group: dict[Any, list[int]] = defaultdict(list)
    for ti, traj in enumerate(trajectories):
        by_group[field_of(traj, "group_id")].append(ti)
        rets = step_returns(traj, gamma)
        for si, step in enumerate(steps_of(traj)):
            for ui, u in enumerate(field_of(step, "diff_units", None) or []):
                occs.append(
                    Occurrence(
                        traj=ti, step=si, unit=ui, key=_unit_key(u, key),
                        n_lines=int(field_of(u, "n_lines", 0) or 0), span=_span(u), ret=float(rets[si]),
                        kind=str(field_of(u, "kind", "") or ""), path=str(field_of(u, "path", "") or ""),
                        pre_image=list(field_of(u, "pre_image", []) or []),
                        post_image=list(field_of(u, "post_image", []) or []),
                    )
                )
    traj_group = {ti: gid for gid, tis in by_group.items() for ti in tis}
    occ_by_group: dict[Any, list[int]] = defaultdict(list)
    for oi, o in enumerate(occs):
        occ_by_group[traj_group[o.traj]].append(oi)
    return occs, occ_by_group


def _candidates(members: list[int], occs: list[Occurrence], key: str, eta: float) -> list[tuple[str, list[int]]]:
    """Candidate anchors of one group: exact-key buckets (first-appearance order), then, if
    ``eta < 1``, around each bucket every bucket whose representative is similar to its
    representative (facility-location style, not transitive)."""
    buckets: dict[str, list[int]] = {}
    for oi in members:
        buckets.setdefault(occs[oi].key, []).append(oi)
    cands: list[tuple[str, list[int]]] = [(k, v) for k, v in buckets.items()]
    if eta >= 1.0 or len(buckets) <= 1:
        return cands
    keys = list(buckets)
    cache: dict[int, tuple[list[str], list[str]]] = {}

    def norm(o: Occurrence) -> tuple[list[str], list[str]]:
        k = id(o)
        if k not in cache:
            cache[k] = (normalise_lines(o.pre_image), normalise_lines(o.post_image))
        return cache[k]

    seen = {tuple(v) for _, v in cands}
    for k in sorted(keys, key=lambda k: -len(buckets[k])):
        rep = occs[buckets[k][0]]
        cl = [oi for k2 in keys for oi in buckets[k2]
              if k2 == k or _similar(rep, occs[buckets[k2][0]], key, eta, norm)]
        if tuple(cl) not in seen:
            seen.add(tuple(cl))
            cands.append((k, cl))
    return cands


def _select(gid: Any, cands: list[tuple[str, list[int]]], occs: list[Occurrence], anchors: list[Anchor],
            s0: float, g0: float, cap: int | None, scale: bool, eps: float) -> None:
    """Greedy selection by GS of one group's anchors (appended to `anchors`, members marked)."""
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
            adv = safe_div(adv, rets.std() + eps)
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
