"""Collecting trajectories: G episodes per task, in parallel, resumable from JSONL.

`collect(env, agent, tasks=..., group_size=G, num_envs=N, seed=S, out=FILE)` plays
G episodes of every task (one GRPO group: same task, same start state) with N
workers -- threads (default), spawned processes, or Ray actors
(`codegym.rollout.ray_collect`) -- and returns the `Trajectory` records ordered by
(group, sample index), whatever order they finished in. With ``out=FILE.jsonl``
each finished trajectory is appended as one whole line and a rerun resumes: the
file is repaired, its episodes are skipped. Jobs, ids and seeds:
`codegym.rollout.jobs`; one episode: `codegym.rollout.episode`. docs/rollout.md
explains the workers and resuming.
"""

from __future__ import annotations

import collections
import multiprocessing as mp
import os
import queue
import threading
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from codegym.envs.registration import register_envs
from codegym.rollout.episode import play_episode
from codegym.rollout.jobs import EpisodeJob, copy_agent, make_jobs
from codegym.rollout.ray_collect import run_jobs_ray
from codegym.rollout.records import Trajectory, append_jsonl, read_jsonl, repair_jsonl


class Collected(list[Trajectory]):
    """What `collect` returns: the trajectories (a list), and `stats` -- ``episodes``
    collected, ``infra_retries`` (episodes replayed because the judge failed), and
    ``no_sample`` (episodes dropped: the infrastructure failed every replay)."""

    def __init__(self, items=(), stats: dict | None = None):
        super().__init__(items)
        self.stats: dict = dict(stats or {})


# --------------------------------------------------------------------------- envs and tasks


def _safe_spec(env: Any) -> Any:
    """``env.spec``, or None when Gymnasium cannot produce it.

    (The env checker deep-copies the spec, which fails when the env was made with an
    object such as a sandbox instance among its kwargs.)"""
    try:
        with warnings.catch_warnings():  # Gymnasium warns (with the whole spec) before giving None
            warnings.simplefilter("ignore")
            return getattr(env, "spec", None)
    except Exception:
        return None


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


def _env_factory(env_id_or_env: Any,
                 env_kwargs: dict[str, Any]) -> tuple[Callable[[], gym.Env] | None, str | None, Any]:
    """(make another env, env id, what a process/Ray worker can rebuild the env from); no
    maker for an env that cannot be copied (`_run` refuses to need one)."""
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
        return None, raw_id, None
    fork = getattr(env.unwrapped, "fork", None)
    if callable(fork):
        return _with_suite_defaults(env, fork), raw_id, raw
    if raw is not None:
        return (lambda: gym.make(raw)), raw_id, raw
    return None, raw_id, None


def _only_bookkeeping_wrappers(env: Any) -> bool:
    """True when `env`'s wrappers are only those gym.make adds (checker, order enforcing, and
    the suite's default reward, which `_with_suite_defaults` puts on a copy again)."""
    while isinstance(env, gym.Wrapper):
        if not (isinstance(env, (OrderEnforcing, PassiveEnvChecker)) or getattr(env, "suite_default", False)):
            return False
        env = env.env
    return True


def _with_suite_defaults(env: Any, fork: Callable[[], gym.Env]) -> Callable[[], gym.Env]:
    """`fork` (a copy of the unwrapped env), wrapped again in `env`'s suite-default reward
    wrappers, with their arguments (innermost first)."""
    defaults: list[Any] = []  # (codegym's reward wrappers: their `_saved_kwargs`, `suite_default`)
    while isinstance(env, gym.Wrapper):
        if getattr(env, "suite_default", False):
            defaults.append(env)
        env = env.env
    if not defaults:
        return fork

    def make() -> gym.Env:
        copy: Any = fork()
        for w in reversed(defaults):
            copy = type(w)(copy, **{k: v for k, v in w._saved_kwargs.items() if k != "env"})
            copy.suite_default = True
        return copy
    return make


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
        self.stats: collections.Counter = collections.Counter()
        self.skipped: set[str] = set()  # episodes that are no sample (see `play_episode`)

    def __call__(self, traj: Trajectory) -> None:
        with self.lock:
            if self.closed:
                return  # interrupted: results arriving after the stop are not recorded
            key = traj.episode_key
            if key not in self.wanted or key in self.done or key in self.skipped:
                return  # a retried duplicate (e.g. Ray) is recorded once
            self.stats["infra_retries"] += int(traj.metadata.get("infra_retries") or 0)
            if traj.metadata.get("no_sample"):  # the judge failed every replay: not a sample
                self.stats["no_sample"] += 1
                self.skipped.add(key)
                if self.bar is not None:
                    self.bar.update(self.task_ref, advance=1)
                return
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
            if wi < len(given):
                env = given[wi]
            else:
                assert make_env is not None  # (`_run` refused more workers than envs without one)
                env = make_env()
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
    register_envs()  # a fresh interpreter (registration also runs when this module is imported)
    env = gym.make(env_src, **env_kwargs) if isinstance(env_src, str) else gym.make(env_src)
    _PROC_STATE.update(env=env, agent=copy_agent(agent))


