"""Reward wrappers: formulas on constructed reports and infos (fast), then real executions.

Real executions use tiny tasks written here (a ~30 ms Python baseline with a closed-form
reference; a C twin timed by instruction count) and mutants of bundled tasks, on
early-exit envs. Never asserts on absolute times: only on orders, exact equalities of
instruction counts, and properties of the records.
"""

from __future__ import annotations

import math
import shutil
import textwrap
import warnings

import gymnasium as gym
import pytest
from _fake_clock import FakeClock

import codegym  # noqa: F401  (registers the ids)
from codegym import load_task
from codegym.agents import MutantAgent, OracleAgent
from codegym.judge.report import program_stage
from codegym.sandbox import make_sandbox
from codegym.tasks.runtimes import percentile_rank
from codegym.wrappers import (
    DiffCredit,
    DiffSizePenalty,
    FormatPenalty,
    ProgressShaping,
    RewardConfigError,
    StagedReward,
    StageValues,
    TimedReward,
    apply_reward_wrappers,
    load_reward_config,
    parse_reward_config,
    staged_reward,
)
from codegym.wrappers.diff_credit import returns_to_go
from codegym.wrappers.scoring import speed_score as _speed_score
from codegym.wrappers.shaping import changed_lines, diff_paths
from codegym.wrappers.staged import PerfTimes, improvement

# =========================================================================== constructed reports


def _case(status: str, i: int = 0) -> dict:
    return {"index": i, "name": f"c{i}", "status": status, "split": "hidden"}


def _report(verdict: str, passed: int = 0, total: int = 5, statuses: list[str] | None = None) -> dict:
    cases = [_case(s, i) for i, s in enumerate(statuses or [])]
    return {"verdict": verdict, "passed": passed, "total": total, "cases": cases, "timing": None}


def test_stage_classification():
    assert program_stage(_report("no_code")) == ("no_code", 0.0)
    assert program_stage(_report("compile_error")) == ("compile_error", 0.0)
    # crashed or timed out on every test that ran (early exit skips the rest)
    assert program_stage(_report("runtime_error", 0, 5, ["runtime_error", "skipped"]))[0] == "runtime_error"
    assert program_stage(_report("timeout", 0, 3, ["timeout", "runtime_error", "memory_limit"]))[0] == "runtime_error"
    # a wrong answer anywhere, or any passed test: it got further
    assert program_stage(_report("runtime_error", 0, 3, ["runtime_error", "wrong_answer", "timeout"]))[0] \
        == "wrong_answer"
    assert program_stage(_report("runtime_error", 2, 5, ["passed", "passed", "runtime_error"])) == ("wrong_answer", 0.4)
    assert program_stage(_report("accepted", 5, 5)) == ("correct", 1.0)
    assert program_stage(_report("sandbox_error"))[0] == "sandbox_error"


def test_staged_defaults_and_ordering_property():
    v = StageValues()
    n = 5
    r = lambda rep, times=None: staged_reward(rep, times, v)[0]  # noqa: E731
    tb, tr = 10.0, 1.0
    slow = PerfTimes(t=tb, t_baseline=tb, t_reference=tr)
    half = PerfTimes(t=5.5, t_baseline=tb, t_reference=tr)
    fast = PerfTimes(t=tr, t_baseline=tb, t_reference=tr)
    faster = PerfTimes(t=tr / 2, t_baseline=tb, t_reference=tr)
    chain = [r(_report("no_code")), r(_report("compile_error")),
             r(_report("runtime_error", 0, n, ["runtime_error"]))]
    chain += [r(_report("wrong_answer", k, n, ["passed"] * k + ["wrong_answer"])) for k in range(n)]
    chain += [r(_report("accepted", n, n), slow), r(_report("accepted", n, n), half),
              r(_report("accepted", n, n), fast), r(_report("accepted", n, n), faster)]
    assert all(a < b for a, b in zip(chain, chain[1:])), chain
    # the documented table
    assert chain[:3] == [0.0, 0.1, 0.2]
    assert chain[3:3 + n] == pytest.approx([0.3 + 0.3 * k / n for k in range(n)])
    assert chain[-4:] == pytest.approx([0.6, 0.8, 1.0, 1.1])
    assert r(_report("accepted", n, n), None) == pytest.approx(0.6)  # speed unknown
    assert r(_report("sandbox_error")) == 0.0


