"""Rollouts on Ray: episodes as calls to Ray actors, each with its own env and agent copy.

Owns `run_jobs_ray` (what ``collect(..., backend="ray")`` calls) and the actor
class `EpisodeWorker`.

    >>> from codegym.rollout.collect import make_jobs
    >>> trajs = run_jobs_ray("codegym/Suite-v0", {"suite": "examples"}, OracleAgent(),
    ...                      jobs, num_workers=2, on_result=print)

Shape: ``num_workers`` actors, each making its env once (``gym.make(env_id,
**env_kwargs)``, so its sandbox and test cache warm up once) and holding its
own copy of the agent (``fork()`` or a deep copy, see
`codegym.rollout.collect.copy_agent`). The driver gives each idle actor the
next job (one episode at a time per actor: an episode is sequential), waits
for whichever finishes first and calls ``on_result(trajectory)`` in the
calling thread as each one finishes.

Faults: an actor that dies (process killed, node lost) is replaced by a fresh
one and its job goes back to the front of the queue, so it is played again
from its start state with its own seed (an episode is a pure function of its
job for a deterministic agent). Every job ends with exactly one result: an
answer for a job already answered is dropped (``on_result`` also dedupes by
episode key in `collect`). A job whose workers die ``max_retries`` times in a
row is an error, as is an exception raised by the env or agent (re-raised in
the caller, like the thread backend). On any exit the actors are killed.

Cluster: the running one (``ray.init`` done by the caller), else
``ray.init(address=...)``, else a local cluster with this machine's CPUs and no
dashboard, left running for later collections (Ray stops it at exit).
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Mapping, Sequence

import ray
import ray.exceptions as _rex

from codegym.rollout.collect import EpisodeJob, copy_agent, play_episode
from codegym.rollout.records import Trajectory

__all__ = ["run_jobs_ray", "EpisodeWorker"]

_WORKER_GONE: tuple[type[BaseException], ...] = tuple(
    c for c in (getattr(_rex, "RayActorError", None), getattr(_rex, "ActorDiedError", None),
                getattr(_rex, "ActorUnavailableError", None), getattr(_rex, "WorkerCrashedError", None),
                getattr(_rex, "NodeDiedError", None))
    if c is not None)


class EpisodeWorker:
    """A Ray actor playing episodes: one env (made once) and one agent copy."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any], agent: Any):
        import os

        import gymnasium as gym

        import codegym  # noqa: F401  (registers the env ids in this process)
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


_RemoteEpisodeWorker = ray.remote(EpisodeWorker)


def _cpus_per_actor(n: int, requested: float | None) -> float:
    """CPUs reserved per actor: 1, or a share of what is free so that all `n` fit."""
    if requested is not None:
        return float(requested)
    free = float(ray.available_resources().get("CPU", 0.0))
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
    if not ray.is_initialized():
        if address is not None:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            import os
            ray.init(num_cpus=os.cpu_count() or 2, include_dashboard=False, log_to_driver=False)
    n = max(1, min(int(num_workers), len(jobs)))
    opts = dict(actor_options or {})
    opts.setdefault("num_cpus", _cpus_per_actor(n, None))
    opts["max_restarts"] = 0  # replaced by the driver, which also re-queues the job
    env_kwargs = dict(env_kwargs)

    def spawn():
        return _RemoteEpisodeWorker.options(**opts).remote(env_id, env_kwargs, agent)

    actors = [spawn() for _ in range(n)]
    results: dict[str, Trajectory] = {}
    try:
        # a worker that cannot even make its env is a configuration error: raise it now
        pids = [i["pid"] for i in ray.get([a.info.remote() for a in actors])]
        if worker_pids is not None:
            worker_pids(pids)
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
                except _WORKER_GONE as e:
                    failures[job.episode_key] += 1
                    stats["retries"] += 1
                    if failures[job.episode_key] > max_retries:
                        raise RuntimeError(f"episode {job.episode_key}: {failures[job.episode_key]} workers "
                                           f"died playing it (last: {type(e).__name__})") from e
                    try:
                        ray.kill(a, no_restart=True)
                    except Exception:
                        pass
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
        return [results[j.episode_key] for j in jobs]
    finally:
        try:  # let the envs close their sandboxes, then make sure the actors are gone
            ray.get([a.close.remote() for a in actors], timeout=10)
        except Exception:
            pass
        for a in actors:
            try:
                ray.kill(a, no_restart=True)
            except Exception:
                pass
