"""Rollouts: trajectory records, collection, and an asynchronous env pool.

    from codegym.rollout import collect, Trajectory
    trajs = collect("codegym/Suite-v0", OracleAgent(), group_size=4, num_envs=2,
                    env_kwargs={"suite": "examples"}, out="rollouts.jsonl")

Re-exports `collect`, `play_episode`, `EpisodeJob`, `make_jobs` (`collect`, `episode`, `jobs`),
`EnvPool` (`pool`) and the records (`records`); `codegym.rollout.advantages` (numpy
only) is imported on demand. docs/rollout.md maps the modules.
"""

from __future__ import annotations

from codegym.rollout.collect import collect
from codegym.rollout.episode import play_episode
from codegym.rollout.jobs import EpisodeJob, make_jobs
from codegym.rollout.pool import EnvPool
from codegym.rollout.records import Step, Trajectory, read_jsonl, write_jsonl

__all__ = ["collect", "play_episode", "EpisodeJob", "make_jobs", "Trajectory", "Step", "EnvPool",
           "read_jsonl", "write_jsonl"]