def test_improvement_is_clipped_and_noise_gated():
    t = PerfTimes(t=12.0, t_baseline=10.0, t_reference=1.0)  # slower than the baseline
    assert improvement(t)[0] < 0
    assert staged_reward(_report("accepted", 1, 1), t)[0] == pytest.approx(0.6)
    near = PerfTimes(t=9.8, t_baseline=10.0, t_reference=1.0, noise=0.02, noise_baseline=0.02)
    assert improvement(near, noise_gate=True)[0] == 0.0          # 2 % faster, inside the noise
    assert improvement(near, noise_gate=False)[0] == pytest.approx(0.2 / 9)
    beyond = PerfTimes(t=0.25, t_baseline=10.0, t_reference=1.0)
    imp, lg = improvement(beyond)
    assert imp > 1 and lg == pytest.approx(2.0)
    assert staged_reward(_report("accepted", 1, 1), beyond)[0] == pytest.approx(1.1)  # bonus capped


def test_stage_values_must_keep_the_order():
    with pytest.raises(ValueError):
        StageValues(compile_error=0.25)             # above runtime_error
    with pytest.raises(ValueError):
        StageValues(wrong_answer_weight=0.5)        # 0.3 + 0.5 > correct
    custom = StageValues(no_code=-1, compile_error=-0.5, runtime_error=0, wrong_answer=0.1,
                         wrong_answer_weight=0.4, correct=0.5, speed_weight=1.0)
    assert staged_reward(_report("wrong_answer", 4, 4 + 1), None, custom)[0] == pytest.approx(0.42)


def test_timed_formulas():
    assert _speed_score(1.0, 10, "log") == 0.0 and _speed_score(0.5, 10, "log") == 0.0
    assert _speed_score(10 ** 0.5, 10, "log") == pytest.approx(0.5)
    assert _speed_score(100.0, 10, "log") == 1.0
    assert _speed_score(5.5, 10, "ratio") == pytest.approx(0.5)
    # nearest-rank percentile of a distribution sorted fastest first
    assert [percentile_rank(p, 3) for p in (10, 33.3, 50, 67, 100)] == [1, 1, 2, 3, 3]
    assert [percentile_rank(p, 10) for p in (10, 30, 50, 95)] == [1, 3, 5, 10]


def test_returns_to_go():
    assert returns_to_go([1.0, 0.0, 2.0], 1.0) == [3.0, 2.0, 2.0]
    g = returns_to_go([1.0, -0.5, 2.0], 0.9)
    assert g[2] == 2.0 and g[1] == pytest.approx(-0.5 + 0.9 * 2.0)
    assert g[0] == pytest.approx(1.0 + 0.9 * g[1])
    assert returns_to_go([], 0.5) == []


def test_diff_helpers():
    diff = ("diff --git a/main.py b/main.py\n--- a/main.py\n+++ b/main.py\n@@ -1,2 +1,2 @@\n"
            "-a = 1\n+a = 2\n b = 3\ndiff --git a/new.py b/new.py\nnew file mode 100644\n"
            "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n")
    assert diff_paths(diff) == ["main.py", "new.py"]
    assert changed_lines(diff) == 3


# =========================================================================== wrappers on envs (no timing)


def _examples(**kw):
    kw.setdefault("suite", "examples")
    return gym.make("codegym/Suite-v0", **kw)


