"""Advantages for groups of trajectories: outcome, step (anchor states) and diff level.

Numpy arrays in, numpy arrays out (trainers turn them into tensors):

- `codegym.rollout.advantages.outcome`: `grpo`, `dr_grpo`, `rloo`, `reinforce_pp`,
  `reinforce_pp_baseline`, `episode_advantages` (one value per trajectory);
- `codegym.rollout.advantages.steps`: `discounted_returns`, `step_anchor_advantages` (GiGPO);
- `codegym.rollout.advantages.diffs`: `diff_anchor_advantages` and its anchors (DiDPO);
- `codegym.rollout.advantages.per_token`: `project_to_tokens`, `token_advantages`.

    >>> grpo([1.0, 0.0, 1.0, 1.0], ["a", "a", "b", "b"]).tolist()
    [0.999998000004, -0.999998000004, 0.0, 0.0]
"""

from __future__ import annotations

from codegym.rollout.advantages.diffs import Anchor, DiffAnchors, Occurrence, diff_anchor_advantages, groupability_score
from codegym.rollout.advantages.outcome import (
                                              dr_grpo,
                                              episode_advantages,
                                              grpo,
                                              reinforce_pp,
                                              reinforce_pp_baseline,
                                              rloo,
)
from codegym.rollout.advantages.per_token import project_to_tokens, token_advantages
from codegym.rollout.advantages.steps import discounted_returns, step_anchor_advantages

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
