"""Rollouts on Ray: episodes as calls to Ray actors, each with its own env and agent copy.

Owns `run_jobs_ray` (what ``collect(..., backend="ray")`` calls) and the actor
class `EpisodeWorker`. Each of ``num_workers`` actors makes its env once and
holds its own agent copy; the driver hands each idle actor the next job and calls
``on_result(trajectory)`` as each finishes. An actor that dies is replaced and its
job played again from its start state; every job ends with exactly one result.
Ray is imported when first used (an optional dependency). docs/rollout.md has the
fault and cluster rules.

    >>> from codegym.agents import OracleAgent
    >>> from codegym.rollout.jobs import make_jobs
    >>> from codegym.tasks.suite import load_suite
    >>> tasks = [load_suite("examples").get("examples/bracket-depth")]
    >>> trajs = run_jobs_ray("codegym/Suite-v0", {"suite": "examples"}, OracleAgent(),
    ...                      make_jobs(tasks, 2, 0), num_workers=2)
    >>> [t.verdict for t in trajs]
    ['accepted', 'accepted']
"""

from __future__ import annotations

import collections
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym

from codegym.envs.registration import register_envs
from codegym.rollout.episode import play_episode
from codegym.rollout.jobs import EpisodeJob, copy_agent
from codegym.rollout.records import Trajectory


def _ray() -> Any:
    try:
        import ray  # noqa: PLC0415  (optional dependency)
    except ImportError:
        raise RuntimeError("backend='ray' needs ray: pip install 'codegym[ray]'") from None
    return ray


@functools.cache
def _worker_gone() -> tuple[type[BaseException], ...]:
    """The Ray exceptions that mean an actor (not the episode) failed."""
    rex = _ray().exceptions
    names = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError", "NodeDiedError")
    return tuple(c for c in (getattr(rex, n, None) for n in names) if c is not None)


class EpisodeWorker:
    """A Ray actor playing episodes: one env (made once) and one agent copy."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], agent: Any):
        register_envs()  # this process may not have registered the ids yet
        self.pid = os.getpid()
        self.env_id = env_id
        self.env = gym.make(env_id, **dict(env_kwargs))
        self.agent = copy_agent(agent)
        self.played = 0

    def info(self) -> dict:
        return {"pid": self.pid, "played": self.played}

    def play(self, job: EpisodeJob) -> tuple[str, Trajectory]:
        traj = play_episode(self.env, self.agent, job, self.env_id)
        self.played += 1
        return job.episode_key, traj

    def close(self) -> None:
        self.env.close()


@functools.cache
def _remote_worker() -> Any:
    return _ray().remote(EpisodeWorker)


def _cpus_per_actor(n: int, requested: float | None) -> float:
    """CPUs reserved per actor: 1, or a share of what is free so that all `n` fit."""
    if requested is not None:
        return float(requested)
    free = float(_ray().available_resources().get("CPU", 0.0))
    return max(0.01, min(1.0, free / max(1, n)))


def run_jobs_ray(env_id: str, env_kwargs: Mapping[str, Any], agent: Any, jobs: Sequence[EpisodeJob],
                 num_workers: int, on_result: Callable[[Trajectory], None] | None = None,
                 max_retries: int = 3, actor_options: Mapping[str, Any] | None = None,
                 address: str | None = None, worker_pids: Callable[[list[int]], None] | None = None,
                 stats: collections.Counter | None = None) -> list[Trajectory]:
    """Play `jobs` on `num_workers` Ray actors; returns the trajectories in job order.

    env_id, env_kwargs  how each actor makes its env (``gym.make``)
    agent               copied into each actor (pickled, then ``fork()``/deep copy)
    on_result           called with each trajectory as it finishes (in this thread)
    max_retries         dead workers tolerated per job before the collection fails
    actor_options       Ray options of the actors (default: ``num_cpus`` 1, or a share
                        of the free CPUs so that all actors fit)
    address             ``ray.init`` address when Ray is not initialised yet (None: a
                        local cluster with this machine's CPUs, no dashboard)
    worker_pids         called with the actors' pids once they are up (fault tests)
    stats               a Counter that receives "episodes", "retries" (jobs re-queued after a
                        worker died) and "dropped" (duplicate answers never delivered)
    """
    jobs = list(jobs)
    stats = stats if stats is not None else collections.Counter()
    if not jobs:
        return []
    ray = _ray()
    if not ray.is_initialized():
        if address is not None:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False)
    n = max(1, min(int(num_workers), len(jobs)))
    opts = dict(actor_options or {})
    opts.setdefault("num_cpus", _cpus_per_actor(n, None))
    opts["max_restarts"] = 0  # replaced by the driver, which also re-queues the job
    env_kwargs = dict(env_kwargs)

    def spawn():
        return _remote_worker().options(**opts).remote(env_id, env_kwargs, agent)

    actors = [spawn() for _ in range(n)]
    try:
        # a worker that cannot even make its env is a configuration error: raise it now
        pids = [i["pid"] for i in ray.get([a.info.remote() for a in actors])]
        if worker_pids is not None:
            worker_pids(pids)
        results = _drive(actors, spawn, jobs, on_result, max_retries, stats)
        return [results[j.episode_key] for j in jobs]
    finally:
        try:  # let the envs close their sandboxes, then make sure the actors are gone
            ray.get([a.close.remote() for a in actors], timeout=10)
        except Exception:
            pass
        for a in actors:
            _kill(a)


def _kill(actor: Any) -> None:
    try:
        _ray().kill(actor, no_restart=True)
    except Exception:
        pass


def _drive(actors: list[Any], spawn: Callable[[], Any], jobs: list[EpisodeJob],
           on_result: Callable[[Trajectory], None] | None, max_retries: int,
           stats: collections.Counter) -> dict[str, Trajectory]:
    """Give each idle actor the next job until every job has its result; replaces (in
    `actors`) an actor that died and plays its job again."""
    ray = _ray()
    results: dict[str, Trajectory] = {}
    queue: collections.deque[EpisodeJob] = collections.deque(jobs)
    failures: collections.Counter = collections.Counter()
    idle = list(actors)
    running: dict[Any, tuple[Any, EpisodeJob]] = {}  # ObjectRef -> (actor, job)
    while queue or running:
        while idle and queue:
            a, job = idle.pop(), queue.popleft()
            running[a.play.remote(job)] = (a, job)
        # short waits keep Ctrl-C responsive
        done, _ = ray.wait(list(running), num_returns=1, timeout=0.2)
        for ref in done:
            a, job = running.pop(ref)
            try:
                key, traj = ray.get(ref)
            except _worker_gone() as e:
                failures[job.episode_key] += 1
                stats["retries"] += 1
                if failures[job.episode_key] > max_retries:
                    raise RuntimeError(f"episode {job.episode_key}: {failures[job.episode_key]} workers "
                                       f"died playing it (last: {type(e).__name__})") from e
                _kill(a)
                actors.remove(a)
                new = spawn()
                actors.append(new)
                idle.append(new)
                queue.appendleft(job)  # played again from its start state, same seed
                continue
            except ray.exceptions.RayTaskError as e:
                # the env or the agent raised: the same error as the thread backend would
                raise e.as_instanceof_cause() from None
            idle.append(a)
            if key != job.episode_key or key in results:
                stats["dropped"] += 1
                continue  # never delivered twice
            results[key] = traj
            stats["episodes"] += 1
            if on_result is not None:
                on_result(traj)
    return results