def test_format_penalty_parse_and_apply_errors():
    env = FormatPenalty(_examples(feedback="none"), penalty=0.1, apply_penalty=0.3)
    env.reset(options={"task_id": "examples/digit-sum-queries"})
    _, r, _, _, info = env.step("<<<<<<< SEARCH\nnot in the file\n=======\nx = 1\n>>>>>>> REPLACE\n")
    assert info["error"]
    expected = 0.3 if info["error"].startswith("the edit was not applied") else 0.1
    assert r == pytest.approx(-expected) and info["reward_components"]["format_penalty"] == pytest.approx(-expected)
    _, r, _, _, info = env.step("```python path=../../etc/passwd\nx\n```")
    assert info["error"] and r < 0
    _, r, _, _, info = env.step("```python path=notes.py\nA = 1\n```")
    assert info["error"] is None and r == 0.0 and "format_penalty" not in info["reward_components"]
    env.close()


def test_diff_size_penalty_budget_outside_files_and_protected():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        env = DiffSizePenalty(_examples(feedback="none", max_turns=6), free_lines=3, per_line=0.01,
                              max_penalty=0.05, allowed=["main.py"], outside_penalty=0.2,
                              protected=["tests/*"], protected_penalty=0.5)
        env.reset(options={"task_id": "examples/digit-sum-queries"})
        _, r, _, _, info = env.step("```python path=a.py\nx = 1\ny = 2\n```")  # 2 lines, outside
        assert info["churn"]["outside"] == ["a.py"] and r == pytest.approx(-0.2)
        _, r, _, _, info = env.step("```python path=main.py\n" + "\n".join(f"v{i} = {i}" for i in range(4)) + "\n```")
        lines = info["churn"]["step_lines"]
        assert lines > 3 and info["churn"]["episode_lines"] == 2 + lines
        assert r == pytest.approx(-min(0.05, 0.01 * (2 + lines - 3)))  # the cap is per episode
        _, r, _, _, info = env.step("```python path=main.py\nprint(1)\n```")
        assert r == 0.0  # the cap was reached: nothing more to pay
        _, r, _, _, info = env.step("```python path=tests/test_x.py\nassert True\n```")
        assert r < 0
        if env.enforced:   # the env refuses: the file was not written
            assert "tests/test_x.py" not in env.unwrapped.workspace.files
        else:              # penalised and reported
            assert info["protected_violations"] == ["tests/test_x.py"]
            assert r == pytest.approx(-0.5 - 0.2)
    env.close()


def test_progress_shaping_telescopes_to_minus_phi0():
    gamma = 0.9
    env = ProgressShaping(_examples(max_turns=3), gamma=gamma, weight=1.0)
    _, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
    task = env.unwrapped.task
    phi0 = info["potential"]
    ref = task.solution("reference").files[task.main_file]
    shaped, phis = [], [phi0]
    for action in ["```python\nprint(0)\n```", f"```python\n{ref}```", "submit"]:
        _, r, term, trunc, info = env.step(action)
        shaped.append(r - info["reward_components"].get("pass_fraction", 0.0))
        phis.append(info["potential"])
        if term or trunc:
            break
    assert phis[-1] == 0.0 and 1.0 in phis  # the fix reached Phi = 1; the end has Phi = 0
    assert shaped == pytest.approx([gamma * b - a for a, b in zip(phis, phis[1:])])
    assert sum(gamma ** k * f for k, f in enumerate(shaped)) == pytest.approx(-phi0)
    env.close()


def test_diff_credit_spans_point_into_their_actions_and_returns_to_go():
    gamma = 0.8
    env = DiffCredit(ProgressShaping(_examples(max_turns=4)), gamma=gamma, keep_actions=True)
    _, info = env.reset(options={"task_id": "examples/digit-sum-queries"})
    agent = OracleAgent(format="search_replace", submit_turn=2)
    agent.reset(task=env.unwrapped.task)
    actions = ["```python\nimport sys\nprint(0)\n```"]
    rewards = []
    _, r, term, trunc, info = env.step(actions[0])
    rewards.append(r)
    while not (term or trunc):
        actions.append(agent.act("", {**info, "files": env.unwrapped.workspace.files}))
        _, r, term, trunc, info = env.step(actions[-1])
        rewards.append(r)
    dc = info["diff_credit"]
    assert [s["step"] for s in dc["steps"]] == list(range(len(actions)))
    assert [s["reward"] for s in dc["steps"]] == pytest.approx(rewards)
    assert [s["return_to_go"] for s in dc["steps"]] == pytest.approx(returns_to_go(rewards, gamma))
    assert dc["return"] == pytest.approx(returns_to_go(rewards, gamma)[0])
    n_spans = 0
    for s, action in zip(dc["steps"], actions):
        assert s["action"] == action and s["action_length"] == len(action)
        for u in s["units"]:
            assert set(u) >= {"signature", "span", "scope", "n_lines", "kind"}
            if u["span"] is not None:
                a, b = u["span"]
                assert 0 <= a < b <= len(action)
                n_spans += 1
    assert n_spans >= 2  # both edits were located in their own action texts
    env.close()


