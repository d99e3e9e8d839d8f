"""Tests for codegym.rollout.advantages against hand-computed cases (numbers in comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from codegym.rollout.advantages import (
    diff_anchor_advantages,
    discounted_returns,
    dr_grpo,
    episode_advantages,
    groupability_score,
    grpo,
    project_to_tokens,
    reinforce_pp,
    reinforce_pp_baseline,
    rloo,
    step_anchor_advantages,
    token_advantages,
)


# ----------------------------------------------------------------------------- outcome level
def test_grpo_hand_case_with_singleton_group():
    r = [1.0, 0.0, 0.0, 1.0, 0.5]
    g = ["a", "a", "a", "a", "b"]
    # group a: mean 0.5, population std 0.5 -> +-0.5/(0.5+1e-6) = +-0.999998; b alone -> 0
    np.testing.assert_allclose(grpo(r, g), [0.999998, -0.999998, -0.999998, 0.999998, 0.0], rtol=1e-6)
    # ddof=1: std = sqrt((4*0.25)/3) = 0.577350 -> 0.5/0.577350 = 0.866025
    np.testing.assert_allclose(grpo(r, g, ddof=1, eps=0.0), [0.866025, -0.866025, -0.866025, 0.866025, 0.0], rtol=1e-5)
    # scale=False: just centred
    np.testing.assert_allclose(grpo(r, g, scale=False), [0.5, -0.5, -0.5, 0.5, 0.0])
    # eps is explicit: eps=1 -> 0.5/1.5
    np.testing.assert_allclose(grpo(r, g, eps=1.0)[:2], [1 / 3, -1 / 3])


def test_grpo_zero_variance_and_empty_and_int_ids():
    out = grpo([2.0, 2.0, 2.0, 1.0, 3.0], [7, 7, 7, 8, 8], eps=0.0)
    # group 7 constant -> 0 even with eps=0 (no nan); group 8: mean 2, std 1 -> -1, 1
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, -1.0, 1.0])
    assert grpo([], []).shape == (0,)
    with pytest.raises(ValueError):
        grpo([1.0, 2.0], ["a"])


def test_dr_grpo_and_rloo():
    r = [3.0, 1.0, 2.0, 5.0]
    g = ["x", "x", "x", "y"]
    # mean_x = 2 -> [1, -1, 0]; y alone -> 0
    np.testing.assert_allclose(dr_grpo(r, g), [1.0, -1.0, 0.0, 0.0])
    # leave-one-out means: (1+2)/2=1.5, (3+2)/2=2.5, (3+1)/2=2 -> [1.5, -1.5, 0]; y -> 0
    np.testing.assert_allclose(rloo(r, g), [1.5, -1.5, 0.0, 0.0])
    # = n/(n-1) * dr_grpo within groups of n > 1
    np.testing.assert_allclose(rloo(r, g)[:3], 1.5 * dr_grpo(r, g)[:3])
    np.testing.assert_allclose(rloo([4.0, 4.0], [0, 0]), [0.0, 0.0])


def test_reinforce_pp_and_baseline_variant():
    # mean 2.5, population std sqrt(1.25) = 1.118034
    np.testing.assert_allclose(reinforce_pp([1.0, 2.0, 3.0, 4.0]), [-1.341640, -0.447214, 0.447214, 1.341640], rtol=1e-5)  # noqa: E501
    np.testing.assert_array_equal(reinforce_pp([5.0]), [0.0])
    np.testing.assert_allclose(reinforce_pp([3.0, 3.0]), [0.0, 0.0])
    # group means: a=2 -> [-1, 1]; b=12 -> [-2, 2]; c alone -> 0 and excluded from stats.
    # batch of [-1,1,-2,2]: mean 0, std sqrt(10/4) = 1.581139
    out = reinforce_pp_baseline([1.0, 3.0, 10.0, 14.0, 7.0], ["a", "a", "b", "b", "c"])
    np.testing.assert_allclose(out, [-0.632456, 0.632456, -1.264911, 1.264911, 0.0], rtol=1e-5)


def test_episode_advantages_from_records():
    trajs = [
        {"group_id": "g", "final_reward": 1.0, "total_reward": 2.0},
        {"group_id": "g", "final_reward": 0.0, "total_reward": 0.0},
        {"group_id": "h", "final_reward": 1.0, "total_reward": 1.0},
    ]
    np.testing.assert_allclose(episode_advantages(trajs, "dr_grpo"), [0.5, -0.5, 0.0])
    np.testing.assert_allclose(episode_advantages(trajs, "dr_grpo", reward="total"), [1.0, -1.0, 0.0])
    with pytest.raises(ValueError):
        episode_advantages(trajs, "ppo")


# ----------------------------------------------------------------------------- step level
def test_discounted_returns():
    # G2 = 2, G1 = 0 + 0.5*2 = 1, G0 = 1 + 0.5*1 = 1.5
    np.testing.assert_allclose(discounted_returns([1.0, 0.0, 2.0], 0.5), [1.5, 1.0, 2.0])
    np.testing.assert_allclose(discounted_returns([1.0, 1.0], 1.0), [2.0, 1.0])
    assert discounted_returns([], 0.9).shape == (0,)


def _st(pre_state, reward, obs=""):
    return {"pre_state": pre_state, "reward": reward, "observation": obs}


def test_step_anchor_states_exact_and_similarity():
    o1 = "line1\nline2\nline3\nline4"
    o2 = "line1\nline2\nline3\nlineX"  # ratio over lines: 2*3/8 = 0.75
    trajs = [
        {"group_id": "g", "steps": [_st("s0", 0.0), _st("s1", 1.0, o1)]},  # returns [1, 1]
        {"group_id": "g", "steps": [_st("s0", 0.0), _st("s2", 0.0, o2)]},  # returns [0, 0]
        {"group_id": "other", "steps": [_st("s0", 5.0)]},  # same state, other group: alone
    ]
    exact = step_anchor_advantages(trajs, gamma=1.0)
    # anchor s0 in group g: returns [1, 0], mean 0.5 -> +0.5 / -0.5; s1, s2 singletons -> 0
    np.testing.assert_allclose(exact[0], [0.5, 0.0])
    np.testing.assert_allclose(exact[1], [-0.5, 0.0])
    np.testing.assert_allclose(exact[2], [0.0])
    sim = step_anchor_advantages(trajs, gamma=1.0, mode="similarity", threshold=0.7)
    # s1 ~ s2 (0.75 >= 0.7): returns [1, 0] -> +-0.5
    np.testing.assert_allclose(sim[0], [0.5, 0.5])
    np.testing.assert_allclose(sim[1], [-0.5, -0.5])
    strict = step_anchor_advantages(trajs, gamma=1.0, mode="similarity", threshold=0.8)
    np.testing.assert_allclose(strict[0], [0.5, 0.0])
    scaled = step_anchor_advantages(trajs, gamma=1.0, scale=True)
    # s0: [1, 0] std 0.5 -> +-0.5/(0.5+1e-6)
    np.testing.assert_allclose(scaled[0], [0.999998, 0.0], rtol=1e-6)
    # gamma=0.5: A returns [0.5, 1], B [0, 0]: s0 -> +-0.25
    np.testing.assert_allclose(step_anchor_advantages(trajs, gamma=0.5)[0], [0.25, 0.0])


# ----------------------------------------------------------------------------- diff level
def test_groupability_score_values():
    # (1-e^{-4/8}) (1-e^{-2/8}) = 0.393469 * 0.221199 = 0.087035
    assert groupability_score(4, 3) == pytest.approx(0.087035, rel=1e-5)
    assert groupability_score(100, 1) == 0.0
    assert groupability_score(8, 9, s0=8, g0=8) == pytest.approx((1 - math.exp(-1)) ** 2)


def _unit(sig, n_lines, span=None, kind="replace", pre=None, post=None, path="main.py", scope="function:f"):
    return {"signature": sig, "n_lines": n_lines, "span": span, "kind": kind, "path": path, "scope": scope,
            "pre_image": pre if pre is not None else [f"pre {sig}"],
            "post_image": post if post is not None else [f"post {sig}"]}


def _traj(units_per_step, rewards, group="g", actions=None, ids=None):
    steps = []
    for k, (units, r) in enumerate(zip(units_per_step, rewards)):
        steps.append({
            "index": k, "reward": r, "diff_units": units,
            "action": actions[k] if actions else "x" * 80,
            "response_ids": ids[k] if ids else None,
        })
    return {"group_id": group, "steps": steps}


def test_diff_anchor_exact_grouping_singletons_never_anchor():
    trajs = [
        _traj([[_unit("X", 4)]], [1.0]),
        _traj([[_unit("X", 4)]], [0.0]),
        _traj([[_unit("X", 4)]], [1.0]),
        _traj([[_unit("Y", 2)]], [0.0]),
    ]
    res = diff_anchor_advantages(trajs, eta=1.0)
    assert len(res.anchors) == 1
    a = res.anchors[0]
    # GS(Lbar=4, n=3) = 0.087035 ; returns [1, 0, 1], mean 2/3 -> [1/3, -2/3, 1/3]
    assert a.gs == pytest.approx(0.087035, rel=1e-5)
    assert [(o.traj, o.advantage) for o in a.members] == [(0, pytest.approx(1 / 3)), (1, pytest.approx(-2 / 3)), (2, pytest.approx(1 / 3))]  # noqa: E501
    assert res.unit_advantages() == {(0, 0, 0): pytest.approx(1 / 3), (1, 0, 0): pytest.approx(-2 / 3), (2, 0, 0): pytest.approx(1 / 3)}  # noqa: E501
    y = res.of_step(3, 0)[0]
    assert y.anchor is None and y.advantage == 0.0
    # Anchors never cross groups: move trajectory 2 to another group -> X has n=2.
    trajs[2]["group_id"] = "h"
    res2 = diff_anchor_advantages(trajs, eta=1.0)
    assert len(res2.anchors) == 1 and len(res2.anchors[0].members) == 2
    # returns [1, 0] -> +-0.5 ; GS(4, 2) = 0.393469 * (1 - e^{-1/8}) = 0.046234
    assert [o.advantage for o in res2.anchors[0].members] == [0.5, -0.5]
    assert res2.anchors[0].gs == pytest.approx(0.046234, rel=1e-4)


def test_diff_anchor_similarity_threshold_eta():
    post_a = ["a = 1", "b = 2", "c = 3", "return a + b + c"]
    post_b = ["a = 1", "b = 2", "c = 3", "return a+b+c"]
    pre = ["return 0"]
    # unit similarity = (2*1.0 [pre] + 8*0.75 [post]) / 10 = 0.8
    trajs = [
        _traj([[_unit("A", 5, pre=pre, post=post_a)]], [1.0]),
        _traj([[_unit("B", 5, pre=pre, post=post_b)]], [0.0]),
    ]
    res = diff_anchor_advantages(trajs, eta=0.8)
    assert len(res.anchors) == 1
    assert [o.advantage for o in res.anchors[0].members] == [0.5, -0.5]
    assert diff_anchor_advantages(trajs, eta=0.85).anchors == []
    # Different kinds never group, whatever the lines.
    trajs[1]["steps"][0]["diff_units"][0]["kind"] = "add"
    assert diff_anchor_advantages(trajs, eta=0.5).anchors == []


def test_diff_anchor_fuzzy_cluster_beats_exact_bucket():
    # Exact buckets A (2 members) and B (1): the fuzzy cluster A+B (3) has higher GS and
    # claims all three; the exact bucket A is then empty.
    post_a = ["a = 1", "b = 2", "c = 3", "return a + b + c"]
    post_b = ["a = 1", "b = 2", "c = 3", "return a+b+c"]
    trajs = [
        _traj([[_unit("A", 4, pre=[], post=post_a, kind="add")]], [1.0]),
        _traj([[_unit("A", 4, pre=[], post=post_a, kind="add")]], [1.0]),
        _traj([[_unit("B", 4, pre=[], post=post_b, kind="add")]], [0.0]),
    ]
    # add units: similarity = 8*0.75/8 = 0.75
    res = diff_anchor_advantages(trajs, eta=0.75)
    assert len(res.anchors) == 1
    # GS(4, 3) = 0.087035 > GS(4, 2); returns [1, 1, 0] mean 2/3 -> [1/3, 1/3, -2/3]
    assert res.anchors[0].gs == pytest.approx(0.087035, rel=1e-5)
    np.testing.assert_allclose([o.advantage for o in res.anchors[0].members], [1 / 3, 1 / 3, -2 / 3])
    # With eta=0.8 only the exact bucket A anchors: returns [1, 1] -> 0, 0
    res = diff_anchor_advantages(trajs, eta=0.8)
    assert len(res.anchors) == 1 and [o.traj for o in res.anchors[0].members] == [0, 1]


def _greedy_case():
    # T0: F (10 lines, chars 0-50) and S (2 lines, chars 40-60) overlap; T1: F and S apart.
    trajs = [
        _traj([[_unit("F", 10, (0, 50)), _unit("S", 2, (40, 60))]], [1.0]),
        _traj([[_unit("F", 10, (0, 50)), _unit("S", 2, (60, 70))]], [0.0]),
        _traj([[_unit("S", 2, (0, 10))]], [1.0]),
        _traj([[_unit("F", 10, (0, 50))]], [0.5]),
    ]
    return trajs


def test_diff_anchor_greedy_cap_and_overlap_cut():
    trajs = _greedy_case()
    # GS(F) = (1-e^{-10/8}) (1-e^{-2/8}) = 0.713495 * 0.221199 = 0.157825
    # GS(S) before the cut = (1-e^{-2/8})^2 = 0.048929 -> F first.
    res = diff_anchor_advantages(trajs, eta=1.0, cap=1)
    assert len(res.anchors) == 1
    f = res.anchors[0]
    assert f.gs == pytest.approx(0.157825, rel=1e-5)
    # F returns T0=1, T1=0, T3=0.5: mean 0.5 -> [0.5, -0.5, 0.0]
    assert [(o.traj, o.advantage) for o in f.members] == [(0, 0.5), (1, -0.5), (3, 0.0)]
    res = diff_anchor_advantages(trajs, eta=1.0, cap=2)
    assert len(res.anchors) == 2
    s = res.anchors[1]
    # T0's S overlaps T0's F (40 < 50): cut. S keeps T1 (60-70) and T2: n=2, Lbar=2:
    # GS = 0.221199 * (1 - e^{-1/8}) = 0.221199 * 0.117503 = 0.025991; returns [0, 1] -> [-0.5, 0.5]
    assert s.gs == pytest.approx(0.025991, rel=1e-4)
    assert [(o.traj, o.unit, o.advantage) for o in s.members] == [(1, 1, -0.5), (2, 0, 0.5)]
    assert res.of_step(0, 0)[1].anchor is None
    d = res.diagnostics()
    assert d["n_units"] == 6 and d["n_anchors"] == 2 and d["anchored_frac"] == pytest.approx(5 / 6)


def test_diff_anchor_one_occurrence_per_step():
    # T0 makes edit X twice in one step (2 and 6 lines, disjoint spans); T1 once.
    trajs = [
        _traj([[_unit("X", 2, (0, 5)), _unit("X", 6, (10, 20))]], [1.0]),
        _traj([[_unit("X", 4, (0, 5))]], [0.0]),
    ]
    res = diff_anchor_advantages(trajs, eta=1.0)
    # the larger occurrence (6 lines) represents T0's step: Lbar = (6+4)/2 = 5
    assert len(res.anchors) == 1
    assert [(o.traj, o.unit) for o in res.anchors[0].members] == [(0, 1), (1, 0)]
    assert res.anchors[0].mean_lines == 5.0
    # the smaller one stays alone (a singleton cannot anchor)
    assert res.of_step(0, 0)[0].anchor is None


def test_diff_anchor_step_returns_with_gamma():
    # T0: two steps, X at step 0, rewards [0, 1]; T1: X at step 0, reward [0.2]
    trajs = [
        _traj([[_unit("X", 3)], []], [0.0, 1.0]),
        _traj([[_unit("X", 3)]], [0.2]),
    ]
    # gamma=0.5: T0 step-0 return = 0 + 0.5*1 = 0.5; T1 0.2 -> mean 0.35 -> [0.15, -0.15]
    res = diff_anchor_advantages(trajs, eta=1.0, gamma=0.5)
    np.testing.assert_allclose([o.advantage for o in res.anchors[0].members], [0.15, -0.15])
    # scale: std of [0.5, 0.2] = 0.15 -> +-1
    res = diff_anchor_advantages(trajs, eta=1.0, gamma=0.5, scale=True, eps=0.0)
    np.testing.assert_allclose([o.advantage for o in res.anchors[0].members], [1.0, -1.0])


def test_preimage_key_compares_different_edits_of_same_code():
    pre = ["for i in range(n):", "    s += a[i]"]
    trajs = [
        _traj([[_unit("E1", 3, pre=pre, post=["s = sum(a)"])]], [1.0]),
        _traj([[_unit("E2", 3, pre=pre, post=["s = sum(a[:n])"])]], [0.0]),
        # pure insertions in the same file and scope form one preimage anchor too
        _traj([[_unit("I1", 2, kind="add", pre=[], post=["import sys"], scope="module")]], [1.0]),
        _traj([[_unit("I2", 2, kind="add", pre=[], post=["import os"], scope="module")]], [0.0]),
    ]
    # subdiff: four different edits -> no anchor at eta=1
    assert diff_anchor_advantages(trajs, key="subdiff", eta=1.0).anchors == []
    res = diff_anchor_advantages(trajs, key="preimage", eta=1.0)
    assert sorted((tuple(o.traj for o in a.members), tuple(o.advantage for o in a.members)) for a in res.anchors) == [
        ((0, 1), (0.5, -0.5)), ((2, 3), (0.5, -0.5))]
    with pytest.raises(ValueError):
        diff_anchor_advantages(trajs, key="postimage")


def test_project_to_chars_when_no_ids():
    trajs = _greedy_case()
    res = diff_anchor_advantages(trajs, eta=1.0, cap=2)
    proj = project_to_tokens(trajs, res)
    t0 = proj[0][0]
    # T0: F (adv 0.5) on chars 0-50; its S was cut (not anchored) -> 50-80 stay 0
    assert t0.shape == (80,)
    np.testing.assert_array_equal(t0[:50], 0.5)
    np.testing.assert_array_equal(t0[50:], 0.0)
    t1 = proj[1][0]
    # T1: F adv -0.5 on 0-50, S adv -0.5 on 60-70, rest 0
    np.testing.assert_array_equal(t1[:50], -0.5)
    np.testing.assert_array_equal(t1[50:60], 0.0)
    np.testing.assert_array_equal(t1[60:70], -0.5)
    np.testing.assert_array_equal(t1[70:], 0.0)
    # token_advantages: episode + lam * diff
    ep = np.array([1.0, 2.0, 3.0, 4.0])
    tok = token_advantages(trajs, ep, lam=0.5, anchors=res)
    np.testing.assert_allclose(tok[1][0][:50], 2.0 - 0.25)
    np.testing.assert_allclose(tok[1][0][55], 2.0)
    np.testing.assert_allclose(tok[2][0][:10], 3.0 + 0.25)  # T2's S adv 0.5


def test_token_projection_with_local_tokenizer_multibyte_and_leading_spaces():
    pytest.importorskip("tokenizers", reason="tokenizers is needed for the local tokenizer")
    from _tokenizer import code_tokenizer

    tok = code_tokenizer()
    text = "a = 1\n    return 你\n"
    # chars: a0 ' '1 '='2 ' '3 '1'4 '\n'5 ' '6-9 return10-15 ' '16 你17 '\n'18
    pieces = ["a", "Ġ=", "Ġ1", "ĊĠĠĠ", "Ġreturn", "Ġ", "ä", "½", "ł", "Ċ"]
    ids = [tok.token_to_id(p) for p in pieces]
    if None in ids:
        pytest.skip(f"trained vocabulary lacks one of {pieces}")
    assert tok.decode(ids) == text
    # token chars: a[0,1) Ġ=[1,3) Ġ1[3,5) ĊĠĠĠ[5,9) Ġreturn[9,16) Ġ[16,17) ä½ł[17,18)x3 Ċ[18,19)
    ua = _unit("A", 1, (0, 6))   # "a = 1\n"
    ub = _unit("B", 6, (6, 19))  # "    return 你\n"
    trajs = [
        _traj([[ua, ub]], [1.0], actions=[text], ids=[ids]),
        _traj([[_unit("A", 1, (0, 6)), _unit("B", 6, (6, 19))]], [0.0], actions=[text], ids=[ids]),
        _traj([[_unit("A", 1, (0, 6))]], [0.0], actions=[text], ids=[ids]),
    ]
    res = diff_anchor_advantages(trajs, eta=1.0)
    # GS(A: L=1, n=3) = 0.117503 * 0.221199 = 0.025992 ; GS(B: L=6, n=2) = 0.527633 * 0.117503 = 0.061998
    gs = {a.key: a.gs for a in res.anchors}
    assert gs["A"] == pytest.approx(0.025992, rel=1e-4) and gs["B"] == pytest.approx(0.061998, rel=1e-4)
    # A: returns [1, 0, 0] mean 1/3 -> T0 +2/3 ; B: returns [1, 0] -> T0 +0.5
    proj = project_to_tokens(trajs, res, decode=tok)
    t0 = proj[0][0]
    assert t0.shape == (len(ids),)
    # tokens 0-2 inside A -> 2/3; token 3 "ĊĠĠĠ" [5,9) straddles A and B: B has the higher
    # GS -> 0.5; the rest (leading-space "Ġreturn", the three bytes of 你) inside B -> 0.5
    np.testing.assert_allclose(t0, [2 / 3] * 3 + [0.5] * 7)
    # T2 has only A (adv -1/3): tokens 0-3 -> -1/3 (token 3 overlaps A), the rest 0
    np.testing.assert_allclose(proj[2][0], [-1 / 3] * 4 + [0.0] * 6)
    # A span covering only 你 maps to its three byte tokens (6, 7, 8).
    trajs2 = [_traj([[_unit("C", 1, (17, 18))]], [r], actions=[text], ids=[ids]) for r in (1.0, 0.0)]
    proj2 = project_to_tokens(trajs2, diff_anchor_advantages(trajs2, eta=1.0), decode=tok)
    np.testing.assert_allclose(proj2[0][0], [0.0] * 6 + [0.5] * 3 + [0.0])
    # Final token advantages: grpo episode advantage + lam * diff
    ep = grpo([1.0, 0.0, 0.0], ["g"] * 3, eps=0.0)  # mean 1/3, std 0.471405 -> [1.414214, -0.707107, -0.707107]
    final = token_advantages(trajs, ep, lam=2.0, decode=tok, eta=1.0)
    np.testing.assert_allclose(final[0][0], 1.414214 + 2.0 * np.array([2 / 3] * 3 + [0.5] * 7), rtol=1e-5)
    # ids without a decode cannot be mapped: a clear error, not silent zeros.
    with pytest.raises(ValueError, match="decode"):
        project_to_tokens(trajs, res)
    # text that is not the decode of the ids is reported.
    trajs[0]["steps"][0]["action"] = text.upper()
    with pytest.raises(ValueError):
        project_to_tokens(trajs, res, decode=tok)


def test_token_advantages_with_step_advantages_and_no_units():
    trajs = [
        {"group_id": "g", "steps": [{"reward": 0.0, "action": "abc", "pre_state": "s0", "diff_units": []},
                                    {"reward": 1.0, "action": "de", "pre_state": "s1", "diff_units": []}]},
        {"group_id": "g", "steps": [{"reward": 0.0, "action": "xy", "pre_state": "s0", "diff_units": []}]},
    ]
    sa = step_anchor_advantages(trajs, gamma=1.0)  # s0: returns [1, 0] -> [0.5], [-0.5]
    out = token_advantages(trajs, [1.0, -1.0], lam=1.0, step_adv=sa, omega=2.0)
    np.testing.assert_allclose(out[0][0], [2.0, 2.0, 2.0])  # 1 + 0 + 2*0.5
    np.testing.assert_allclose(out[0][1], [1.0, 1.0])  # s1 alone -> 0
    np.testing.assert_allclose(out[1][0], [-2.0, -2.0])  # -1 + 2*(-0.5)
    with pytest.raises(ValueError):
        token_advantages(trajs, [1.0], lam=1.0)
