"""The offline reward simulator (`codegym rewards simulate`).

Recordings are made for real: a ``codegym eval`` of the oracle, baseline and mutant
agents and a ``collect`` of mutants on a small timed task, the accepted programs measured
in the local sandbox, plus seeded synthetic variants at known speedups. A configuration
with a deliberately broken ordering (a wrong program paid more than a slow correct one)
must rank last; the good ones must be sound and correlate with speed. Also: the
simulated reward equals the wrapper's on the same episode, shaping replays the real
wrappers, noise flips come from the recorded intervals, and bad candidate files name
the file and line.
"""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest

from codegym.agents import MutantAgent
from codegym.cli.main import main as cli_main
from codegym.evaluation.recordings import (
    Interval,
    MetricTimes,
    Recording,
    load_recordings,
    measure_recordings,
    save_recordings,
    synthetic_variants,
)
from codegym.evaluation.runner import run_eval
from codegym.evaluation.simulate import (
    SimSettings,
    SimulationError,
    episode_return,
    load_candidates,
    parse_candidates,
    simulate,
)
from codegym.rollout.collect import collect
from codegym.rollout.records import write_jsonl
from codegym.sandbox import make_sandbox
from codegym.tasks.suite import load_suite
from codegym.wrappers.measure import TimingSettings

SUITE_YAML = """\
suite: {description: simulator fixture}
kind: stdio
checker: tokens
limits: {time_s: 5, memory_mb: 256}
perf: {baseline: baseline, reference: reference, metric: cpu, repeats: 3}
"""

TASK_YAML = '''\
title: Square sums
statement: |
  Read q, then q integers n. For each, print 1^2 + 2^2 + ... + n^2.
language: python
starter:
  main.py: |
    import sys
    data = sys.stdin.read().split()
    for n in map(int, data[1:]):
        total = 0
        for i in range(1, n + 1):
            total += i * i
        print(total)
tests:
  public:
    - {stdin: "2\\n1\\n3\\n", expected: "1\\n14\\n"}
  hidden:
    - {stdin: "3\\n2\\n10\\n100\\n", expected: "5\\n385\\n338350\\n"}
    - {stdin: "1\\n0\\n", expected: "0\\n"}
  perf:
    - stdin: "3\\n100000\\n100000\\n100000\\n"
solutions:
  reference:
    files:
      main.py: |
        import sys
        data = sys.stdin.read().split()
        print("\\n".join(str(n * (n + 1) * (2 * n + 1) // 6) for n in map(int, data[1:])))
  medium:
    files:
      main.py: |
        import sys
        data = sys.stdin.read().split()
        for n in map(int, data[1:]):
            print(sum(i * i for i in range(1, n + 1)))
  baseline:
    files:
      main.py: |
        import sys
        data = sys.stdin.read().split()
        for n in map(int, data[1:]):
            total = 0
            for i in range(1, n + 1):
                total += i * i
            print(total)
'''

CANDIDATES = """\
configurations:
  - name: pass-fraction
    reward: []
  - name: staged
    reward: [{type: staged}]
  - name: timed-log
    reward: [{type: timed, mode: speedup, cap: 10}]
  - name: timed-top50
    reward: [{type: timed, mode: percentile, percentiles: [50]}]
  - name: broken-order          # a wrong program earns more than a correct, slow one
    reward: [{type: timed, correct_reward: 0.0, fail_reward: 0.8}]
  - name: staged-penalised
    reward: [{type: staged}, {type: format_penalty, penalty: 0.05}]
simulation:
  draws: 40
  seed: 3
"""