# =========================================================================== YAML configuration


def test_reward_config_validation_names_file_line_and_field(tmp_path):
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(textwrap.dedent("""\
        name: demo
        reward:
          - type: staged
            corect: 0.6
          - {type: format_penalty, penalty: lots}
          - type: stagd
        """))
    with pytest.raises(RewardConfigError) as e:
        load_reward_config(cfg)
    msg = str(e.value).splitlines()
    assert msg[0].endswith("eval.yaml:4: reward[0].corect: unknown field 'corect' (did you mean 'correct'?)")
    assert msg[1].endswith("eval.yaml:5: reward[1].penalty: expected number")
    assert msg[2].endswith("eval.yaml:6: reward[2].type: unknown reward wrapper 'stagd' (did you mean 'staged'?)")
    with pytest.raises(RewardConfigError, match="must increase"):
        parse_reward_config([{"type": "staged", "compile_error": 0.5}])


def test_wrappers_built_from_a_suite_yaml_and_rebuilt_from_the_spec(tmp_path):
    suite = tmp_path / "mysuite"
    suite.mkdir()
    (suite / "suite.yaml").write_text(textwrap.dedent("""\
        suite:
          description: a suite with declared rewards
          reward:
            - {type: staged, correct: 0.7, speed_weight: 0.3}
            - {type: format_penalty, penalty: 0.2}
            - {type: didpo, gamma: 0.5}
        """))
    specs = load_reward_config(suite / "suite.yaml")
    assert [s.type for s in specs] == ["staged", "format_penalty", "diff_credit"]
    assert load_reward_config(suite) == specs                     # the suite's folder works too
    assert load_reward_config("examples") == []                   # a suite that declares nothing
    env = apply_reward_wrappers(_examples(feedback="none"), specs)
    assert isinstance(env, DiffCredit) and env.gamma == 0.5
    assert isinstance(env.env, FormatPenalty) and env.env.penalty == 0.2
    assert isinstance(env.env.env, StagedReward) and env.env.env.values.correct == 0.7
    again = gym.make(env.spec)   # RecordConstructorArgs: the spec rebuilds the stack
    assert [type(w).__name__ for w in (again, again.env, again.env.env)] == \
        ["DiffCredit", "FormatPenalty", "StagedReward"]
    assert again.env.penalty == 0.2 and again.env.env.values.speed_weight == 0.3
    again.reset(options={"task_id": "examples/digit-sum-queries"})
    _, r, _, _, info = again.step("```python\nprint(\n```\nsubmit")
    assert info["staged"]["stage"] == "compile_error" and r == pytest.approx(0.1)
    env.close()
    again.close()


# =========================================================================== real executions

