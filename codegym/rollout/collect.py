"""Collecting trajectories: G episodes per task, in parallel, resumable from JSONL.

`collect(env, agent, tasks=..., group_size=G, num_envs=N, seed=S, out=FILE)` plays
G episodes of every task (one GRPO group: same task, same start state) with N
workers and returns the `Trajectory` records ordered by (group, sample index),
whatever order they finished in.

- Jobs. Each episode is an `EpisodeJob`. A group id is a pure function of the
  task id, the task's content hash, the collection seed and the task's
  occurrence in the task list, and an episode's seed a pure function of its
  group id and sample index, so a resumed run computes the same ids and seeds.
- Workers. ``workers="thread"`` (default): N threads, each with its own env
  (``gym.make``) and its own agent copy (``agent.fork()`` if the agent has it,
  else ``copy.deepcopy``). The judge's time is spent in sandbox subprocesses,
  which run while other threads hold the GIL, so threads overlap on judge-bound
  suites (see ``benchmarks/rollout_throughput.py``). ``workers="process"``: the
  same in N spawned processes, for agents or wrappers that are CPU-bound in
  Python. ``backend="ray"``: jobs become Ray tasks
  (`codegym.rollout.ray_collect.run_jobs_ray`).
- Resuming. With ``out=FILE.jsonl`` every finished trajectory is appended as one
  whole line (one ``write``, then ``fsync``) by the collecting thread only. On
  start the file is repaired (a truncated last line from an interrupted write is
  cut off), its episode keys are read and those episodes are skipped, so an
  interrupted run resumed with the same arguments ends with every episode
  exactly once, equal to an uninterrupted run when the agent is deterministic.

`play_episode(env, agent, job)` plays one job and builds its record; it is a
module-level function so Ray and process workers can call it.
"""

from __future__ import annotations

import copy
import hashlib
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import gymnasium as gym

from codegym.rollout.records import (Step, Trajectory, append_jsonl, jsonable, read_jsonl,
                                     repair_jsonl, state_hash)

__all__ = ["EpisodeJob", "play_episode", "collect", "make_jobs", "group_id_for", "episode_seed",
           "copy_agent"]

#: info keys stored in their own `Step` fields (or too large to repeat every step)
_STEP_FIELD_KEYS = frozenset({"files", "diff", "diff_units", "error", "judge", "reward_components",
                              "cumulative_diff", "task_id", "task_hash", "language", "main_file"})
#: keys of an agent's `last_turn` stored in their own `Step` fields
_TURN_FIELD_KEYS = ("prompt_ids", "response_ids", "logprobs", "messages")


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
    h = hashlib.sha256(f"{group_id}/{sample_index}".encode("utf-8")).digest()
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


# --------------------------------------------------------------------------- one episode


def _safe_spec(env: Any) -> Any:
    """``env.spec``, or None when Gymnasium cannot produce it.

    (The env checker deep-copies the spec, which fails when the env was made with an
    object such as a sandbox instance among its kwargs.)"""
    import warnings
    try:
        with warnings.catch_warnings():  # Gymnasium warns (with the whole spec) before giving None
            warnings.simplefilter("ignore")
            return getattr(env, "spec", None)
    except Exception:
        return None


def _clear_last_turn(agent: Any) -> None:
    # a stale `last_turn` from the previous act() must not be attributed to this step
    if getattr(agent, "last_turn", None) is not None:
        try:
            agent.last_turn = None
        except AttributeError:
            pass


def _make_step(index: int, observation: str, action: str, reward: float, terminated: bool,
               truncated: bool, info: dict[str, Any], pre_files: Any,
               turn: dict[str, Any] | None) -> Step:
    turn = turn if isinstance(turn, dict) else {}
    other = {k: v for k, v in info.items() if k not in _STEP_FIELD_KEYS}
    for k, v in turn.items():
        if k not in _TURN_FIELD_KEYS:
            other[k] = v  # finish_reason, usage, ...
    judge = info.get("judge")
    return Step(
        index=index,
        observation=observation,
        action=action,
        reward=float(reward),
        prompt_ids=[int(t) for t in turn["prompt_ids"]] if turn.get("prompt_ids") is not None else None,
        response_ids=[int(t) for t in turn["response_ids"]] if turn.get("response_ids") is not None else None,
        logprobs=[float(x) for x in turn["logprobs"]] if turn.get("logprobs") is not None else None,
        messages=jsonable(turn["messages"]) if turn.get("messages") is not None else None,
        diff=info.get("diff") or "",
        diff_units=jsonable(info.get("diff_units") or []),
        error=info.get("error"),
        judge=jsonable(judge) if judge is not None else None,
        reward_components=jsonable(info["reward_components"]) if info.get("reward_components") is not None else None,
        pre_state=state_hash(pre_files),
        terminated=bool(terminated),
        truncated=bool(truncated),
        info=jsonable(other),
    )