def _proc_play(job: EpisodeJob, env_id: str | None) -> Trajectory:
    return play_episode(_PROC_STATE["env"], _PROC_STATE["agent"], job, env_id)


def _run_processes(env_src: Any, env_kwargs: dict[str, Any], agent: Any, jobs: Sequence[EpisodeJob],
                   num_envs: int, env_id: str | None, sink: _Sink) -> None:
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


def _previous(out_path: Path | None, wanted: set[str], agent_name: str) -> dict[str, Trajectory]:
    """The wanted episodes already in `out_path` (repaired first: a cut last line goes)."""
    previous: dict[str, Trajectory] = {}
    if out_path is not None and out_path.exists():
        repair_jsonl(out_path)
        for t in read_jsonl(out_path):
            if t.episode_key in wanted:
                if t.agent != agent_name:
                    raise ValueError(f"{out_path} holds episode {t.episode_key} of agent {t.agent!r}, "
                                     f"not {agent_name!r}: use another out file (or seed)")
                previous.setdefault(t.episode_key, t)
    return previous


def _run(backend: str, workers: str, make_env: Callable[[], gym.Env] | None, given: Sequence[gym.Env],
         env_src: Any, env_kwargs: dict[str, Any], agent: Any, todo: Sequence[EpisodeJob], num_envs: int,
         env_id: str | None, sink: _Sink) -> None:
    if backend == "ray":
        _run_ray(env_src, env_kwargs, agent, todo, num_envs, sink)
    elif workers == "process":
        _run_processes(env_src, env_kwargs, agent, todo, num_envs, env_id, sink)
    else:
        if make_env is None and num_envs > len(given):
            raise ValueError("num_envs > 1 needs an env id, an env whose spec Gymnasium "
                             "can copy, an unwrapped env with fork(), or a list of envs")
        _run_threads(make_env, given, agent, todo, num_envs, env_id, sink)


def collect(env_id_or_env: str | gym.Env | list[gym.Env] | tuple[gym.Env, ...], agent: Any, tasks: Any = None,
            group_size: int = 1, num_envs: int = 1, seed: int = 0, out: str | Path | None = None,
            env_kwargs: dict[str, Any] | None = None, progress: bool = True, backend: str = "local",
            max_episodes: int | None = None, workers: str = "thread") -> Collected:
    """Play `group_size` episodes of each task; returns them ordered by (group, sample index)
    (a `Collected` list: its `stats` count the episodes the infrastructure made replay or drop).

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
    register_envs()

    given: list[gym.Env] = []
    if isinstance(env_id_or_env, (list, tuple)):
        given = list(env_id_or_env)
        if not given:
            raise ValueError("collect needs at least one env")
        num_envs = max(num_envs, len(given))
        env_id_or_env = given[0]
    own_first = isinstance(env_id_or_env, str)
    if isinstance(env_id_or_env, str) or backend == "ray" or workers == "process" or num_envs > max(1, len(given)):
        make_env, env_id, env_src = _env_factory(env_id_or_env, env_kwargs)
    else:
        # every worker plays one of the given envs: no copy of the env is made, and
        # Gymnasium's wrapper spec (a deep copy of the env's kwargs, tasks included:
        # ~35 ms per call here) is not needed; the unwrapped env's spec names the id
        make_env, env_src = None, None
        env_id = getattr(getattr(env_id_or_env.unwrapped, "spec", None), "id", None)
    if isinstance(env_id_or_env, str):
        assert make_env is not None  # (an env id always gives one: `_env_factory`)
        first_env = make_env()
    else:
        first_env = env_id_or_env
    given = given or [first_env]
    try:
        jobs = make_jobs(_resolve_tasks(first_env, tasks, seed), group_size, seed)
        if max_episodes is not None:
            jobs = jobs[:max(0, int(max_episodes))]
        keys = [j.episode_key for j in jobs]
        wanted = set(keys)

        out_path = Path(out) if out is not None else None
        previous = _previous(out_path, wanted, str(getattr(agent, "name", type(agent).__name__)))
        todo = [j for j in jobs if j.episode_key not in previous]

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
                    _run(backend, workers, make_env, given, env_src, env_kwargs, agent, todo, num_envs,
                         env_id, sink)
            finally:
                sink.close()
        missing = [k for k in keys if k not in sink.done and k not in sink.skipped]
        if missing:
            raise RuntimeError(f"{len(missing)} episode(s) were not collected (e.g. {missing[0]})")
        done = [sink.done[k] for k in keys if k in sink.done]
        return Collected(done, {"episodes": len(done), "infra_retries": sink.stats["infra_retries"],
                                "no_sample": sink.stats["no_sample"]})
    finally:
        if own_first:
            first_env.close()
