"""Issue 32: the baseline kept per task and the looks that stop a near-tie, through the
rewards of plain `gym.make(id)`. No assertion depends on a time or on being alone on the
machine: what a look decides may vary with the load, what it may pay does not."""

from __future__ import annotations

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the ids)
import codegym.timing.kept as K
from codegym.edits.render import render_action
from codegym.wrappers import StagedReward, TimedReward

TASK = "perfcode/py-sum-numbers"


def _submit(env, make_files):
    env.reset(options={"task_id": TASK})
    files = make_files(env.unwrapped.task)
    current = dict(env.unwrapped.workspace.files)
    action = render_action({p: c for p, c in files.items() if current.get(p) != c}, "code_block", current,
                           "main.py", submit=True)
    _, r, term, trunc, info = env.step(action)
    assert term
    return r, info


def _baseline_like(tag: str):
    def make(task) -> dict[str, str]:
        files = dict(task.starter_files())
        files["main.py"] = files["main.py"] + f"# {tag}\n"   # a new program at the baseline's speed
        return files
    return make


def _kept(details: dict) -> dict:
    return (details.get("bound") or details.get("looks") or {}).get("kept") or {}


def test_a_baseline_like_candidate_earns_the_baseline_score_against_the_kept_baseline(monkeypatch):
    """Two envs of the process (as a vector env's) submit baseline-like programs: the first
    keeps the baseline, the second reuses it; neither is paid for a speedup it does not have."""
    monkeypatch.setattr(K, "stale", lambda *a, **k: "")   # (the machine may move under a loaded test run)
    K.forget_kept()
    envs = [gym.make("codegym/PerfCode-v0") for _ in range(2)]
    rewards, kepts = [], []
    for k, env in enumerate(envs):
        r, info = _submit(env, _baseline_like(f"near tie {k}"))
        st = info["staged"]
        assert st["stage"] == "correct" and st["scorable"], st
        assert 0.6 <= r < 0.75, st            # correct, no (material) speedup
        if "bound" in st:                     # stopped by a look: exactly the baseline's score
            assert r == pytest.approx(0.6) and st["bound"]["rule"] in ("slow_bound", "futility")
            assert st["bound"]["source"] == "kept" and st["bound"]["looks"]["looks"]
        rewards.append(r)
        kepts.append(_kept(st))
    assert kepts[0].get("kept") is False and kepts[0].get("why") == "first"
    assert kepts[1].get("kept") is True and kepts[1].get("uses") == 2
    for env in envs:
        env.close()


def test_the_reference_is_not_stopped_and_still_out_earns_the_baseline():
    env = gym.make("codegym/PerfCode-v0")
    r, info = _submit(env, lambda task: dict(task.solution("reference").files))
    assert "bound" not in info["staged"] and r > 0.75, info["staged"]
    looks = info["staged"].get("looks")
    if looks is not None:                     # looked at, then measured: never stopped
        assert not looks["stopped"]
    env.close()


def test_futility_can_be_turned_off_and_the_timed_reward_looks_too(monkeypatch):
    monkeypatch.setattr(K, "stale", lambda *a, **k: "")
    env = StagedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"), futility=False)
    r, info = _submit(env, _baseline_like("no futility"))
    st = info["staged"]
    assert st["stage"] == "correct" and 0.6 <= r < 0.75
    if "bound" in st:
        assert st["bound"]["rule"] == "slow_bound"
    env.close()
    timed = TimedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"))
    r, info = _submit(timed, _baseline_like("timed near tie"))
    t = info["timing"]
    assert t["correct"] and r <= timed.correct_reward + 0.1, t
    if "bound" in t:
        assert r == timed.correct_reward and t["bound"]["rule"] in ("slow_bound", "futility")
    timed.close()