def play_episode(env: gym.Env, agent: Any, job: EpisodeJob, env_id: str | None = None) -> Trajectory:
    """Play `job` on `env` with `agent` and return its `Trajectory`.

    The env is reset with ``seed=job.seed`` and ``options={"task_id": job.task_id}``;
    the agent with ``reset(task=env.unwrapped.task, seed=job.seed)``. Token ids,
    log-probs and messages come from the agent's optional ``last_turn`` after each
    ``act``; ``pre_state`` hashes the workspace files the step started from."""
    t0 = time.perf_counter()
    obs, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
    if info.get("task_id") not in (None, job.task_id):
        raise RuntimeError(f"env reset to task {info.get('task_id')!r}, expected {job.task_id!r}")
    if job.task_hash and info.get("task_hash") not in (None, job.task_hash):
        raise RuntimeError(f"task {job.task_id} changed since the jobs were made "
                           f"(hash {info.get('task_hash')} != {job.task_hash})")
    base = env.unwrapped
    agent.reset(task=getattr(base, "task", None), seed=job.seed)
    pre_files = info.get("files")
    steps: list[Step] = []
    terminated = truncated = False
    last_info = info
    while not (terminated or truncated):
        _clear_last_turn(agent)
        action = agent.act(obs, last_info)
        turn = getattr(agent, "last_turn", None)
        next_obs, reward, terminated, truncated, step_info = env.step(action)
        steps.append(_make_step(len(steps), obs, action, reward, terminated, truncated,
                                step_info, pre_files, turn))
        pre_files = step_info.get("files", pre_files)
        obs, last_info = next_obs, step_info
    judge = last_info.get("judge") or None
    final = bool(last_info.get("submitted")) or (judge is not None and judge.get("split") not in (None, "public"))
    metadata: dict[str, Any] = {
        "language": info.get("language"),
        "main_file": info.get("main_file"),
        "turns": len(steps),
        "terminated": bool(terminated),
        "truncated": bool(truncated),
        "final_observation": obs,
        "cumulative_diff": last_info.get("cumulative_diff", ""),
        "final_state": state_hash(last_info.get("files", pre_files)),
        "episode_s": time.perf_counter() - t0,
    }
    mutation = getattr(agent, "last_mutation", None)
    if mutation:
        metadata["mutation"] = dict(mutation)
    if env_id is None:
        # the raw env's spec attribute: its id is all that is needed, and no copy is made
        env_id = getattr(getattr(getattr(env, "unwrapped", env), "spec", None), "id", None)
    return Trajectory(
        task_id=job.task_id,
        task_hash=str(info.get("task_hash") or job.task_hash or ""),
        group_id=job.group_id,
        sample_index=job.sample_index,
        env_id=env_id,
        agent=str(getattr(agent, "name", type(agent).__name__)),
        seed=job.seed,
        steps=steps,
        final_reward=steps[-1].reward if steps else 0.0,
        total_reward=float(sum(s.reward for s in steps)),
        reward_components=dict(steps[-1].reward_components or {}) if steps else {},
        verdict=judge.get("verdict") if (judge and final) else None,
        metadata=jsonable(metadata),
    )


# --------------------------------------------------------------------------- collection


