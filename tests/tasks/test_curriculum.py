"""CurriculumSampler: utilities, family budgets, determinism, checkpoints, use by CodeEnv."""

from __future__ import annotations

import json
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pytest

import codegym  # noqa: F401
from codegym.tasks.curriculum import CurriculumSampler, TaskStats, family_of


@dataclass(frozen=True)
class T:
    id: str


TASKS = [T(f"alpha/t{i}") for i in range(6)] + [T(f"beta/t{i}") for i in range(2)]


def _drive(sampler, rng, n, outcome):
    """Sample n tasks, feeding back outcome(task_id, k) as the reward."""
    ids = []
    for k in range(n):
        t = sampler.sample(rng, TASKS)
        ids.append(t.id)
        sampler.update(t.id, outcome(t.id, k))
    return ids


def _outcome(task_id, k):
    # t0 always solved, t1 never, t2 half the time: the learning signal is on t2
    i = int(task_id.rsplit("t", 1)[1])
    return {0: 1.0, 1: 0.0}.get(i, float(k % 2))


def test_family_and_stats():
    assert family_of("perfcode/c-hexdump") == "perfcode" and family_of("bare") == ""
    st = TaskStats()
    for r in (1.0, 0.0, 1.0, 1.0):
        st.update(r, r >= 1.0, decay=1.0)
    assert st.n == 4 and st.successes == 3 and st.mean == pytest.approx(0.75)
    assert st.variance == pytest.approx(np.var([1, 0, 1, 1]))


def test_utility_prefers_uncertain_tasks_and_explores_unseen():
    s = CurriculumSampler(exploration=0.1, decay=1.0)
    for _ in range(20):
        s.update("a/solved", 1.0)
        s.update("a/hopeless", 0.0)
    for k in range(20):
        s.update("a/coinflip", float(k % 2))
    u = {i: s.utility(i) for i in ("a/solved", "a/hopeless", "a/coinflip", "a/unseen")}
    assert u["a/coinflip"] > u["a/solved"] and u["a/coinflip"] > u["a/hopeless"]
    assert u["a/unseen"] > u["a/coinflip"]          # prior p = 1/2 plus the largest bonus
    assert u["a/solved"] == pytest.approx(u["a/hopeless"])
    v = CurriculumSampler(signal="variance", exploration=0.0, decay=1.0)
    for k in range(10):
        v.update("a/x", float(k % 2))
        v.update("a/y", 0.5)
    assert v.utility("a/x") == pytest.approx(0.25) and v.utility("a/y") == pytest.approx(0.0)


def test_sampling_concentrates_on_learning_signal():
    s = CurriculumSampler(exploration=0.05, decay=1.0, temperature=0.5, family_weights={"alpha": 1.0})
    ids = _drive(s, np.random.default_rng(0), 600, _outcome)
    late = ids[300:]
    assert all(family_of(i) == "alpha" for i in ids)   # beta has no budget
    counts = {f"alpha/t{i}": late.count(f"alpha/t{i}") for i in range(6)}
    # t2..t5 flip coins (p(1-p) = 1/4); t0 / t1 are settled and only drawn at the floor
    assert min(counts[f"alpha/t{i}"] for i in range(2, 6)) > 3 * max(counts["alpha/t0"], counts["alpha/t1"])


@pytest.mark.parametrize("weights,shares", [("uniform", {"alpha": 0.5, "beta": 0.5}),
                                            (None, {"alpha": 0.75, "beta": 0.25}),
                                            ({"alpha": 3, "beta": 1}, {"alpha": 0.75, "beta": 0.25})])
def test_family_budgets_are_followed(weights, shares):
    s = CurriculumSampler(family_weights=weights, seed=1)
    assert s.family_shares(TASKS) == pytest.approx(shares)
    ids = _drive(s, np.random.default_rng(1), 200, _outcome)
    for fam, share in shares.items():
        got = sum(family_of(i) == fam for i in ids)
        assert abs(got - share * 200) <= 1   # deficit scheduling: within one episode of the budget
    p = s.probabilities(TASKS)
    assert p.sum() == pytest.approx(1.0) and (p > 0).all()


def test_utility_family_weights_follow_family_utility():
    s = CurriculumSampler(family_weights="utility", exploration=0.0, decay=1.0)
    for k in range(30):
        for t in TASKS:
            s.update(t.id, 1.0 if family_of(t.id) == "alpha" else float(k % 2))
    sh = s.family_shares(TASKS)
    assert sh["beta"] > sh["alpha"]


def test_seeded_determinism_and_checkpoint_round_trip():
    a = CurriculumSampler(seed=7, family_weights="uniform")
    b = CurriculumSampler(seed=7, family_weights="uniform")
    ra, rb = np.random.default_rng(3), np.random.default_rng(3)
    assert _drive(a, ra, 50, _outcome) == _drive(b, rb, 50, _outcome)
    # checkpoint mid-run: a restored sampler continues exactly like the original
    state = json.loads(json.dumps(a.state_dict()))           # JSON-able
    c = CurriculumSampler()
    c.load_state_dict(state)
    assert c.state_dict() == a.state_dict()
    rng_state = ra.bit_generator.state
    rc = np.random.default_rng()
    rc.bit_generator.state = rng_state
    assert _drive(a, ra, 40, _outcome) == _drive(c, rc, 40, _outcome)
    # the sampler's own generator (rng=None) is part of the state too
    d = CurriculumSampler(seed=11)
    e = CurriculumSampler()
    _drive(d, None, 5, _outcome)
    e.load_state_dict(d.state_dict())
    assert _drive(d, None, 20, _outcome) == _drive(e, None, 20, _outcome)
    with pytest.raises(ValueError):
        c.load_state_dict({**state, "version": 99})


def test_invalid_configuration():
    for kw in ({"signal": "entropy"}, {"temperature": 0}, {"decay": 0}, {"prior": (0, 1)},
               {"family_weights": "fair"}, {"family_weights": {"a": -1}}):
        with pytest.raises(ValueError):
            CurriculumSampler(**kw)
    with pytest.raises(ValueError, match="positive weight"):
        CurriculumSampler(family_weights={"gamma": 1.0}).sample(None, TASKS)


def test_code_env_uses_the_sampler():
    s = CurriculumSampler(seed=0, family_weights="uniform")
    env = gym.make("codegym/Suite-v0", suite="examples", sampler=s, feedback="none", max_turns=1)
    seen = []
    for k in range(4):
        _, info = env.reset(seed=k)
        seen.append(info["task_id"])
        env.step("```python\nprint(\n```")  # the last turn submits: does not compile
    assert s.total_samples == 4 and s.total_updates == 4
    assert sum(st.episodes for st in s.stats.values()) == 4 and set(s.stats) == set(seen)
    env.close()
