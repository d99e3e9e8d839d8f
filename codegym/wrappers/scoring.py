"""The speed scores of `TimedReward`: a speedup (or a rank) to a score in [0, 1].

`speed_score` (mode ``speedup``: log or ratio transform, capped), `interpolation_position`
and `interpolation_score` (mode ``interpolate``: between the slowest and the fastest
solution), `significantly_faster` (mode ``percentile``: a significant win over a pivot),
`counted_speedup` (a speedup inside the noise counts as none) and `lower_bound_score`
(what a too noisy comparison still earns). docs/rewards.md gives the formulas.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from codegym.wrappers.measure import ComparisonRecord

MODES = ("speedup", "percentile", "interpolate")
TRANSFORMS = ("log", "ratio")
AGAINST = ("baseline", "reference")


def speed_score(s: float, cap: float, transform: str) -> float:
    """Score in [0, 1] of a speedup s over the comparand: 0 at s <= 1, 1 at s >= cap."""
    if s <= 1.0:
        return 0.0
    if transform == "log":
        return min(1.0, math.log(s) / math.log(cap))
    return min(1.0, (s - 1.0) / (cap - 1.0))


def interpolation_position(s: float, r: float) -> float:
    """Position of a program s times faster than the slowest solution between the slowest
    (0) and the fastest (1), r = t_fast / t_slow: (1 - 1/s) / (1 - r), not clipped."""
    return (1.0 - 1.0 / s) / (1.0 - r)


def interpolation_score(s: float, r: float) -> float:
    """`interpolation_position` clipped to [0, 1]."""
    return min(1.0, max(0.0, interpolation_position(s, r)))


def significantly_faster(rec: ComparisonRecord) -> bool:
    """The candidate is significantly faster than the comparand of `rec`."""
    return bool(rec.significant and rec.speedup > 1.0)


def beat_score(s: float) -> float:
    """1 for a speedup above 1, else 0 (the score of a percentile pivot's comparison)."""
    return 1.0 if s > 1.0 else 0.0


def counted_speedup(rec: ComparisonRecord) -> float:
    """The comparison's speedup when it is significant and above 1, else 1 (none)."""
    return rec.speedup if rec.significant and rec.speedup > 1.0 else 1.0


def lower_bound_score(rec: ComparisonRecord | None, score_at: Callable[[float], float]) -> float | None:
    """The score at the lower end of a (too noisy) comparison's speedup interval: 0
    unless the speedup is significant, never more than any point of the interval."""
    if rec is None or rec.ci is None:
        return None
    lo = rec.ci[0]
    if not (rec.significant and math.isfinite(lo) and lo > 1.0):
        return 0.0
    return float(score_at(lo))


