"""The staged reward's ordering property on every bundled task, with real executions.

Issue #5: on any task, reward(compile error) < reward(runtime error) <
reward(wrong answer, k passed) < reward(wrong answer, k+1 passed) < reward(correct).
For each task of the bundled suites that run here (Julia needs `julia`; SWE repos
have their own tests) the mutant agent supplies the compile error, the crash and
the wrong output; for stdio tasks a *partial* program (a Python table of the first k
hidden answers, a wrong line for the rest; stdio tasks accept any language) supplies
"exactly k passed" for two consecutive k; the oracle supplies the correct program.
The speed side (correct slow <= correct fast) is timed in tests/test_wrappers.py.
"""

from __future__ import annotations

import hashlib
import json

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the env ids)
from codegym.agents import MutantAgent, OracleAgent
from codegym.judge.testgen import materialize
from codegym.tasks.suite import load_suite
from codegym.wrappers import StagedReward

SUITES = ("examples", "perfcode", "dmcoptim", "lcb")
TASK_IDS = [t.id for s in SUITES for t in load_suite(s)]

_ENVS: dict[tuple[str, bool], gym.Env] = {}


def _env(suite: str, early_exit: bool) -> gym.Env:
    key = (suite, early_exit)
    if key not in _ENVS:
        _ENVS[key] = StagedReward(gym.make("codegym/Suite-v0", suite=suite, early_exit=early_exit))
    return _ENVS[key]


@pytest.fixture(scope="module", autouse=True)
def _close_envs():
    yield
    for env in _ENVS.values():
        env.close()
    _ENVS.clear()


def _play(env: gym.Env, agent, task_id: str) -> tuple[float, dict]:
    obs, info = env.reset(seed=0, options={"task_id": task_id})
    agent.reset(task=env.unwrapped.task, seed=0)
    term = trunc = False
    reward = 0.0
    while not (term or trunc):
        obs, reward, term, trunc, info = env.step(agent.act(obs, {**info, "files": env.unwrapped.workspace.files}))
    return float(reward), info


def _partial_program(cases, k: int) -> str:
    """A Python program that answers the first k hidden cases right and the rest wrong."""
    table = {hashlib.sha256(c.stdin.encode()).hexdigest(): c.expected for c in cases[:k]}
    return ("import hashlib, sys\n"
            f"T = {json.dumps(table)}\n"
            "d = sys.stdin.buffer.read()\n"
            "sys.stdout.write(T.get(hashlib.sha256(d).hexdigest(), 'codegym-wrong-answer\\n'))\n")


class _Fixed:
    """An agent that submits one fixed Python main file."""

    name = "fixed"

    def __init__(self, source: str):
        self.source = source

    def reset(self, task=None, seed=None):
        pass

    def act(self, observation, info):
        return f"```python path=main.py\n{self.source}```\n"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_failure_stages_and_partial_credit_are_ordered(task_id):
    suite = task_id.split("/")[0]
    fast = _env(suite, early_exit=True)
    r = {}
    for kind in ("syntax", "crash", "output"):
        r[kind], info = _play(fast, MutantAgent(kinds=[kind], seed=1), task_id)
        assert info["staged"]["stage"] == {"syntax": "compile_error", "crash": "runtime_error",
                                           "output": "wrong_answer"}[kind], (kind, info["judge"])
    r["correct"], info = _play(fast, OracleAgent(), task_id)
    assert info["judge"]["verdict"] == "accepted" and info["staged"]["stage"] == "correct"
    assert r["syntax"] < r["crash"] < r["output"] < r["correct"], r

    task = fast.unwrapped.task
    cases = materialize(task, "hidden")
    stdio_python = task.kind == "stdio" and "python" in (task.languages or [task.language])
    if stdio_python and len(cases) >= 3 and all(isinstance(c.expected, str) for c in cases):
        full = _env(suite, early_exit=False)
        k = len(cases) // 2
        got = {}
        for n in (k, k + 1):
            got[n], info = _play(full, _Fixed(_partial_program(cases, n)), task_id)
            assert (info["judge"]["verdict"], info["judge"]["passed"]) == ("wrong_answer", n), info["judge"]
        assert r["crash"] < got[k] < got[k + 1] < r["correct"], (r, got)
