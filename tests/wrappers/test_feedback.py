"""After a timed submit the agent reads, in one line of its final observation, the measured
speedup over the baseline (with its interval) and the stage reached
(codegym.wrappers.feedback, added by `FinalReward.step`). The lines of given details are
checked exactly; on real episodes, that the line is the one of the episode's own details,
sits before the closing line and is what `render` shows (the numbers are measurements)."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import codegym  # noqa: F401 -- registers the ids
from codegym.agents import OracleAgent
from codegym.wrappers import TimedReward
from codegym.wrappers.feedback import staged_line, timed_line

LINE = re.compile(r"^Performance: .+; stage: .+$")


@pytest.mark.parametrize("details,want", [
    ({"stage": "correct", "improvement": 0.7, "log2_speedup_over_reference": 0.0,
      "times": {"t": 1.0, "t_baseline": 3.2, "t_reference": 0.5, "noise": 0.05, "noise_baseline": 0.0}},
     "Performance: 3.2x faster than the baseline (3.05-3.37x within the measurement noise; the reference: "
     "6.4x faster than the baseline); stage: correct and faster"),
    ({"stage": "correct", "improvement": 1.0, "log2_speedup_over_reference": 1.0,
      "times": {"t": 0.25, "t_baseline": 3.0, "t_reference": 0.5}},
     "Performance: 12.0x faster than the baseline (the reference: 6.0x faster than the baseline); "
     "stage: correct and faster than the reference"),
    ({"stage": "correct", "improvement": 0.0, "log2_speedup_over_reference": 0.0,
      "times": {"t": 2.0, "t_baseline": 1.0, "t_reference": 0.5, "noise": 0.1, "noise_baseline": 0.1}},
     "Performance: 2.0x slower than the baseline (0.44-0.58x within the measurement noise; the reference: "
     "2.0x faster than the baseline); stage: correct, not faster than the baseline beyond the noise"),
    ({"stage": "correct", "bound": {"reached": True, "baseline_s": 0.32}, "times": {"t": 0.4, "t_baseline": 0.32}},
     "Performance: no faster than the baseline (its timed runs reached the baseline's 0.32 s per pass and "
     "were stopped); stage: correct, no faster than the baseline"),
    ({"stage": "wrong_answer", "fraction": 0.625, "times": None},
     "Performance: not timed (only a correct program is); stage: wrong answer (62% of the tests passed)"),
    ({"stage": "compile_error", "fraction": 0.0, "times": None},
     "Performance: not timed (only a correct program is); stage: compile error"),
    ({"stage": "correct", "times": None, "reason": "speed not scored: task t has no reference solution"},
     "Performance: not measured (speed not scored: task t has no reference solution); stage: correct"),
])
def test_staged_lines(details, want):
    assert staged_line(details) == want


@pytest.mark.parametrize("details,want", [
    ({"mode": "speedup", "correct": True, "scorable": True, "score": 0.5,
      "comparisons": [{"against": "slow", "speedup": 3.2, "ci": [2.9, 3.5]}]},
     "Performance: 3.2x faster than the baseline (95% CI 2.90-3.50x); stage: correct and faster"),
    ({"mode": "speedup", "correct": True, "scorable": True, "score": 0.0,
      "comparisons": [{"against": "slow", "speedup": 1.0, "ci": [1.0, 1.0], "identical": True}]},
     "Performance: 1.0x faster than the baseline (the same program); stage: correct, not faster beyond the noise"),
    ({"mode": "speedup", "correct": True, "scorable": False, "score": 0.0, "reason": "too noisy",
      "comparisons": [{"against": "slow", "speedup": 1.04, "ci": [0.9, 1.2]}]},
     "Performance: 1.0x faster than the baseline (95% CI 0.90-1.20x); stage: correct (speed not scored: too noisy)"),
    ({"mode": "percentile", "correct": True, "scorable": True, "score": 0.5,
      "percentiles": [{"percentile": 50.0, "pivot": "mid", "beats": True},
                      {"percentile": 90.0, "pivot": "fast", "beats": False}]},
     "Performance: faster than the p50 of the task's runtimes; not faster than the p90 (fast); "
     "stage: correct and faster"),
    ({"mode": "speedup", "correct": False, "verdict": "wrong_answer", "scorable": True},
     "Performance: not timed (only a correct program is); stage: not correct (wrong_answer)"),
])
def test_timed_lines(details, want):
    assert timed_line(details, 0.95) == want


def play_oracle(env, task_id: str):
    obs, info = env.reset(options={"task_id": task_id})
    agent = OracleAgent()
    agent.reset(task=env.unwrapped.task)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        done = terminated or truncated
    return obs, info


def check_final(env, obs: str, details: dict) -> str:
    lines = obs.splitlines()
    assert lines[-1] == "The episode is over." and LINE.match(lines[-2]), obs[-400:]
    assert lines[-3].startswith("Hidden tests: accepted")                 # after the judge's own line
    assert lines[-2] == details["feedback"]
    assert env.unwrapped.last_observation == obs                          # what render shows
    return lines[-2]


@pytest.mark.parametrize("env_id,task_id", [("codegym/PerfCode-v0", "perfcode/py-sum-numbers"),
                                            ("codegym/DMCOptim-v0", "dmcoptim/divisor-tally")])
def test_the_default_reward_says_the_speedup_and_the_stage(env_id, task_id):
    env = gym.make(env_id)                                                # staged, the suite's default
    try:
        obs, info = play_oracle(env, task_id)
        line = check_final(env, obs, info["staged"])
        assert line == staged_line(info["staged"])
        assert re.match(r"Performance: (\d+(\.\d+)?x (faster|slower) than the baseline|no faster than the baseline)",
                        line), line
        assert "; stage: correct" in line
        obs, info = env.reset(options={"task_id": task_id})
        obs, *_, info = env.step("```python\nprint(1)\n```\nsubmit")
        assert obs.splitlines()[-2] == ("Performance: not timed (only a correct program is); "
                                        "stage: wrong answer (0% of the tests passed)")
    finally:
        env.close()


def test_the_timed_reward_says_the_speedup_with_its_confidence_interval():
    env = TimedReward(gym.make("codegym/PerfCode-v0", early_exit=True, reward="pass_fraction"), mode="speedup")
    try:
        obs, info = play_oracle(env, "perfcode/py-range-count")
        line = check_final(env, obs, info["timing"])
        assert line == timed_line(info["timing"], 0.95)
        comp = info["timing"]["comparisons"][-1]
        if comp.get("ci") and not comp.get("identical"):
            assert "(95% CI " in line
    finally:
        env.close()


def test_a_reward_that_adds_no_line_leaves_the_observation_alone():
    env = gym.make("codegym/LCB-v0")                                      # pass fraction: nothing timed
    try:
        obs, info = play_oracle(env, env.unwrapped.tasks[0].id)
        assert obs.splitlines()[-1] == "The episode is over." and "Performance:" not in obs
    finally:
        env.close()
