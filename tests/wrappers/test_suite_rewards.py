"""Issue #18: each suite declares its default reward; the registered ids apply it; the slow bound.

Declarations and specs are checked without executions; the real executions play one small
PerfCode task with the id's own default reward (oracle > baseline > wrong answer), and the
slow bound on a CPU-bound loop, which every bound stops whatever the machine's load. The
measurement of every PerfCode and DMC-Optim task is benchmarks/default_rewards.py's.
"""

from __future__ import annotations

import textwrap

import gymnasium as gym
import pytest

import codegym  # noqa: F401  (registers the ids)
from codegym.agents import BaselineAgent, MutantAgent, OracleAgent
from codegym.envs import ENV_IDS
from codegym.judge.perf import perf_workload
from codegym.sandbox import make_sandbox
from codegym.tasks.suite import load_suite
from codegym.wrappers import ProgressShaping, RewardConfigError, StagedReward, TimedReward
from codegym.wrappers.bound import BoundReached, SlowBound, probe
from codegym.wrappers.config import parse_reward, resolve_reward, suite_reward

STAGED_SUITES = {"perfcode", "dmcoptim"}


def _play(env, agent, task_id):
    obs, info = env.reset(options={"task_id": task_id})
    agent.reset(task=env.unwrapped.task)
    term = trunc = False
    total = 0.0
    while not (term or trunc):
        obs, r, term, trunc, info = env.step(agent.act(obs, {**info, "files": env.unwrapped.workspace.files}))
        total += r
    return r, total, info


# =========================================================================== declarations and specs


@pytest.mark.parametrize("env_id", sorted(i for i in ENV_IDS if "suite" in ENV_IDS[i]))
def test_every_registered_id_uses_its_suites_declared_reward(env_id):
    suite = ENV_IDS[env_id]["suite"]
    decl = suite_reward(suite)
    assert decl is not None, f"tasks/{suite}/suite.yaml declares no `suite: {{reward: ...}}`"
    env = gym.make(env_id)
    spec = env.spec
    assert spec.kwargs["reward"] == "suite"
    names = [w.name for w in spec.additional_wrappers]
    if suite in STAGED_SUITES:   # speed is paid for by default
        assert names == ["StagedReward"] and decl.base is None
        assert spec.additional_wrappers[0].kwargs["timed"] and spec.additional_wrappers[0].kwargs["slow_bound"] == 1.0
    else:                        # correctness
        assert names == [] and decl.base in ("pass_fraction", "binary")
        assert env.unwrapped.reward_mode == decl.base
    env.close()


def test_reward_kwarg_overrides_the_default_and_the_spec_rebuilds_it():
    plain = gym.make("codegym/PerfCode-v0", reward="pass_fraction")
    assert plain.spec.additional_wrappers == () and plain.unwrapped.reward_mode == "pass_fraction"
    binary = gym.make("codegym/PerfCode-v0", reward="binary")
    assert binary.unwrapped.reward_mode == "binary"
    timed = gym.make("codegym/PerfCode-v0", reward=[{"type": "timed", "cap": 5.0}, "format_penalty"])
    assert [w.name for w in timed.spec.additional_wrappers] == ["TimedReward", "FormatPenalty"]
    named = gym.make("codegym/LCB-v0", reward="rlpf")       # a wrapper type (or alias) alone
    assert [w.name for w in named.spec.additional_wrappers] == ["StagedReward"]
    with pytest.raises(RewardConfigError, match="did you mean 'pass_fraction'"):
        gym.make("codegym/PerfCode-v0", reward="pass_fractoin")
    default = gym.make("codegym/PerfCode-v0")
    again = gym.make(default.spec)                           # the default is not applied twice
    assert [w.name for w in again.spec.additional_wrappers] == ["StagedReward"]
    assert isinstance(again.env.env, StagedReward) and not isinstance(again.env.env.env, StagedReward)
    for e in (plain, binary, timed, named, default, again):
        e.close()


def test_a_reward_stacked_on_the_default_replaces_it():
    env = TimedReward(gym.make("codegym/PerfCode-v0"), mode="speedup")
    inner = env.env.env.env
    assert isinstance(inner, StagedReward) and inner.suite_default and inner.replaced_by == "TimedReward"
    env.reset(options={"task_id": "perfcode/py-range-count"})
    _, r, term, _, info = env.step("```python\nprint(\n```\nsubmit")   # does not compile
    assert term and r == 0.0 and "staged" not in info["reward_components"] and "staged" not in info
    env.close()
    # without the id's default (reward=...), nothing is replaced; a suite's own declaration
    # of one episode-deciding reward is not replaced by a wrapper the user adds around others
    env = StagedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"))
    assert env.replaced_by is None
    env.close()


