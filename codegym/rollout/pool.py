"""`EnvPool`: envs stepped independently, in their own threads; take the first k finished.

Gymnasium's vector envs step in lockstep, so one slow test run holds back every env.
Here each env has its own worker thread (the judge's time is spent in sandbox
subprocesses, with the GIL free); the caller submits work per env and `wait` returns
``(i, result)`` pairs in completion order (`EnvPoolError` names an env that raised).

    pool = EnvPool.from_id("codegym/Suite-v0", 4, suite="examples")
    pool.reset_async(seed=[0, 1, 2, 3])
    for i, (obs, info) in pool.wait():          # all four resets
        pool.step_async(i, policy(obs, info))
    first_two = pool.wait(k=2)                  # the two steps that finished first
    pool.close()
"""

from __future__ import annotations

import collections
import functools
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from codegym.envs.registration import register_envs

_STOP = object()


class EnvPoolError(RuntimeError):
    """An env of the pool raised; `index` is the env, `__cause__` the original exception."""

    def __init__(self, index: int, op: str, error: BaseException):
        super().__init__(f"env {index} raised during {op}: {type(error).__name__}: {error}")
        self.index = index
        self.op = op


def _reset(env: gym.Env, *, seed: int | None, options: dict | None) -> Any:
    return env.reset(seed=seed, options=options)


class _Worker(threading.Thread):
    def __init__(self, index: int, env_fn: Callable[[], gym.Env], done: queue.Queue):
        super().__init__(name=f"codegym-envpool-{index}", daemon=True)
        self.index = index
        self.env_fn = env_fn
        self.env: gym.Env | None = None
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.done = done
        self.ready = threading.Event()
        self.init_error: BaseException | None = None

    def run(self) -> None:
        try:
            self.env = self.env_fn()  # built in its own thread: envs may start sandboxes lazily
        except BaseException as e:
            self.init_error = e
        self.ready.set()
        while True:
            item = self.inbox.get()
            if item is _STOP:
                break
            op, fn = item
            try:
                if self.init_error is not None:
                    raise self.init_error
                result: Any = fn(self.env)
                self.done.put((self.index, op, True, result))
            except BaseException as e:
                self.done.put((self.index, op, False, e))
        if self.env is not None:
            try:
                self.env.close()
            except Exception:
                pass