def _resolve_tasks(env: gym.Env, tasks: Any, seed: int) -> list[Any]:
    base = env.unwrapped
    available = list(getattr(base, "tasks", None) or [])
    if not available:
        raise ValueError("collect needs an env with a task list (env.unwrapped.tasks)")
    by_id = {t.id: t for t in available}
    if tasks is None:
        return available
    if isinstance(tasks, int):
        import numpy as np
        if not 1 <= tasks <= len(available):
            raise ValueError(f"tasks={tasks}: the env has {len(available)} tasks")
        order = np.random.default_rng(seed).permutation(len(available))[:tasks]
        return [available[i] for i in sorted(order)]
    if isinstance(tasks, str):
        tasks = [tasks]
    out = []
    for t in tasks:
        tid = t if isinstance(t, str) else getattr(t, "id", None)
        if tid not in by_id:
            raise KeyError(f"unknown task {tid!r}; this env has {len(available)} tasks "
                           f"(e.g. {', '.join(list(by_id)[:5])})")
        out.append(by_id[tid])
    return out


def _env_factory(env_id_or_env: Any, env_kwargs: dict[str, Any]) -> tuple[Callable[[], gym.Env], str | None, Any]:
    """(make another env, env id, what a process/Ray worker can rebuild the env from)."""
    if isinstance(env_id_or_env, str):
        return (lambda: gym.make(env_id_or_env, **env_kwargs)), env_id_or_env, env_id_or_env
    env = env_id_or_env
    spec = _safe_spec(env)
    if spec is not None:
        return (lambda: gym.make(spec)), spec.id, spec
    raw = _safe_spec(env.unwrapped)
    raw_id = getattr(raw, "id", None)
    if not _only_bookkeeping_wrappers(env):
        # a copy without the user's wrappers would compute other rewards: refuse instead
        return None, raw_id, None  # type: ignore[return-value]
    fork = getattr(env.unwrapped, "fork", None)
    if callable(fork):
        return fork, raw_id, raw
    if raw is not None:
        return (lambda: gym.make(raw)), raw_id, raw
    return None, raw_id, None  # type: ignore[return-value]


def _only_bookkeeping_wrappers(env: Any) -> bool:
    """True when `env`'s wrappers are only those gym.make adds (checker, order enforcing)."""
    from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker
    while isinstance(env, gym.Wrapper):
        if not isinstance(env, (OrderEnforcing, PassiveEnvChecker)):
            return False
        env = env.env
    return True


class _Sink:
    """Receives finished trajectories: stores them, appends them to `out`, moves the bar.

    Called from one thread at a time (the collecting thread, or under its lock)."""

    def __init__(self, out: Path | None, wanted: set[str], bar: Any, task_ref: Any):
        self.out = out
        self.wanted = wanted
        self.bar = bar
        self.task_ref = task_ref
        self.done: dict[str, Trajectory] = {}
        self.lock = threading.Lock()
        self.closed = False
        self._fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if out else None
        self._rewards: list[float] = []

    def __call__(self, traj: Trajectory) -> None:
        with self.lock:
            if self.closed:
                return  # interrupted: results arriving after the stop are not recorded
            key = traj.episode_key
            if key not in self.wanted or key in self.done:
                return  # a retried duplicate (e.g. Ray) is recorded once
            if self._fd is not None:
                append_jsonl(self._fd, traj)
            self.done[key] = traj
            self._rewards.append(traj.final_reward)
            if self.bar is not None:
                mean = sum(self._rewards) / len(self._rewards)
                self.bar.update(self.task_ref, advance=1, reward=f"{mean:.3f}")

    def close(self) -> None:
        with self.lock:
            self.closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _run_threads(make_env: Callable[[], gym.Env] | None, given: Sequence[gym.Env], agent: Any,
                 jobs: Sequence[EpisodeJob], num_envs: int, env_id: str | None, sink: _Sink) -> None:
    """`num_envs` threads; the first ones use the `given` envs, the others make theirs."""
    pending: queue.SimpleQueue = queue.SimpleQueue()
    for j in jobs:
        pending.put(j)
    results: queue.Queue = queue.Queue()
    stop = threading.Event()
    n = max(1, min(num_envs, len(jobs)))

    def worker(wi: int) -> None:
        env = None
        try:
            env = given[wi] if wi < len(given) else make_env()  # type: ignore[misc]
            ag = copy_agent(agent)
            while not stop.is_set():
                try:
                    job = pending.get_nowait()
                except queue.Empty:
                    break
                results.put(("ok", play_episode(env, ag, job, env_id)))
        except BaseException as e:  # surfaced in the collecting thread
            results.put(("error", e))
        finally:
            if env is not None and wi >= len(given):
                env.close()
            results.put(("exit", wi))

    threads = [threading.Thread(target=worker, args=(i,), name=f"codegym-collect-{i}", daemon=True)
               for i in range(n)]
    for t in threads:
        t.start()
    alive = n
    error: BaseException | None = None
    try:
        while alive:
            try:
                kind, value = results.get(timeout=0.2)  # short waits keep Ctrl-C responsive
            except queue.Empty:
                continue
            if kind == "ok":
                sink(value)
            elif kind == "error":
                error = error or value
                stop.set()
            else:
                alive -= 1
    except BaseException:
        stop.set()  # workers finish their current episode, whose result is dropped
        sink.close()
        raise
    if error is not None:
        raise error