PY_TASK = """\
title: Sum of squares
statement: Print the sum of i*i for 0 <= i < n.
kind: stdio
language: python
languages: [python]
starter: {main.py: {file: baseline.py}}
tests:
  public: [{stdin: "3\\n", expected: "5\\n"}]
  hidden:
    - {stdin: "0\\n", expected: "0\\n"}
    - {stdin: "1\\n", expected: "0\\n"}
    - {stdin: "2\\n", expected: "1\\n"}
    - {stdin: "10\\n", expected: "285\\n"}
    - {stdin: "1000\\n", expected: "332833500\\n"}
  perf: [{stdin: "300000\\n"}]
limits: {time_s: 0.5}
perf: {baseline: baseline, reference: reference, repeats: 3, metric: cpu}
solutions:
  baseline: {files: {main.py: {file: baseline.py}}}
  middle: {files: {main.py: {file: middle.py}}}
  reference: {files: {main.py: {file: reference.py}}}
  right-below-3: {expect: wrong_answer, files: {main.py: {file: below3.py}}}
  right-below-2: {expect: wrong_answer, files: {main.py: {file: below2.py}}}
"""
PY_FILES = {
    "baseline.py": "import sys\nn = int(sys.stdin.readline())\ns = 0\nfor i in range(n):\n    s += i * i\nprint(s)\n",
    # clearly faster than the baseline and slower than the reference: closed form per block of 64
    "middle.py": ("import sys\nn = int(sys.stdin.readline())\nf = lambda k: (k - 1) * k * (2 * k - 1) // 6\n"
                  "s = 0\nfor b in range(0, n, 64):\n    s += f(min(n, b + 64)) - f(b)\nprint(s)\n"),
    "reference.py": "import sys\nn = int(sys.stdin.readline())\nprint((n - 1) * n * (2 * n - 1) // 6)\n",
    "below3.py": "import sys\nn = int(sys.stdin.readline())\nprint((n - 1) * n * (2 * n - 1) // 6 if n < 3 else 7)\n",
    "below2.py": "import sys\nn = int(sys.stdin.readline())\nprint((n - 1) * n * (2 * n - 1) // 6 if n < 2 else 7)\n",
}

C_TASK = """\
title: Sum of squares (C)
statement: Print the sum of i*i for 0 <= i < n.
kind: stdio
language: c
languages: [c]
starter: {main.c: {file: baseline.c}}
tests:
  public: [{stdin: "3\\n", expected: "5\\n"}]
  hidden: [{stdin: "10\\n", expected: "285\\n"}, {stdin: "1000\\n", expected: "332833500\\n"}]
  perf: [{stdin: "200000\\n"}]
perf: {baseline: baseline, reference: reference, metric: instructions}
solutions:
  baseline: {files: {main.c: {file: baseline.c}}}
  reference: {files: {main.c: {file: reference.c}}}
"""
C_FILES = {
    "baseline.c": ("#include <stdio.h>\nint main(void) {\n  unsigned long long n = 0, s = 0;\n"
                   "  if (scanf(\"%llu\", &n) != 1) return 1;\n"
                   "  for (unsigned long long i = 0; i < n; i++) s += i * i;\n"
                   "  printf(\"%llu\\n\", s);\n  return 0;\n}\n"),
    "reference.c": ("#include <stdio.h>\nint main(void) {\n  unsigned long long n = 0;\n"
                    "  if (scanf(\"%llu\", &n) != 1) return 1;\n"
                    "  printf(\"%llu\\n\", n ? (n - 1) * n * (2 * n - 1) / 6 : 0);\n  return 0;\n}\n"),
}


def _write_task(root, name, yaml_text, files):
    d = root / "tiny"
    d.mkdir(exist_ok=True)
    (d / f"{name}.yaml").write_text(yaml_text)
    for rel, text in files.items():
        (d / rel).write_text(text)
    return load_task(d / f"{name}.yaml")


@pytest.fixture(scope="module")
def py_task(tmp_path_factory):
    return _write_task(tmp_path_factory.mktemp("tasks"), "sumsq", PY_TASK, PY_FILES)


