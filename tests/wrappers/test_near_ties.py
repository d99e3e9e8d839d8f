"""Issue 32: the baseline kept per task and the looks that stop a near-tie, through the
rewards of plain `gym.make(id)`. No assertion depends on a time or on being alone on the
machine: what a look decides may vary with the load, what it may pay does not."""

from __future__ import annotations

import statistics

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the ids)
import codegym.timing.kept as K
from codegym.edits.render import render_action
from codegym.wrappers import StagedReward, TimedReward, staged
from codegym.wrappers.baseline import Looks, undecided
from codegym.wrappers.bound import SlowBound
from codegym.wrappers.measure import recorded_runtimes
from codegym.wrappers.program import Bench
from codegym.wrappers.staged import StageValues

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


# =========================================================================== undecided near-ties


def _no_measurement(monkeypatch):
    """An undecided near-tie is scored from its looks: any measurement of it fails the test."""
    def measure(self, *a, **k):
        raise AssertionError("an undecided near-tie was measured")
    monkeypatch.setattr(Bench, "measure", measure)


def _undecided(monkeypatch):
    """Looks that neither stop nor clear (whatever the passes show): all MAX_LOOKS of them are taken."""
    observe = K.NearTie.observe

    def never_stop(self, seconds, ref):
        observe(self, seconds, ref)
        self.stopped = ""
        return ""
    monkeypatch.setattr(K.NearTie, "observe", never_stop)
    monkeypatch.setattr(K.NearTie, "clear", lambda self: False)
    monkeypatch.setattr(K.NearTie, "leans_tie", lambda self, ref: True)


def test_an_undecided_near_tie_is_scored_from_its_looks_not_measured(monkeypatch):
    """Real looks (`look_at`: the kept baseline's passes, the candidate's judged split and
    concurrent passes) that decide nothing: the times come from the looks (source "looks",
    seconds at the reference speed), the reference's by the recorded ratio, nothing is measured."""
    monkeypatch.setattr(K, "stale", lambda *a, **k: "")
    _undecided(monkeypatch)
    _no_measurement(monkeypatch)
    K.forget_kept()
    # (no slow bound: under load a baseline-like run may reach a bound of 1x the baseline)
    env = StagedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"), slow_bound=None)
    r, info = _submit(env, _baseline_like("undecided"))
    st = info["staged"]
    assert st["stage"] == "correct" and st["scorable"] and "bound" not in st, st
    times = st["times"]
    assert times["source"] == "looks" and times["unit"] == "s", times
    looks = st["looks"]
    # (the cost bound: after LOOK_PASSES passes -- the baseline's first two, around the judged
    # split's look -- a candidate leaning to a tie is scored from its looks)
    assert 1 <= len(looks["looks"]) < K.MAX_LOOKS and not looks["stopped"]
    assert st["looks"]["kept"]["added"] == K.LOOK_PASSES
    assert times["t"] == pytest.approx(statistics.median(lk["seconds"] for lk in looks["looks"]))
    task = env.unwrapped.task
    rt, _ = recorded_runtimes(task, "cpu")
    assert times["t_reference"] == pytest.approx(times["t_baseline"] * rt["reference"] / rt["baseline"])
    assert times["noise"] > 0 and times["noise_baseline"] > 0
    assert 0.6 <= r < 0.75, st
    env.close()


def _crafted_looks(seconds, base=(1.0, 1.01, 0.99, 1.0, 1.005)):
    ref = K.Reference.of_samples(list(base), prior=K.PASS_PRIOR)
    tie = K.NearTie(alpha=None, bound=None)
    for s in seconds:
        tie.observe(s, ref)
    bound = SlowBound(seconds=None, baseline_s=ref.median, factor=None, metric="cpu", source="kept")
    return Looks(bound, tie, {"kept": True, "why": ""}, ref)


def test_a_tie_from_its_looks_earns_exactly_the_correct_value(monkeypatch):
    """Looks at the kept baseline's own speed: no improvement, the correct stage's value exactly."""
    looks = _crafted_looks([1.0, 0.995, 1.0, 1.005])
    assert undecided(looks)
    monkeypatch.setattr(Bench, "look", lambda self, *a, **k: looks)
    _no_measurement(monkeypatch)
    env = gym.make("codegym/PerfCode-v0")
    r, info = _submit(env, _baseline_like("crafted tie"))
    st = info["staged"]
    assert st["times"]["source"] == "looks" and st["times"]["t"] == pytest.approx(1.0)
    assert st["times"]["t_baseline"] == pytest.approx(1.0) and st["improvement"] <= 0
    assert r == pytest.approx(StageValues().correct), st
    env.close()


def test_looks_leaning_to_a_speedup_are_measured_not_scored_from_the_looks():
    """~1.09x looks (faster, not clearly: `NearTie.clear`) lean to a speedup: not `undecided`,
    the reward measures them (a real speedup is not decided on a selected sample)."""
    looks = _crafted_looks([0.92, 0.925, 0.915, 0.92])
    assert not looks.tie.clear() and not looks.tie.leans_tie(looks.ref) and not undecided(looks)
    assert undecided(_crafted_looks([0.985, 0.98, 0.99, 0.985]))  # ~1.015x: leans to a tie


def test_looks_without_recorded_runtimes_take_the_ratio_of_the_kept_measurements(monkeypatch):
    """No recorded runtimes: t_reference is t_baseline over the ratio of the baseline's and the
    reference's kept measurements; looks leaning to a tie are paid nothing beyond the correct stage."""
    looks = _crafted_looks([0.985, 0.98, 0.99, 0.985])   # ~1.015x: leans to a tie (`NearTie.leans_tie`)
    assert undecided(looks)
    monkeypatch.setattr(Bench, "look", lambda self, *a, **k: looks)
    monkeypatch.setattr(staged, "recorded_runtimes", lambda task, metric=None: ({}, None))
    kept = {"baseline": {"median": 3.0}, "reference": {"median": 1.0}}
    monkeypatch.setattr(Bench, "solution_measurement", lambda self, name, settings: kept[name])
    _no_measurement(monkeypatch)
    env = gym.make("codegym/PerfCode-v0")
    r, info = _submit(env, _baseline_like("crafted speedup"))
    t = info["staged"]["times"]
    assert t["source"] == "looks" and t["t_reference"] == pytest.approx(t["t_baseline"] / 3.0)
    assert info["staged"]["improvement"] <= 0  # (within the looks' noise: the gate)
    assert r == pytest.approx(StageValues().correct)
    env.close()
