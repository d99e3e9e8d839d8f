"""Eval metrics (codegym.evaluation.metrics) on constructed cases with known answers."""

from __future__ import annotations

import itertools
import math
from math import comb

import pytest

from codegym.evaluation.metrics import (
    bootstrap_ci,
    compute_metrics,
    head_to_head,
    pass_at_k,
    pass_at_k_many,
    ranking,
    turn_stats,
)


def test_pass_at_k_matches_the_closed_form():
    for n in range(1, 16):
        for c in range(n + 1):
            for k in range(1, n + 1):
                closed = 1 - comb(n - c, k) / comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(closed, abs=1e-12), (n, c, k)


def test_pass_at_k_is_the_probability_that_a_random_k_subset_has_a_correct_sample():
    # enumerate every k-subset of n samples (c of them correct): the estimator is exact
    n, c = 7, 2
    samples = [1] * c + [0] * (n - c)
    for k in range(1, n + 1):
        subsets = list(itertools.combinations(samples, k))
        exact = sum(any(s) for s in subsets) / len(subsets)
        assert pass_at_k(n, c, k) == pytest.approx(exact)


def test_pass_at_k_special_cases_and_large_n_are_stable():
    assert pass_at_k(10, 0, 3) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(10, 8, 3) == 1.0          # n - c < k: every 3-subset holds a correct one
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)  # pass@1 is the fraction correct
    # binomials of n = 2000 overflow floats; the product form does not
    from fractions import Fraction
    v = pass_at_k(2000, 3, 1000)
    exact = 1 - Fraction(comb(1997, 1000), comb(2000, 1000))  # exact big-integer arithmetic
    assert v == pytest.approx(float(exact), rel=1e-12)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    vals = pass_at_k_many([4, 1, 4], [1, 1, 0], 2)
    assert vals[0] == pytest.approx(0.5) and math.isnan(vals[1]) and vals[2] == 0.0


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    x = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    a = bootstrap_ci(x, 500, seed=3)
    assert a == bootstrap_ci(x, 500, seed=3)
    est, lo, hi = a
    assert est == pytest.approx(0.7) and lo < est < hi and 0 <= lo and hi <= 1
    assert bootstrap_ci([1.0], 100)[1:] == (1.0, 1.0)


def _ep(agent, task, sample, correct, suite="s", perf=None, **kw):
    return {"agent": agent, "suite": suite, "task_id": task, "sample": sample, "correct": correct,
            "verdict": "accepted" if correct else "wrong_answer", "language": kw.get("language", "python"),
            "difficulty": kw.get("difficulty", "easy"), "family": task.split("/")[0], "turns": kw.get("turns", 1),
            "max_turns": 3, "submitted": True, "steps": kw.get("steps", []), "perf": perf}


def test_head_to_head_correctness_first_then_speed():
    rates = {"A": {"t1": 1.0, "t2": 0.5, "t3": 1.0, "t4": 0.0},
             "B": {"t1": 0.5, "t2": 0.5, "t3": 1.0, "t4": 0.0}}
    # t2 ties at 0.5: B's program is significantly faster (t(A)/t(B) = 2); t3: noisy, a tie
    speed = {("t2", "A", "B"): {"speedup": 2.0, "significant": True},
             ("t3", "A", "B"): {"speedup": 1.5, "significant": False}}
    h = head_to_head(rates, ["A", "B"], ["t1", "t2", "t3", "t4"], speed)
    assert h[("A", "B")]["outcomes"] == {"t1": 1, "t2": -1, "t3": 0, "t4": 0}
    assert h[("B", "A")]["outcomes"] == {"t1": -1, "t2": 1, "t3": 0, "t4": 0}
    assert h[("A", "B")]["win_rate"] == pytest.approx((1 + 0.5 * 2) / 4)
    assert h[("A", "B")]["decided_by_speed"] == 1