@pytest.fixture(scope="module")
def c_task(tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    return _write_task(tmp_path_factory.mktemp("tasks"), "sumsq-c", C_TASK, C_FILES)


def _play(env, agent, task_id=None, seed=None):
    obs, info = env.reset(seed=seed, options={"task_id": task_id} if task_id else None)
    agent.reset(task=env.unwrapped.task, seed=seed)
    term = trunc = False
    total = 0.0
    while not (term or trunc):
        obs, r, term, trunc, info = env.step(agent.act(obs, {**info, "files": env.unwrapped.workspace.files}))
        total += r
    return r, info


def test_staged_ordering_on_real_executions(py_task):
    """compile error < runtime error/timeout < wrong answer (k) < (k+1) < correct slow <= fast."""
    early = StagedReward(gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=True))
    full = StagedReward(gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=False))
    got = {}
    for kind in ("syntax", "crash", "loop", "output"):
        got[kind], info = _play(early, MutantAgent(kinds=[kind], seed=3))
        assert info["staged"]["stage"] == {"syntax": "compile_error", "crash": "runtime_error",
                                           "loop": "runtime_error", "output": "wrong_answer"}[kind]
    got["k2"], info = _play(full, OracleAgent(solution="right-below-2"))
    assert (info["judge"]["passed"], info["staged"]["stage"]) == (2, "wrong_answer")
    got["k3"], info = _play(full, OracleAgent(solution="right-below-3"))
    assert info["judge"]["passed"] == 3
    got["slow"], info_slow = _play(early, OracleAgent(solution="baseline"))
    got["fast"], info_fast = _play(early, OracleAgent())
    for i in (info_slow, info_fast):   # (the baseline's own program may be stopped against the kept baseline,
        # or scored from its looks as a tie: `NearTie.leans_tie`)
        assert i["staged"]["stage"] == "correct" and i["staged"]["times"]["source"] in ("measured", "kept", "looks")
    assert info_fast["staged"]["times"]["source"] == "measured"
    assert got["syntax"] < got["crash"] == got["loop"] < got["output"] < got["k2"] < got["k3"] \
        < got["slow"] <= got["fast"], got
    # ~15x faster than the baseline; the reference's own time (~1 ms) is mostly start-up jitter
    assert info_fast["staged"]["improvement"] > 0.5 and got["fast"] > got["slow"] + 0.2
    early.close()
    full.close()


@pytest.mark.parametrize("task_id", ["perfcode/c-seen-before", "perfcode/py-range-count", "dmcoptim/coprime-pairs"])
def test_mutants_of_bundled_tasks_keep_the_failure_order(task_id):
    env = StagedReward(gym.make("codegym/Suite-v0", suite=task_id.split("/")[0], early_exit=True))
    r = {kind: _play(env, MutantAgent(kinds=[kind], seed=1), task_id)[0] for kind in ("syntax", "crash", "output")}
    assert r["syntax"] < r["crash"] < r["output"] < StageValues().correct, r
    env.close()


def test_timed_speedup_gates_on_correctness_and_significance(py_task):
    """The whole path of a timed reward (judge, builds, kept baseline, comparison) on real runs
    whose times are fake (`FakeClock`: the baseline 30 ms, any other program 2 ms, 1 % jitter),
    so that no load can make the comparison too noisy to decide (it did: +-39.5 %)."""
    sb = FakeClock(make_sandbox("local"), {"for i in range(n)": 0.030}, default_s=0.002)
    env = TimedReward(gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=True, sandbox=sb), mode="speedup",
                      repeats=6, max_pairs=9, max_noise=0.3)
    r_fast, info = _play(env, OracleAgent())
    t = info["timing"]
    assert t["scorable"] and t["correct"], t["reason"]
    cmp = t["comparisons"][0]
    assert cmp["significant"] and 13 < cmp["speedup"] < 17 and cmp["ci"][0] > 10, cmp
    assert sb.runs > 0   # (the times were the fake clock's)
    assert len(cmp["samples"]["candidate"]) == len(cmp["samples"]["baseline"]) == cmp["n_pairs"]
    assert t["calibration"] and set(cmp["cv"]) == {"baseline", "candidate"}
    assert r_fast == pytest.approx(1.0 + min(1.0, math.log(cmp["speedup"]) / math.log(10.0)))
    r_same, info = _play(env, OracleAgent(solution="baseline"))
    assert r_same == 1.0 and info["timing"]["comparisons"][0]["identical"]   # same program: speedup 1
    r_wrong, info = _play(env, OracleAgent(solution="right-below-3"))
    assert r_wrong == 0.0 and not info["timing"]["correct"] and info["timing"]["comparisons"] == []
    assert info["reward_components"]["timed"] == 0.0
    env.close()


