"""Reward wrappers: Gymnasium wrappers that turn the judge's verdicts, timings and diffs
(everything the env puts in ``info``) into the rewards of three papers: RLPF (reinforcement
learning from performance feedback, on PerfCodeBench), DMC-Optim (reinforcement learning for
code optimisation with timed execution, Chambon, Zheng, Decugis et al.) and DiDPO
(Diff-in-Diff Policy Optimization); docs/rewards.md names them.

`StagedReward` (RLPF: failures by how far execution got, correct programs by improvement
toward the reference), `TimedReward` (DMC-Optim: correctness-gated, calibrated speed),
`DiffCredit` (DiDPO: per-step diff units and returns-to-go), `ProgressShaping`,
`FormatPenalty`, `DiffSizePenalty`. Each records its constructor arguments, so
``gym.make(env.spec)`` rebuilds a wrapped env; suites declare them in YAML
(`codegym.wrappers.config`). docs/rewards.md explains every reward.

    >>> import gymnasium as gym, codegym
    >>> from codegym.wrappers import StagedReward, FormatPenalty, DiffCredit
    >>> env = DiffCredit(FormatPenalty(StagedReward(gym.make("codegym/PerfCode-v0")), penalty=0.1))
"""

from __future__ import annotations

from codegym.judge.perf import Unscorable
from codegym.wrappers.config import (
    RewardConfigError,
    apply_reward_wrappers,
    load_reward_config,
    parse_reward_config,
    wrap_for_suite,
)
from codegym.wrappers.diff_credit import DiffCredit
from codegym.wrappers.measure import TimedRunFailed, TimingSettings
from codegym.wrappers.shaping import DiffSizePenalty, FormatPenalty, ProgressShaping
from codegym.wrappers.staged import StagedReward, StageValues, staged_reward
from codegym.wrappers.timed import SpeedScoring, TimedReward, TimedValues

__all__ = ["StagedReward", "TimedReward", "DiffCredit", "ProgressShaping", "FormatPenalty",
           "DiffSizePenalty", "StageValues", "TimedValues", "SpeedScoring", "TimingSettings", "staged_reward",
           "Unscorable", "TimedRunFailed",
           "apply_reward_wrappers", "load_reward_config", "parse_reward_config", "wrap_for_suite", "RewardConfigError"]