def test_suite_reward_declarations_are_validated_with_file_and_line(tmp_path, capsys):
    suite = tmp_path / "mine"
    suite.mkdir()
    (suite / "suite.yaml").write_text(textwrap.dedent("""\
        suite:
          description: declared badly
          reward:
            - {type: staged, speed_wieght: 0.5}
        """))
    (suite / "t.yaml").write_text("statement: s\nkind: stdio\nlanguage: python\n"
                                  "tests: {hidden: [{stdin: '1', expected: '1'}]}\n")
    with pytest.raises(RewardConfigError) as e:
        suite_reward(suite)
    assert "suite.yaml:4: suite.reward[0].speed_wieght: unknown field" in str(e.value)
    assert "did you mean 'speed_weight'" in str(e.value)
    from codegym.cli.main import main as cli
    assert cli(["tasks", "validate", "-q", str(suite)]) == 1
    assert "suite.yaml:4: suite.reward[0].speed_wieght" in capsys.readouterr().out
    with pytest.raises(RewardConfigError, match="unknown reward 'fast'"):
        parse_reward("fast")
    # tasks given without a suite: the suite they were loaded from
    decl, default = resolve_reward("suite", tasks=list(load_suite("perfcode"))[:2])
    assert default and [s.type for s in decl.wrappers] == ["staged"]
    with pytest.warns(UserWarning, match="different default rewards"):   # the env's own, and why
        decl, _ = resolve_reward("suite", tasks=[*list(load_suite("perfcode"))[:1], *list(load_suite("lcb"))[:1]])
    assert decl.base is None and decl.wrappers == []


# =========================================================================== real executions


def test_perfcode_default_reward_pays_speed_and_orders_failures():
    """gym.make's own reward: the expert beats the unchanged slow starter, which beats a
    wrong answer; the starter is stopped at the slow bound or measured no faster."""
    env = gym.make("codegym/PerfCode-v0")
    task = "perfcode/py-sum-numbers"   # the reference is ~5x faster (runtimes.json)
    r_oracle, _, info_o = _play(env, OracleAgent(), task)
    r_base, _, info_b = _play(env, BaselineAgent(), task)
    r_wrong, _, info_w = _play(env, MutantAgent(kinds=["output"], seed=1), task)
    assert info_o["staged"]["stage"] == info_b["staged"]["stage"] == "correct"
    assert info_o["staged"]["times"]["source"] == "recorded"       # calibrated with runtimes.json
    assert info_w["staged"]["stage"] == "wrong_answer"
    assert r_wrong < r_base < r_oracle, (r_wrong, r_base, r_oracle)
    assert r_base < 1.0 and info_b["reward_components"]["staged"] == r_base
    if "bound" in info_b["staged"]:   # stopped: exactly the baseline's score
        assert info_b["staged"]["bound"]["reached"] and r_base == pytest.approx(0.6)
    env.close()


def test_the_slow_bound_stops_a_program_no_faster_than_the_baseline():
    sb = make_sandbox()
    task = next(t for t in load_suite("perfcode") if t.id == "perfcode/py-sum-numbers")
    loop = perf_workload(task, {"main.py": "while True:\n    pass\n"}, "python", sb)
    bound = SlowBound(seconds=0.3, baseline_s=0.3, factor=1.0, metric="cpu", source="recorded")
    with pytest.raises(BoundReached) as e:          # never ends: stopped at what is left of 0.3 s
        probe(sb, loop, bound, "cpu")
    assert e.value.details()["reached"] and "input 0 was stopped" in e.value.how
    # a judged perf split that already took the bound stops it without another run
    judged = {"cases": [{"split": "perf", "status": "passed", "time_s": 0.2},
                        {"split": "perf", "status": "passed", "time_s": 0.2}]}
    with pytest.raises(BoundReached, match="judged runs took 0.4 s"):
        probe(sb, loop, bound, "cpu", judged)
    ref = task.solution("reference").files
    fast = perf_workload(task, dict(ref), "python", sb)
    roomy = SlowBound(seconds=600.0, baseline_s=600.0, factor=1.0, metric="cpu", source="recorded")
    assert 0 < probe(sb, fast, roomy, "cpu") < 600.0


