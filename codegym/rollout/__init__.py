"""Rollouts: trajectory records, collection, and an asynchronous env pool.

    from codegym.rollout import collect, Trajectory
    trajs = collect("codegym/Suite-v0", OracleAgent(), group_size=4, num_envs=2,
                    env_kwargs={"suite": "examples"}, out="rollouts.jsonl")

- `codegym.rollout.records`: `Step`, `Trajectory`, `read_jsonl`, `write_jsonl`.
- `codegym.rollout.collect`: `collect`, `play_episode`, `EpisodeJob`.
- `codegym.rollout.pool`: `EnvPool` (steps envs independently, returns the first k).
- `codegym.rollout.advantages` (numpy only) is imported on demand, not here.
"""

from __future__ import annotations

from codegym.rollout.collect import EpisodeJob, collect, play_episode
from codegym.rollout.pool import EnvPool
from codegym.rollout.records import Step, Trajectory, read_jsonl, write_jsonl

__all__ = ["collect", "play_episode", "EpisodeJob", "Trajectory", "Step", "EnvPool",
           "read_jsonl", "write_jsonl"]