# right on every hidden test, and fast and wrong on the large perf input
CHEAT = "import sys\nn = int(sys.stdin.readline())\nprint((n - 1) * n * (2 * n - 1) // 6 if n < 5000 else 0)\n"


@pytest.fixture(scope="module")
def cheat_task(tmp_path_factory):
    cheat = "  cheat: {expect: wrong_answer, files: {main.py: {file: cheat.py}}}\n"
    text = PY_TASK.replace("solutions:\n", "solutions:\n" + cheat)
    return _write_task(tmp_path_factory.mktemp("tasks"), "sumsq-cheat", text, {**PY_FILES, "cheat.py": CHEAT})


def test_a_program_wrong_only_when_timed_earns_nothing(cheat_task):
    """Reward-hacking probe: without the perf-split check, the timed runs are the only runs
    of the large input. They are judged too: the wrong, fast program is not correct."""
    for check_perf in (True, False):
        env = TimedReward(gym.make("codegym/Suite-v0", tasks=[cheat_task], early_exit=True), mode="speedup",
                          repeats=4, max_pairs=6, max_noise=0.3, check_perf=check_perf)
        r, info = _play(env, OracleAgent(solution="cheat"))
        t = info["timing"]
        assert info["judge"]["verdict"] == "accepted"  # the env's judge saw only the hidden tests
        assert r == 0.0 and not t["correct"], t
        if check_perf:
            assert t["perf_verdict"] == "wrong_answer"
        else:
            assert t["verdict"] == "wrong_answer" and "timed run of the candidate" in t["reason"], t["reason"]
            # not retried: a wrong answer is not noise (the slow bound's probe pass, the first
            # timed run, may catch it before any comparison)
            assert len(t["comparisons"]) <= 1
        env.close()
    staged = StagedReward(gym.make("codegym/Suite-v0", tasks=[cheat_task], early_exit=True), check_perf=False,
                          repeats=3)
    r, info = _play(staged, OracleAgent(solution="cheat"))
    assert info["staged"]["stage"] == "wrong_answer" and "timed_run_failed" in info["staged"], info["staged"]
    assert r < StageValues().correct
    staged.close()


def test_timed_percentile_and_interpolate_modes(py_task):
    base = gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=True)
    pct = TimedReward(base, mode="percentile", percentiles=[50, 100], repeats=6,
                      max_pairs=9, max_noise=0.3)
    r, info = _play(pct, OracleAgent())   # the reference beats the middle (rank 2) and the slowest (rank 3)
    t = info["timing"]
    assert t["scorable"], t["reason"]
    assert t["distribution"]["source"] == "measured"
    assert [e["pivot"] for e in t["percentiles"]] == ["middle", "baseline"]
    assert [e["beats"] for e in t["percentiles"]] == [True, True] and r == pytest.approx(2.0)
    r, info = _play(pct, OracleAgent(solution="middle"))   # not strictly faster than itself
    assert [e["beats"] for e in info["timing"]["percentiles"]] == [False, True] and r == pytest.approx(1.5)
    interp = TimedReward(base, mode="interpolate", repeats=6, max_pairs=9, max_noise=0.3)
    r, info = _play(interp, OracleAgent())
    assert info["timing"]["slowest"] == "baseline" and info["timing"]["fastest"] == "reference"
    assert 0.8 < info["timing"]["position"] and r > 1.8
    base.close()


def test_noisy_measurements_are_unscorable_not_guessed(py_task):
    # a cap far above the speedup keeps the score unclipped, so any noise moves it
    env = TimedReward(gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=True), max_noise=1e-9,
                      max_score_span=1e-9, cap=1e6, retries=1, repeats=6, max_pairs=6, unscorable_reward=0.0)
    r, info = _play(env, OracleAgent())
    assert r == 0.0 and info["timing"]["scorable"] is False and info["timing"]["correct"]
    assert "too noisy" in info["timing"]["reason"] and "2 attempt" in info["timing"]["reason"]
    kept = info["timing"]["comparisons"][-1]    # what was measured is reported, not dropped
    assert kept["attempts"] == 2 and kept["noise"] > 1e-9 and len(kept["samples"]["candidate"]) == 6
    env.close()