class EnvPool:
    """N envs, each in its own worker thread; submit per env, `wait` for the first k.

    Args:
        env_fns: callables that build the envs (called in the workers).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]]):
        if not env_fns:
            raise ValueError("EnvPool needs at least one env")
        self._done: queue.Queue = queue.Queue()
        self._workers = [_Worker(i, fn, self._done) for i, fn in enumerate(env_fns)]
        for w in self._workers:
            w.start()
        for w in self._workers:
            w.ready.wait()
        self._in_flight: dict[int, str] = {}
        self._buffer: collections.deque = collections.deque()
        self._closed = False
        errors = [(w.index, w.init_error) for w in self._workers if w.init_error is not None]
        if errors:
            self.close()
            index, error = errors[0]
            raise EnvPoolError(index, "construction", error) from error

    @classmethod
    def from_id(cls, env_id: str, num_envs: int, **kwargs: Any) -> EnvPool:
        """`num_envs` envs ``gym.make(env_id, **kwargs)``."""
        register_envs()
        return cls([lambda: gym.make(env_id, **kwargs) for _ in range(num_envs)])

    # ------------------------------------------------------------------ state

    @property
    def num_envs(self) -> int:
        return len(self._workers)

    @property
    def in_flight(self) -> list[int]:
        """Envs with a submitted call whose result `wait` has not returned yet."""
        return sorted(self._in_flight)

    @property
    def idle(self) -> list[int]:
        """Envs free to take a call."""
        return [i for i in range(self.num_envs) if i not in self._in_flight]

    def env(self, i: int) -> gym.Env:
        """Env `i` (only touch it while it is idle)."""
        if i in self._in_flight:
            raise RuntimeError(f"env {i} is busy ({self._in_flight[i]})")
        env = self._workers[i].env
        assert env is not None  # (every env was made, or the pool's construction raised)
        return env

    # ------------------------------------------------------------------ submitting

    def _submit(self, i: int, op: str, fn: Callable[[gym.Env], Any]) -> None:
        if self._closed:
            raise RuntimeError("the pool is closed")
        if not 0 <= i < self.num_envs:
            raise IndexError(f"env index {i} out of range (pool of {self.num_envs})")
        if i in self._in_flight:
            raise RuntimeError(f"env {i} is busy ({self._in_flight[i]}); wait() for it first")
        self._in_flight[i] = op
        self._workers[i].inbox.put((op, fn))

    def reset_async(self, i: int | Sequence[int] | None = None,
                    seed: int | list[int | None] | tuple[int | None, ...] | None = None,
                    options: dict | list[dict | None] | tuple[dict | None, ...] | None = None) -> None:
        """Reset env `i` (or the listed envs, or all when None); `seed`/`options` per env or shared."""
        idx = list(range(self.num_envs)) if i is None else [i] if isinstance(i, int) else list(i)
        seeds = list(seed) if isinstance(seed, (list, tuple)) else [seed] * len(idx)
        opts = list(options) if isinstance(options, (list, tuple)) else [options] * len(idx)
        if len(seeds) != len(idx) or len(opts) != len(idx):
            raise ValueError("one seed/options per env reset")
        for j, s, o in zip(idx, seeds, opts):
            self._submit(j, "reset", functools.partial(_reset, seed=s, options=o))

    def step_async(self, i: int, action: Any) -> None:
        """Step env `i` with `action`."""
        self._submit(i, "step", lambda env: env.step(action))

    def call_async(self, i: int, fn: Callable[[gym.Env], Any], name: str = "call") -> None:
        """Run ``fn(env)`` in env `i`'s worker (e.g. to read an attribute safely)."""
        self._submit(i, name, fn)

    # ------------------------------------------------------------------ collecting

    def wait(self, k: int | None = None, timeout: float | None = None) -> list[tuple[int, Any]]:
        """The first `k` results to finish among the calls in flight (all of them when None).

        Returns ``[(i, result), ...]`` in completion order; with `timeout` (seconds) it
        returns what finished by then, possibly fewer than k (or none)."""
        pending = len(self._in_flight)
        k = pending if k is None else min(int(k), pending)
        got: list[tuple[int, str, bool, Any]] = []
        while self._buffer and len(got) < k:
            got.append(self._buffer.popleft())
        deadline = None if timeout is None else time.monotonic() + timeout
        while len(got) < k:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            try:
                got.append(self._done.get(timeout=remaining))
            except queue.Empty:
                break
        for i, _, _, _ in got:
            self._in_flight.pop(i, None)
        failed = next((g for g in got if not g[2]), None)
        if failed is not None:
            # keep the other finished results for the next wait(); their envs stay "in flight"
            # until then so nobody submits to them unaware of their results
            for g in got:
                if g is not failed:
                    self._in_flight[g[0]] = g[1]
                    self._buffer.append(g)
            i, op, _, error = failed
            raise EnvPoolError(i, op, error) from error
        return [(i, result) for i, _, _, result in got]

    def step_wait(self, actions: dict[int, Any], k: int | None = None,
                  timeout: float | None = None) -> list[tuple[int, Any]]:
        """Submit steps ``{i: action}`` then `wait` for the first k."""
        for i, a in actions.items():
            self.step_async(i, a)
        return self.wait(k, timeout)

    # ------------------------------------------------------------------ lifetime

    def close(self, timeout: float | None = 30.0) -> None:
        """Stop the workers (after their current call) and close the envs; idempotent."""
        if self._closed:
            return
        self._closed = True
        for w in self._workers:
            w.inbox.put(_STOP)
        for w in self._workers:
            w.join(timeout)

    def __enter__(self) -> EnvPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close(timeout=0)
        except Exception:
            pass