SPEEDUPS = [1.0, 1.5, 2.0, 4.0, 8.0, 20.0]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """(recordings incl. synthetic, tasks, the eval dir, the collect file, the suite dir)."""
    tmp = tmp_path_factory.mktemp("sim")
    suite = tmp / "tasks" / "simfix"
    suite.mkdir(parents=True)
    (suite / "suite.yaml").write_text(SUITE_YAML)
    (suite / "square-sums.yaml").write_text(TASK_YAML)
    (tmp / "eval.yaml").write_text(textwrap.dedent(f"""\
        name: simrec
        agents: [oracle, baseline, {{spec: "mutant:output,crash,syntax", name: mutant}}]
        suites: [{suite}]
        samples: 2
        max_turns: 2
        progress: false
        report: false
        """))
    summary = run_eval(tmp / "eval.yaml", tmp / "eval")
    assert summary.complete, summary
    tasks = {t.id: t for t in load_suite(suite)}
    env = gym.make("codegym/Suite-v0", suite=str(suite), max_turns=2)
    trajs = collect(env, MutantAgent(kinds=("output", "operator"), seed=4), group_size=3, seed=1)
    env.close()
    write_jsonl(tmp / "collect.jsonl", trajs)
    recs = load_recordings([tmp / "eval", tmp / "collect.jsonl"])
    with make_sandbox("local") as sb:
        n = measure_recordings(recs, tasks, sb, settings=TimingSettings(repeats=3, max_pairs=3))
    assert n >= 4
    recs += synthetic_variants(recs, SPEEDUPS, seed=7)
    return recs, tasks, tmp


def test_recordings_hold_reports_and_timings(recorded):
    recs, _, _ = recorded
    by_agent = {r.agent: r for r in recs if not r.synthetic}
    assert {"oracle", "baseline", "mutant"} <= set(by_agent)
    oracle = by_agent["oracle"].times()
    assert oracle is not None and oracle.identical_to == "reference"
    assert {"baseline", "reference", "medium"} <= set(oracle.solutions)
    b, r = oracle.solutions["baseline"], oracle.solutions["reference"]
    assert b.value > r.value and b.lo <= b.value <= b.hi  # the measured gap and its interval
    assert all(not r.correct for r in recs if r.agent == "mutant")
    collected = [r for r in recs if r.source == "collect"]
    assert collected and len({r.group for r in collected}) == 1  # one GRPO group of 3, as collected
    synth = [r for r in recs if r.synthetic]
    assert sorted({r.true_speedup for r in synth}) == SPEEDUPS and all(r.correct for r in synth)


def test_broken_ordering_ranks_last(recorded, tmp_path):
    recs, tasks, _ = recorded
    cands, settings = parse_candidates_text(CANDIDATES, tmp_path)
    results = simulate(recs, cands, settings, tasks=tasks)
    by = {r.name: r for r in results}
    assert results[-1].name == "broken-order"
    assert not by["broken-order"].sound and by["broken-order"].details["wrong_above_correct"] > 0
    for good in ("staged", "timed-log", "timed-top50", "staged-penalised"):
        assert by[good].sound, by[good].to_dict()
        assert by[good].details["correct_without_times"] == 0  # every correct program was measured
        assert by[good].details["wrong_above_correct"] == 0
    for speedy in ("staged", "timed-log"):
        assert by[speedy].rank_correlation is not None and by[speedy].rank_correlation > 0.8
        assert by[speedy].speed_signal_share == 1.0
    assert by["pass-fraction"].speed_signal_share == 0.0 and by["pass-fraction"].expected_flips == 0.0
    assert all(0.0 <= r.flip_rate <= 1.0 and r.nonzero_share > 0 for r in results)
    assert [r.rank for r in results] == list(range(1, len(results) + 1))


def parse_candidates_text(text: str, tmp: Path):
    p = tmp / "candidates.yaml"
    p.write_text(text)
    return load_candidates(p)


