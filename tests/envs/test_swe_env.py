"""`SWEEnv` (codegym/SWE-v0) end to end: the env checker, the registered id, the oracle and
baseline agents on every bundled task, repository tools, feedback, forks."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from _repo_tasks import CENTS, IDS, SUITE
from gymnasium.utils.env_checker import check_env

import codegym  # noqa: F401 (registers the ids)
from codegym.agents import BaselineAgent, OracleAgent
from codegym.edits.formats import EDIT_FORMATS
from codegym.edits.render import render_action
from codegym.envs.repo_tools import extract_repo_tools
from codegym.envs.swe_env import ENV_KWARGS, SWEEnv
from codegym.rollout.runner import run_episode
from codegym.tasks.repo import gold_patch

TEST_ID = "codegym-test/SWE-v0"
if TEST_ID not in gym.registry:
    gym.register(TEST_ID, entry_point="codegym.envs.swe_env:SWEEnv", kwargs=dict(ENV_KWARGS))


@pytest.fixture(scope="module")
def env():
    e = gym.make(TEST_ID)
    yield e
    e.close()


def test_check_env(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)
        check_env(env.unwrapped, skip_render_check=False)


def test_registered_id_builds_the_swe_env():
    # needs codegym/envs/__init__.py: ENV_IDS["codegym/SWE-v0"] with entry point
    # "codegym.envs.swe_env:SWEEnv" (see the report of codegym/py's author)
    env = gym.make("codegym/SWE-v0")
    try:
        assert isinstance(env.unwrapped, SWEEnv)
    finally:
        env.close()


@pytest.mark.parametrize("k", range(len(IDS)))
def test_oracle_resolves_every_task_and_baseline_none(env, k):
    task_id = IDS[k]
    fmt = EDIT_FORMATS[k % len(EDIT_FORMATS)]
    rec = run_episode(env, OracleAgent(format=fmt), seed=k, options={"task_id": task_id})
    assert rec["return"] == 1.0 and rec["verdict"] == "accepted", (fmt, rec["final_observation"])
    assert "resolution FULL" in rec["final_observation"]
    assert rec["steps"][0]["diff"] and rec["steps"][0]["diff_units"]
    rec = run_episode(env, BaselineAgent(), seed=k, options={"task_id": task_id})
    assert rec["return"] == 0.0 and "resolution NO" in rec["final_observation"]
    # the gold patch itself (a git diff) is a valid action
    obs, info = env.reset(options={"task_id": task_id})
    assert info["task_hash"] == SUITE.get(task_id).content_hash
    obs, reward, term, trunc, info = env.step(gold_patch(SUITE.get(task_id)) + "\nsubmit\n")
    assert info["error"] is None and reward == 1.0 and info["swe"]["resolution"] == "FULL"


def test_repository_tools_and_feedback(env):
    obs, info = env.reset(options={"task_id": CENTS})
    assert "## Issue" in obs and "centsplit/money.py" in obs and "python3 -m unittest" in obs
    action = ('Let me look.\n{"name": "search", "arguments": {"pattern": "def allocate", "path": "centsplit"}}\n'
              '<tool_call>{"name": "view_file", "arguments": {"path": "centsplit/money.py", "start_line": 79, '
              '"end_line": 84}}</tool_call>\n```json\n[{"name": "list_files", "arguments": {"path": "tests"}}, '
              '{"name": "view_file", "arguments": {"path": "tests"}}]\n```\n')
    obs, reward, term, trunc, info = env.step(action)
    assert info["error"] is None and not term and reward == 0.0
    assert "centsplit/money.py:79: def allocate" in obs
    assert "79  " in obs and "tests/test_money.py" in obs
    assert [c["name"] for c in info["edits"]["tool_calls"]] == ["search", "view_file", "list_files", "view_file"]
    obs, *_, info = env.step('{"name": "run_tests", "arguments": {"tests": '
                             '"tests.test_money.SplitTest.test_even_split tests.test_money.SplitTest.test_nope"}}')
    assert "passed  tests.test_money.SplitTest.test_even_split" in obs
    assert "not found in the report  tests.test_money.SplitTest.test_nope" in obs
    # an edit runs the existing tests as feedback; breaking one shows it
    obs, *_, info = env.step("centsplit/money.py\n<<<<<<< SEARCH\n"
                             '        return f"{sign}{body} {self.currency.code}"\n=======\n'
                             '        return f"{sign}{body}{self.currency.code}"\n>>>>>>> REPLACE\n')
    assert info["diff"] and info["judge"]["split"] == "public" and info["judge"]["verdict"] == "wrong_answer"
    assert "centsplit/money.py" in info["cumulative_diff"]
    # repository tools mixed with an edit tool in one JSON value are refused, nothing applies
    obs, *_, info = env.step('[{"name": "search", "arguments": {"pattern": "x"}}, '
                             '{"name": "write_file", "arguments": {"path": "a.py", "content": "x"}}]')
    assert info["error"] and "separate" in info["error"] and not info["diff"]
    assert "centsplit/money.py" in info["cumulative_diff"]
    assert env.reset(options={"task_id": CENTS})[1]["cumulative_diff"] == ""


def test_extract_repo_tools_keeps_offsets():
    text = 'x\n{"name": "search", "arguments": {"pattern": "a"}}\n```python path=a.py\n{"name": "search"}\n```\n'
    calls, rest, err = extract_repo_tools(text)
    assert err is None and [c.name for c in calls] == ["search"] and len(rest) == len(text)
    assert rest.startswith("x\n ") and '{"name": "search"}\n```' in rest    # code block content untouched
    _, _, err = extract_repo_tools('{"name": "search", "arguments": {"pattern": "a", "bogus": 1}}')
    assert "unknown argument 'bogus'" in err


def test_fork_and_deleted_files(env):
    env.reset(options={"task_id": CENTS})
    base = env.unwrapped
    fork = base.fork()
    try:
        diff = render_action({"README.md": None}, "unified_diff", fork.workspace.files, "")
        obs, *_, info = fork.step(diff)
        assert info["error"] is None, info["error"]
        assert not fork.workspace.exists("README.md") and base.workspace.exists("README.md")
        assert fork._judge_files()["README.md"] is None
    finally:
        fork.close()


def test_suite_v0_builds_the_repository_env_and_the_oracle_writes_the_gold_patch():
    """`gym.make("codegym/Suite-v0", suite=<repository suite>)` is a SWEEnv (not a CodeEnv
    with a main.py), and the OracleAgent given the suite's task (no stored solution) writes
    the gold patch."""
    from codegym.envs.code_env import CodeEnv
    e = gym.make("codegym/Suite-v0", suite="swe", max_turns=3)
    try:
        assert isinstance(e.unwrapped, SWEEnv)
        task = SUITE.get(CENTS)
        assert not task.solutions                          # what a runner hands the agent
        agent = OracleAgent(format="unified_diff")
        agent.reset(task=task)
        obs, info = e.reset(options={"task_id": CENTS})
        assert "centsplit/money.py" in obs and info["swe"]["source"].startswith("dir ")
        _, reward, terminated, _, info = e.step(agent.act(obs, info))
        assert terminated and reward == 1.0 and info["swe"]["resolution"] == "FULL"
    finally:
        e.close()
    e = gym.make("codegym/Suite-v0", suite="lcb")
    assert isinstance(e.unwrapped, CodeEnv) and not isinstance(e.unwrapped, SWEEnv)
    e.close()
