"""Tests of codegym.rollout.pool.EnvPool (first-k semantics) and of gym.make_vec on heavy suites."""

from __future__ import annotations

import threading

import gymnasium as gym
import numpy as np
import pytest

import codegym  # noqa: F401  (registers the ids)
from codegym.agents import OracleAgent
from codegym.core.spaces import CodeText
from codegym.edits.render import render_action
from codegym.rollout import EnvPool
from codegym.rollout.pool import EnvPoolError


class GateEnv(gym.Env):
    """A tiny env whose step blocks until its gate opens (a straggler on demand).

    The action is a dict: ``{"gate": threading.Event | None, "fail": bool}``."""

    def __init__(self, name: int):
        self.name = name
        self.observation_space = CodeText(100)
        self.action_space = CodeText(100)
        self.thread_names: set[str] = set()
        self.closed = False

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.thread_names.add(threading.current_thread().name)
        return f"env{self.name} seed{seed}", {"options": options}

    def step(self, action):
        self.thread_names.add(threading.current_thread().name)
        if action.get("gate") is not None:
            assert action["gate"].wait(30), "gate never opened"
        if action.get("fail"):
            raise ValueError(f"env{self.name} failed")
        return f"stepped{self.name}", float(self.name), True, False, {}

    def close(self):
        self.closed = True


def make_pool(n: int) -> EnvPool:
    return EnvPool([lambda i=i: GateEnv(i) for i in range(n)])


def test_first_k_with_a_straggler():
    with make_pool(3) as pool:
        pool.reset_async(seed=[10, 11, 12], options={"x": 1})
        resets = dict(pool.wait())
        assert resets == {i: (f"env{i} seed{10 + i}", {"options": {"x": 1}}) for i in range(3)}
        assert pool.in_flight == [] and pool.idle == [0, 1, 2]
        gate = threading.Event()
        pool.step_async(0, {"gate": gate})        # the straggler
        pool.step_async(1, {})
        pool.step_async(2, {})
        first = pool.wait(k=2)                    # returns without waiting for env 0
        assert sorted(i for i, _ in first) == [1, 2]
        assert dict(first)[1] == ("stepped1", 1.0, True, False, {})
        assert pool.in_flight == [0]
        with pytest.raises(RuntimeError, match="busy"):
            pool.step_async(0, {})
        assert pool.wait(k=1, timeout=0.05) == []  # still blocked: nothing within the timeout
        pool.step_async(1, {})                    # a finished env can go on meanwhile
        assert [i for i, _ in pool.wait(k=1)] == [1]
        gate.set()
        assert [i for i, _ in pool.wait()] == [0]
        assert pool.wait() == []                  # nothing in flight
        # each env ran in its own worker thread, always the same one
        names = [pool.env(i).thread_names for i in range(3)]
        assert all(len(n) == 1 for n in names) and len(set.union(*names)) == 3
        envs = [pool.env(i) for i in range(3)]
    assert all(e.closed for e in envs)


def test_errors_name_the_env_and_keep_other_results():
    with make_pool(2) as pool:
        gate = threading.Event()
        pool.step_async(0, {"fail": True, "gate": gate})
        pool.step_async(1, {"gate": gate})
        gate.set()
        with pytest.raises(EnvPoolError, match="env 0 raised during step") as err:
            while True:  # both finish; the failure surfaces whichever order they arrive in
                pool.wait(k=1)
        assert err.value.index == 0 and isinstance(err.value.__cause__, ValueError)
        # env 1's result, if it arrived with the failure, is kept for the next wait
        rest = pool.wait()
        assert [i for i, _ in rest] in ([1], [])
        assert pool.in_flight == []
    with pytest.raises(EnvPoolError, match="construction"):
        EnvPool([lambda: GateEnv(0), lambda: (_ for _ in ()).throw(OSError("no env"))])


def _oracle_action(task, info, sleep_s: float = 0.0) -> str:
    files = dict(task.solution(task.reference_name or "reference").files)
    main = info["main_file"]
    if sleep_s:
        files[main] = f"import time\ntime.sleep({sleep_s})\n" + files[main]
    changes = {p: c for p, c in files.items() if info["files"].get(p) != c}
    return render_action(changes, "code_block", info["files"], main, submit=True)


def test_real_env_slow_submission_does_not_hold_back_the_fast_one():
    task_id = "examples/run-length"
    with EnvPool.from_id("codegym/Suite-v0", 2, suite="examples") as pool:
        pool.reset_async(options={"task_id": task_id})
        infos = {i: info for i, (_, info) in pool.wait()}
        task = pool.env(0).unwrapped.task
        # env 0's program sleeps in every test, and env 0's judge waits until env 1's
        # result has been taken (a gate, not a race against the clock: a pool that held
        # the fast env back behind the slow one would never get there)
        slow = pool.env(0).unwrapped
        fast_taken = threading.Event()
        judge_after_gate = slow._judge
        slow._judge = lambda *a, **k: (fast_taken.wait(), judge_after_gate(*a, **k))[1]
        pool.step_async(0, _oracle_action(task, infos[0], sleep_s=1.5))
        pool.step_async(1, _oracle_action(task, infos[1]))
        (i, (obs, reward, terminated, _, info)), = pool.wait(k=1)
        assert i == 1 and terminated and reward == 1.0 and info["judge"]["verdict"] == "accepted"
        assert pool.in_flight == [0]
        fast_taken.set()
        (j, (_, reward0, _, _, info0)), = pool.wait()
        assert j == 0 and reward0 == 1.0 and info0["judge"]["verdict"] == "accepted"


def unbatch(info: dict, i: int) -> dict:
    """Env i's info out of a vector env's batched info (dicts are batched key by key,
    with a ``_key`` mask saying which envs have the key)."""
    out = {}
    for k, v in info.items():
        if k.startswith("_") or not info.get("_" + k, np.ones(i + 1, bool))[i]:
            continue
        out[k] = unbatch(v, i) if isinstance(v, dict) else v[i]
    return out


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("suite", ["perfcode", "dmcoptim"])
def test_make_vec_heavy_suites(suite, mode):
    # (the suites' correctness reward: their default, the staged reward, is timed)
    envs = gym.make_vec("codegym/Suite-v0", num_envs=2, vectorization_mode=mode, suite=suite,
                        reward="pass_fraction")
    try:
        assert isinstance(envs.single_observation_space, CodeText)
        obs, info = envs.reset(seed=[3, 4])
        assert len(obs) == 2 and all(isinstance(o, str) and o for o in obs)
        tasks = envs.get_attr("task")
        assert [t.id for t in tasks] == list(info["task_id"])
        actions = []
        for i, task in enumerate(tasks):
            agent = OracleAgent()
            agent.reset(task=task)
            actions.append(agent.act(obs[i], unbatch(info, i)))
        obs, rewards, terminated, truncated, info = envs.step(tuple(actions))
        assert np.all(terminated) and not np.any(truncated)
        assert list(rewards) == [1.0, 1.0]
        assert [unbatch(info, i)["judge"]["verdict"] for i in range(2)] == ["accepted", "accepted"]
    finally:
        envs.close()