def test_ranking_orders_agents_and_gives_seeded_intervals():
    tasks = [f"t{i}" for i in range(12)]
    rates = {"good": {t: 1.0 for t in tasks}, "mid": {t: (1.0 if i % 2 else 0.0) for i, t in enumerate(tasks)},
             "bad": {t: 0.0 for t in tasks}}
    agents = ["bad", "mid", "good"]
    h = head_to_head(rates, agents, tasks)
    r = ranking(h, agents, tasks, n_boot=300, seed=1)
    assert [x["agent"] for x in r] == ["good", "mid", "bad"]
    assert r[0]["rank"] == 1 and r[0]["rank_ci"] == [1, 1]
    assert r[0]["score_ci"][0] <= r[0]["score"] <= r[0]["score_ci"][1]
    assert r == ranking(h, agents, tasks, n_boot=300, seed=1)


def test_turn_stats_counts_formats_and_unparseable_actions():
    steps = [{"formats": ["unified_diff"], "error_kind": None}, {"formats": [], "error_kind": "parse"},
             {"formats": ["code_block", "submit"], "error_kind": None}, {"formats": [], "error_kind": "apply"}]
    s = turn_stats([_ep("A", "f/t", 0, True, steps=steps, turns=4)])
    assert s["formats"] == {"code_block": 1, "submit": 1, "unified_diff": 1}
    assert s["unparseable_share"] == pytest.approx(0.25) and s["failed_edit_share"] == pytest.approx(0.25)
    assert s["turns_mean"] == 4 and s["turn_budget_used"] == pytest.approx(4 / 3)


def test_compute_metrics_on_a_constructed_eval():
    eps = []
    # 3 tasks, n = 2: A solves f/t1 twice, f/t2 once, f/t3 never; B solves f/t1 twice only
    for s in range(2):
        eps.append(_ep("A", "f/t1", s, True, perf={"speedup": 4.0, "speedup_significant": True, "efficiency": 0.5,
                                                  "top": {"50": True}, "correct_runnable": True}))
        eps.append(_ep("B", "f/t1", s, True, perf={"speedup": 1.0, "speedup_significant": False, "efficiency": 0.0,
                                                  "top": {"50": False}, "correct_runnable": True}))
        eps.append(_ep("A", "f/t2", s, s == 0, difficulty="hard",
                       perf={"speedup": 2.0, "speedup_significant": True, "efficiency": 1.0,
                             "top": {"50": None}, "correct_runnable": True} if s == 0 else None))
        eps.append(_ep("B", "f/t2", s, False, difficulty="hard"))
        eps.append(_ep("A", "g/t3", s, False, language="c"))
        eps.append(_ep("B", "g/t3", s, False, language="c"))
    m = compute_metrics(eps, agents=["A", "B"], ks=[1, 2], percentiles=[50], n_boot=200, seed=0)
    A, B = m["per_agent"]["A"], m["per_agent"]["B"]
    assert A["pass_at_k"]["1"]["value"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert A["pass_at_k"]["2"]["value"] == pytest.approx((1 + 1 + 0) / 3)
    assert B["pass_at_k"]["1"]["value"] == pytest.approx(1 / 3)
    assert A["pass1_by_difficulty"]["hard"]["value"] == pytest.approx(0.5)
    assert A["pass1_by_family"]["g"]["value"] == 0.0 and A["pass1_by_language"]["c"]["tasks"] == 1
    # strict top-50%: only f/t1 has a distribution (f/t2's event is None): A 1.0, B 0.0
    assert A["strict_top_pass1"]["50"]["value"] == 1.0 and A["strict_top_pass1"]["50"]["tasks"] == 1
    assert B["strict_top_pass1"]["50"]["value"] == 0.0
    assert A["relative_efficiency"]["mean"] == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert A["speedup"]["geomean"] == pytest.approx((4 * 4 * 2) ** (1 / 3))
    assert A["correct_runnable_rate"] == pytest.approx(3 / 6)
    # saturation: no task is solved by both on every sample except f/t1
    assert m["saturation"]["saturated"] == ["s:f/t1"] and m["saturation"]["unsolved"] == ["s:g/t3"]
    assert A["pass1_unsaturated"]["value"] == pytest.approx(0.25)
    assert m["head_to_head"]["matrix"]["A"]["B"] == pytest.approx((1 + 0.5 * 2) / 3)
    assert [r["agent"] for r in m["ranking"]] == ["A", "B"]