# ----- process workers: one env and one agent copy per spawned process

_PROC_STATE: dict[str, Any] = {}


def _proc_init(env_src: Any, env_kwargs: dict[str, Any], agent: Any) -> None:
    import codegym  # noqa: F401  (registers the ids in the fresh interpreter)
    env = gym.make(env_src, **env_kwargs) if isinstance(env_src, str) else gym.make(env_src)
    _PROC_STATE.update(env=env, agent=copy_agent(agent))


def _proc_play(job: EpisodeJob, env_id: str | None) -> Trajectory:
    return play_episode(_PROC_STATE["env"], _PROC_STATE["agent"], job, env_id)


def _run_processes(env_src: Any, env_kwargs: dict[str, Any], agent: Any, jobs: Sequence[EpisodeJob],
                   num_envs: int, env_id: str | None, sink: _Sink) -> None:
    import multiprocessing as mp
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    if env_src is None:
        raise ValueError("workers='process' needs an env id or an env with a spec")
    n = max(1, min(num_envs, len(jobs)))
    # spawn, not fork: the parent holds sandbox threads and pipes that a fork would copy
    pool = ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn"),
                               initializer=_proc_init, initargs=(env_src, env_kwargs, agent))
    finished = False
    try:
        futures = {pool.submit(_proc_play, j, env_id) for j in jobs}
        while futures:
            done, futures = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                sink(f.result())
        finished = True
    except BaseException:
        sink.close()
        raise
    finally:
        # on an error or Ctrl-C, do not wait for the episodes in progress
        pool.shutdown(wait=finished, cancel_futures=True)


def _run_ray(env_src: Any, env_kwargs: dict[str, Any], agent: Any, jobs: Sequence[EpisodeJob],
             num_envs: int, sink: _Sink) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        raise RuntimeError("backend='ray' needs ray: pip install 'codegym[ray]'") from None
    try:
        from codegym.rollout.ray_collect import run_jobs_ray
    except ImportError as e:
        raise RuntimeError(f"backend='ray' is not available in this installation: {e}") from None
    if not isinstance(env_src, str):
        spec = env_src
        env_src = getattr(spec, "id", None)
        if env_src is None:
            raise ValueError("backend='ray' needs an env id (or an env made with gym.make)")
        # an env made with gym.make(id, **kw): the actors rebuild it from its id and kwargs
        # (wrappers added afterwards are not carried over)
        env_kwargs = {**dict(getattr(spec, "kwargs", None) or {}), **env_kwargs}
    try:
        run_jobs_ray(env_src, dict(env_kwargs), agent, list(jobs), num_envs, sink)
    except BaseException:
        sink.close()
        raise