def test_simulated_reward_equals_the_wrappers(recorded, tmp_path):
    """An eval with an untimed staged reward records the wrapper's rewards: the simulator
    gives the same value for every episode."""
    _, tasks, tmp = recorded
    suite = tmp / "tasks" / "simfix"
    cfg = tmp_path / "eval.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        agents: [oracle, baseline, {{spec: "mutant:output,crash,syntax", name: mutant}}]
        suites: [{suite}]
        samples: 2
        max_turns: 2
        progress: false
        report: false
        reward: [{{type: staged, timed: false}}, {{type: format_penalty, penalty: 0.05}}]
        """))
    assert run_eval(cfg, tmp_path / "out").complete
    recs = load_recordings([tmp_path / "out"])
    (cand,), _ = parse_candidates([{"name": "x", "reward": [{"type": "staged", "timed": False},
                                                            {"type": "format_penalty", "penalty": 0.05}]}])
    recorded_returns = {json.loads(line)["key"]: json.loads(line)["return"]
                        for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()}
    for r in recs:
        assert episode_return(r, cand) == pytest.approx(recorded_returns[r.key], abs=1e-12), r.key


def _rec(key: str, verdict: str, cand: float | None, group: str = "g", steps=None, rel: float = 0.01) -> Recording:
    sol = {"baseline": Interval(1.0, 0.99, 1.01), "reference": Interval(0.1, 0.099, 0.101)}
    mt = MetricTimes("s", Interval(cand, cand * (1 - rel), cand * (1 + rel)) if cand else None, sol,
                     "baseline", "reference")
    return Recording(key=key, group=group, task_id="t/x", agent="a",
                     report={"verdict": verdict, "passed": 2 if verdict == "accepted" else 1, "total": 2},
                     steps=steps or [{"diff": "", "error": None, "submitted": True, "judge": None}],
                     timings={"cpu": mt} if verdict == "accepted" else {}, default_metric="cpu")


def test_shaping_is_replayed_with_the_real_wrapper():
    steps = [{"diff": "", "error": "no edit found", "submitted": False, "judge": None},
             {"diff": "", "error": None, "submitted": True, "judge": None}]
    rec = _rec("e", "accepted", 0.5, steps=steps)
    (c1, c2), _ = parse_candidates([
        {"name": "inner", "reward": [{"type": "format_penalty", "penalty": 0.25}, {"type": "staged"}]},
        {"name": "outer", "reward": [{"type": "staged"}, {"type": "format_penalty", "penalty": 0.25}]}])
    # the penalty of the first (non-final) step counts wherever the wrapper sits
    assert episode_return(rec, c1) == pytest.approx(episode_return(rec, c2))
    (plain,), _ = parse_candidates([{"name": "p", "reward": [{"type": "staged"}]}])
    assert episode_return(rec, c2) == pytest.approx(episode_return(rec, plain) - 0.25)


def test_noise_flips_come_from_the_intervals():
    """Two correct programs 1 % apart: with 10 % intervals a sharp speed reward flips often;
    with 0.1 % intervals never; pass-fraction never."""
    cands, _ = parse_candidates([{"name": "pf", "reward": []},
                                 {"name": "t", "reward": [{"type": "timed", "max_noise": 10.0}]}])
    settings = SimSettings(draws=200, seed=1)
    noisy = [_rec("a", "accepted", 0.50, rel=0.10), _rec("b", "accepted", 0.505, rel=0.10)]
    quiet = [_rec("a", "accepted", 0.30, rel=0.001), _rec("b", "accepted", 0.60, rel=0.001)]
    res_noisy = {r.name: r for r in simulate(noisy, cands, settings)}
    res_quiet = {r.name: r for r in simulate(quiet, cands, settings)}
    assert res_noisy["pf"].expected_flips == 0.0
    assert res_noisy["t"].expected_flips > 0.1
    assert res_quiet["t"].expected_flips == 0.0


def test_bad_candidates_file_names_the_line(tmp_path):
    bad = ("configurations:\n  - name: a\n    reward: [{type: timed, cap: 0.5}]\n"
           "  - name: b\n    reward: [{type: stagd}]\n")
    with pytest.raises(SimulationError) as ei:
        parse_candidates_text(bad, tmp_path)
    text = str(ei.value)
    assert "candidates.yaml:3: configurations[0].reward[0]" in text and "cap" in text
    assert "candidates.yaml:5: configurations[1].reward[0].type" in text and "staged" in text


def test_cli_end_to_end(recorded, tmp_path, capsys):
    recs, _, tmp = recorded
    saved = tmp_path / "rec.jsonl"
    save_recordings(saved, recs)
    cands = tmp_path / "candidates.yaml"
    cands.write_text(CANDIDATES)
    out = tmp_path / "report.json"
    rc = cli_main(["rewards", "simulate", str(cands), "--episodes", str(saved), "--out", str(out), "--draws", "10"])
    assert rc == 0
    report = json.loads(out.read_text())
    names = [c["name"] for c in report["configurations"]]
    assert names[-1] == "broken-order" and report["episodes"] == len(recs)
    assert "broken-order" in capsys.readouterr().out
    assert all(math.isfinite(c["score"]) for c in report["configurations"])
    assert cli_main(["rewards", "simulate", str(tmp_path / "missing.yaml"), "--episodes", str(saved)]) == 2
