"""Reward wrappers of codegym: Gymnasium wrappers that turn the judge's verdicts, timings and
diffs (everything `CodeEnv` puts in ``info``) into the rewards of the papers in shared/seeds.

=====================  ==============================================================
wrapper                reward
=====================  ==============================================================
`StagedReward`         RLPF: failures by how far execution got, correct programs by
                       relative improvement from the baseline toward the reference
`TimedReward`          DMC-Optim: correctness-gated, calibrated speed (speedup,
                       percentile of the runtime distribution, interpolation)
`DiffCredit`           DiDPO: per-step diff units with spans and returns-to-go
`ProgressShaping`      potential-based shaping by the public tests' pass fraction
`FormatPenalty`        penalty for actions that cannot be parsed or applied
`DiffSizePenalty`      penalty for churn and edits outside allowed files; protected paths
=====================  ==============================================================

Each is small, documents its formula and an example, and records its constructor
arguments (`gymnasium.utils.RecordConstructorArgs`), so ``gym.make(env.spec)`` rebuilds
a wrapped env. Suites declare them in YAML (``suite: {reward: [...]}`` in suite.yaml,
see `codegym.wrappers.config`):

    >>> import gymnasium as gym, codegym
    >>> from codegym.wrappers import StagedReward, FormatPenalty, DiffCredit
    >>> env = DiffCredit(FormatPenalty(StagedReward(gym.make("codegym/PerfCode-v0")), penalty=0.1))
"""

from __future__ import annotations

from codegym.wrappers.config import (RewardConfigError, apply_reward_wrappers, load_reward_config,
                                     parse_reward_config, wrap_for_suite)
from codegym.wrappers.diff_credit import DiffCredit
from codegym.wrappers.shaping import DiffSizePenalty, FormatPenalty, ProgressShaping
from codegym.wrappers.staged import StagedReward, StageValues, staged_reward
from codegym.wrappers.timed import TimedReward, TimedRunFailed, Unscorable

__all__ = ["StagedReward", "TimedReward", "DiffCredit", "ProgressShaping", "FormatPenalty",
           "DiffSizePenalty", "StageValues", "staged_reward", "Unscorable", "TimedRunFailed",
           "apply_reward_wrappers", "load_reward_config", "parse_reward_config", "wrap_for_suite", "RewardConfigError"]
