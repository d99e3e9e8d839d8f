"""Episode jobs: what one episode of a collection is, and how its ids and seeds are made.

A group id is a pure function of the task id, the task's content hash, the
collection seed and the task's occurrence in the task list; an episode's seed a
pure function of its group id and sample index -- so a resumed run computes the
same ids and seeds. `copy_agent` gives each worker its own agent.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EpisodeJob:
    """One episode to play: `task_id` from its start state, agent and env seeded with `seed`."""

    task_id: str
    seed: int
    group_id: str
    sample_index: int
    task_hash: str | None = None   # checked against the env's task when given

    @property
    def episode_key(self) -> str:
        return f"{self.group_id}/{self.sample_index}"


def group_id_for(task_id: str, task_hash: str, seed: int, occurrence: int = 0) -> str:
    """The group id of a task in a collection seeded `seed` (`occurrence`: the n-th time the
    same task appears in the task list, so repeated tasks form distinct groups)."""
    gid = f"{task_id}@{task_hash[:12]}:s{seed}"
    return gid if occurrence == 0 else f"{gid}:r{occurrence}"


def episode_seed(group_id: str, sample_index: int) -> int:
    """A 31-bit seed derived from the episode key (stable across runs and Python versions)."""
    h = hashlib.sha256(f"{group_id}/{sample_index}".encode()).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


def make_jobs(tasks: Iterable[Any], group_size: int, seed: int) -> list[EpisodeJob]:
    """G jobs per task (objects with ``id`` and ``content_hash``), in (group, sample) order."""
    if group_size < 1:
        raise ValueError("group_size must be >= 1")
    seen: dict[str, int] = {}
    jobs: list[EpisodeJob] = []
    for task in tasks:
        occurrence = seen.get(task.id, 0)
        seen[task.id] = occurrence + 1
        gid = group_id_for(task.id, task.content_hash, seed, occurrence)
        for s in range(group_size):
            jobs.append(EpisodeJob(task_id=task.id, seed=episode_seed(gid, s), group_id=gid,
                                   sample_index=s, task_hash=task.content_hash))
    return jobs


def copy_agent(agent: Any) -> Any:
    """An independent copy of `agent` for one worker: ``agent.fork()`` or a deep copy."""
    fork = getattr(agent, "fork", None)
    return fork() if callable(fork) else copy.deepcopy(agent)