def collect(env_id_or_env: str | gym.Env | Sequence[gym.Env], agent: Any, tasks: Any = None, group_size: int = 1,
            num_envs: int = 1, seed: int = 0, out: str | Path | None = None,
            env_kwargs: dict[str, Any] | None = None, progress: bool = True, backend: str = "local",
            max_episodes: int | None = None, workers: str = "thread") -> list[Trajectory]:
    """Play `group_size` episodes of each task; returns them ordered by (group, sample index).

    Args:
        env_id_or_env: a registered id (``"codegym/Suite-v0"``), an env made with
            ``gym.make`` (other workers rebuild it from its spec), or a list of envs
            (one per thread worker; `num_envs` defaults to their number).
        agent: object with ``reset(task, seed)``/``act(obs, info)`` (and optionally
            ``fork()``, ``last_turn``); each worker plays with its own copy.
        tasks: None (all of the env's tasks), a list of task ids or `Task`s (a task
            listed twice forms two groups), or an int n (n tasks drawn with `seed`).
        group_size: G, episodes per task (one GRPO group).
        num_envs: parallel workers, each with its own env.
        seed: collection seed (part of the group ids and the episode seeds).
        out: JSONL file; finished trajectories are appended as they come and a rerun
            resumes from it (episodes already there are not played again).
        env_kwargs: keyword arguments of ``gym.make`` (with an env id).
        progress: show a rich progress bar.
        backend: ``"local"`` (threads or processes, see `workers`) or ``"ray"``.
        max_episodes: play only the first n jobs (in (group, sample) order).
        workers: ``"thread"`` or ``"process"`` (local backend).
    """
    env_kwargs = dict(env_kwargs or {})
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', not {backend!r}")
    if workers not in ("thread", "process"):
        raise ValueError(f"workers must be 'thread' or 'process', not {workers!r}")
    if num_envs < 1:
        raise ValueError("num_envs must be >= 1")
    import codegym  # noqa: F401  (registers the ids)

    given: list[gym.Env] = []
    if isinstance(env_id_or_env, (list, tuple)):
        given = list(env_id_or_env)
        if not given:
            raise ValueError("collect needs at least one env")
        num_envs = max(num_envs, len(given))
        env_id_or_env = given[0]
    own_first = isinstance(env_id_or_env, str)
    if own_first or backend == "ray" or workers == "process" or num_envs > max(1, len(given)):
        make_env, env_id, env_src = _env_factory(env_id_or_env, env_kwargs)
    else:
        # every worker plays one of the given envs: no copy of the env is made, and
        # Gymnasium's wrapper spec (a deep copy of the env's kwargs, tasks included:
        # ~35 ms per call here) is not needed; the unwrapped env's spec names the id
        make_env, env_src = None, None
        env_id = getattr(getattr(env_id_or_env.unwrapped, "spec", None), "id", None)
    first_env = make_env() if own_first else env_id_or_env
    given = given or [first_env]
    try:
        jobs = make_jobs(_resolve_tasks(first_env, tasks, seed), group_size, seed)
        if max_episodes is not None:
            jobs = jobs[:max(0, int(max_episodes))]
        keys = [j.episode_key for j in jobs]
        wanted = set(keys)

        out_path = Path(out) if out is not None else None
        previous: dict[str, Trajectory] = {}
        if out_path is not None and out_path.exists():
            repair_jsonl(out_path)
            agent_name = str(getattr(agent, "name", type(agent).__name__))
            for t in read_jsonl(out_path):
                if t.episode_key in wanted:
                    if t.agent != agent_name:
                        raise ValueError(f"{out_path} holds episode {t.episode_key} of agent {t.agent!r}, "
                                         f"not {agent_name!r}: use another out file (or seed)")
                    previous.setdefault(t.episode_key, t)
        todo = [j for j in jobs if j.episode_key not in previous]

        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)
        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("mean reward {task.fields[reward]}"), TimeElapsedColumn(),
                   TimeRemainingColumn())
        with Progress(*columns, disable=not progress) as bar:
            ref = bar.add_task(f"collect {env_id or 'env'}", total=len(jobs),
                               completed=len(jobs) - len(todo), reward="-")
            sink = _Sink(out_path, wanted, bar, ref)
            sink.done.update(previous)
            try:
                if todo:
                    if backend == "ray":
                        _run_ray(env_src, env_kwargs, agent, todo, num_envs, sink)
                    elif workers == "process":
                        _run_processes(env_src, env_kwargs, agent, todo, num_envs, env_id, sink)
                    else:
                        if make_env is None and num_envs > len(given):
                            raise ValueError("num_envs > 1 needs an env id, an env whose spec Gymnasium "
                                             "can copy, an unwrapped env with fork(), or a list of envs")
                        _run_threads(make_env, given, agent, todo, num_envs, env_id, sink)
            finally:
                sink.close()
        missing = [k for k in keys if k not in sink.done]
        if missing:
            raise RuntimeError(f"{len(missing)} episode(s) were not collected (e.g. {missing[0]})")
        return [sink.done[k] for k in keys]
    finally:
        if own_first:
            first_env.close()