def test_a_correct_but_unscorable_program_earns_what_noise_cannot_take_away(py_task):
    """By default noise costs the speed score only down to its lower bound, never the
    correctness reward (else the fastest programs, whose score moves most within an
    interval, would be punished most), and never raises a reward."""
    # (no slow bound, no futility: the baseline is compared with itself, not stopped by a look)
    env = TimedReward(gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=True), max_noise=1e-9,
                      max_score_span=1e-9, cap=1e6, retries=0, repeats=6, max_pairs=6, skip_identical=False,
                      slow_bound=None, futility=False)
    r, info = _play(env, OracleAgent())
    t = info["timing"]
    assert t["scorable"] is False and t["correct"]
    cmp = t["comparisons"][-1]
    assert cmp["significant"] and cmp["ci"][0] > 1.0
    # the score at the interval's lower end: above nothing, below the point estimate's
    assert t["score_lower_bound"] == pytest.approx(math.log(cmp["ci"][0]) / math.log(1e6))
    assert 0.0 < t["score_lower_bound"] < math.log(cmp["speedup"]) / math.log(1e6)
    assert r == pytest.approx(env.correct_reward + t["score_lower_bound"])
    r, info = _play(env, OracleAgent(solution="baseline"))  # the baseline against itself: nothing
    t = info["timing"]
    assert t["correct"] and env.correct_reward == 1.0
    if t["comparisons"][-1]["significant"]:
        # identical programs come out "significant" by chance at the test's false-positive
        # rate (~1 %, more on a noisy VM): even then only the interval's lower end counts,
        # a sliver above 1 for a speedup that is ~1x
        assert r == pytest.approx(env.correct_reward + t["score_lower_bound"]) and r < 1.01
    else:
        assert r == env.correct_reward
    r, info = _play(env, MutantAgent(kinds=["output"], seed=0))
    assert r == 0.0 and info["timing"]["correct"] is False
    env.close()
    fixed = TimedReward(gym.make("codegym/Suite-v0", tasks=[py_task], early_exit=True), max_noise=1e-9,
                        max_score_span=1e-9, cap=1e6, retries=0, repeats=6, max_pairs=6,
                        unscorable_reward=1.0)
    r, info = _play(fixed, OracleAgent())
    assert info["timing"]["scorable"] is False and r == 1.0 and "score_lower_bound" not in info["timing"]
    fixed.close()


def test_timed_instructions_mode_is_exactly_repeatable(c_task):
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (metric 'instructions')")
    env = TimedReward(gym.make("codegym/Suite-v0", tasks=[c_task], early_exit=True), metric="instructions",
                      skip_identical=False)
    # each comparison counts both programs twice (A B B A): equal counts make the CI a point
    r, info = _play(env, OracleAgent())
    cmp = info["timing"]["comparisons"][0]
    assert r == 2.0 and cmp["speedup"] > 10 and cmp["ci"] == [cmp["speedup"], cmp["speedup"]]
    assert cmp["samples"]["candidate"][0] == cmp["samples"]["candidate"][1]
    r, info = _play(env, OracleAgent(solution="baseline"))   # measured, not skipped: exactly 1
    cmp = info["timing"]["comparisons"][0]
    assert r == 1.0 and not cmp["identical"] and cmp["speedup"] == 1.0 and cmp["ci"] == [1.0, 1.0]
    env.close()


def test_check_env_on_a_fully_wrapped_env(c_task):
    from gymnasium.utils.env_checker import check_env
    env = gym.make("codegym/Suite-v0", tasks=[c_task])
    env = apply_reward_wrappers(env, [{"type": "timed", "metric": "instructions"},
                                      {"type": "progress_shaping"}, {"type": "format_penalty"},
                                      {"type": "diff_size_penalty"}, {"type": "diff_credit"}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)
    env.close()