@pytest.mark.parametrize("slow_bound", [1e-6, None])
def test_a_stopped_candidate_earns_the_baseline_score(slow_bound):
    """With a bound below any program's time even the reference is stopped and earns
    `correct` (the baseline's score); without a bound nothing is stopped."""
    env = StagedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"), slow_bound=slow_bound)
    r, _, info = _play(env, OracleAgent(), "perfcode/py-sum-numbers")
    if slow_bound is None:
        assert "bound" not in info["staged"] and r > 0.6
    else:
        assert info["staged"]["bound"]["reached"] and r == pytest.approx(0.6)
        assert info["staged"]["improvement"] <= 0 and info["staged"]["times"]["source"] in ("kept", "recorded")
    env.close()
    timed = TimedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"), slow_bound=1e-6)
    r, _, info = _play(timed, OracleAgent(), "perfcode/py-sum-numbers")
    assert info["timing"]["bound"]["reached"] and r == timed.correct_reward and info["timing"]["correct"]
    timed.close()


def test_progress_shaping_keeps_an_accepted_submission_positive():
    """The starter already passes the public tests (P(s_0) = 1): a one-step correct
    submission used to total 0; the shaped return now equals the unshaped one."""
    for reward in ("pass_fraction", [{"type": "staged", "timed": False}]):
        base = gym.make("codegym/PerfCode-v0", reward=reward)
        env = ProgressShaping(base, gamma=0.9)
        obs, info = env.reset(options={"task_id": "perfcode/py-sum-numbers"})
        assert info["public_fraction"] == 1.0 and info["potential"] == 0.0
        _, r, term, _, info = env.step("submit")
        assert term and r > 0 and info["reward_components"]["progress_shaping"] == 0.0
        env.close()
    # several steps: the discounted shaped return is the unshaped one (the terms cancel)
    gamma = 0.9
    env = ProgressShaping(gym.make("codegym/PerfCode-v0", reward="pass_fraction", max_turns=3), gamma=gamma)
    env.reset(options={"task_id": "perfcode/py-sum-numbers"})
    shaped, plain = [], []
    for action in ["```python\nprint(0)\n```", "```python\nimport sys\nprint(sys.stdin.read().count('x'))\n```",
                   "submit"]:
        _, r, term, trunc, info = env.step(action)
        shaped.append(r)
        plain.append(r - info["reward_components"]["progress_shaping"])
        if term or trunc:
            break
    disc = lambda rs: sum(gamma ** k * x for k, x in enumerate(rs))  # noqa: E731
    assert min(shaped[:-1]) < 0 and disc(shaped) == pytest.approx(disc(plain))
    env.close()


def test_an_env_made_with_a_sandbox_object_keeps_its_default_reward():
    """Gymnasium deep-copies specs, and a sandbox cannot be copied: the codegym wrappers'
    spec does not copy the env's kwargs, so gym.make works, and collect's copies of the
    env (its fork, several workers) get the suite's reward again."""
    from codegym.rollout import collect
    env = gym.make("codegym/PerfCode-v0", sandbox=make_sandbox())
    staged = env.env.env
    assert isinstance(staged, StagedReward) and [w.name for w in staged.spec.additional_wrappers] == ["StagedReward"]
    trajs = collect(env, MutantAgent(kinds=["syntax"], seed=1), group_size=1, num_envs=2, progress=False,
                    tasks=["perfcode/py-sum-numbers", "perfcode/py-range-count"])
    assert [t.final_reward for t in trajs] == [pytest.approx(0.1)] * 2   # staged: a compile error
    env.close()


def test_a_candidate_near_the_baseline_is_compared_with_the_baseline_measured_now(monkeypatch):
    """Recorded times carried over by the calibration workload can be off by 1.1-1.4x on
    another day: a recording 1.5x slower than this machine now would pay the unchanged
    starter a false speedup. A candidate within ANCHOR_BELOW of the recorded baseline is
    compared with the baseline measured now instead (the recorded ratio kept)."""
    import codegym.wrappers.bound as bound_mod
    import codegym.wrappers.staged as staged_mod

    real = staged_mod.recorded_runtimes

    def slower_recording(task, metric=None):
        rt, cal = real(task, metric)
        return {k: 1.5 * v for k, v in rt.items()}, cal

    monkeypatch.setattr(staged_mod, "recorded_runtimes", slower_recording)
    monkeypatch.setattr(bound_mod, "recorded_runtimes", slower_recording)
    # (neither the bound nor the futility rule: the starter is measured, then anchored)
    env = StagedReward(gym.make("codegym/PerfCode-v0", reward="pass_fraction"), slow_bound=None, futility=False)
    r_base, _, info = _play(env, BaselineAgent(), "perfcode/py-sum-numbers")
    times = info["staged"]["times"]
    assert times["source"] == "recorded" and 1.1 < times["anchor"] < 2.2, times
    assert r_base < 0.66, info["staged"]                      # unanchored: about 0.6 + 0.4 * 0.35
    r_oracle, _, info_o = _play(env, OracleAgent(), "perfcode/py-sum-numbers")
    assert info_o["staged"]["times"]["anchor"] is None and r_oracle > 0.9   # far from the baseline
    env.close()
