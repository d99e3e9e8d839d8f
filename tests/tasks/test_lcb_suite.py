"""Tests of the lcb suite (tasks/lcb/): original LiveCodeBench-style problems.

Checks the shape every task must have (the two LiveCodeBench kinds, LeetCode-style
`class Solution` starters, LiveCodeBench metadata, 2026 release dates spread over the
year), that the real judge accepts each task's reference solution on the public and hidden
splits, that the starter stub is not accepted, and that the float tolerance of the float
tasks is tight enough to reject a slightly wrong answer.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from codegym import load_suite, load_task
from codegym.judge.run import judge

REPO = Path(__file__).resolve().parents[2]
LCB = REPO / "tasks" / "lcb"
TASK_NAMES = sorted(p.stem for p in LCB.glob("*.yaml") if p.name != "suite.yaml")
PLATFORMS = {"stdio": {"atcoder", "codeforces"}, "function": {"leetcode"}}


def _task(name: str):
    return load_task(LCB / f"{name}.yaml")


def test_suite_has_both_kinds_and_spread_dates():
    suite = load_suite(LCB)
    tasks = list(suite)
    assert len(tasks) >= 20
    assert sorted(t.id for t in tasks) == [f"lcb/{n}" for n in TASK_NAMES]
    kinds = Counter(t.kind for t in tasks)
    assert set(kinds) == {"stdio", "function"}
    # about half of each kind
    assert min(kinds.values()) >= len(tasks) * 2 // 5
    float_functions = [t for t in tasks if t.kind == "function" and t.checker
                       and t.checker.type == "float"]
    assert len(float_functions) >= 3
    assert Counter(t.metadata.difficulty for t in tasks).keys() == {"easy", "medium", "hard"}
    # release dates cover the year, so date windows select different subsets
    months = {t.metadata.release_date.month for t in tasks}
    assert len(months) >= 9
    since_july = [t for t in tasks if t.metadata.release_date.month >= 7]
    assert 0 < len(since_july) < len(tasks)
    ids = [(t.metadata.extra["contest_id"], t.metadata.extra["question_id"]) for t in tasks]
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("name", TASK_NAMES)
def test_task_shape(name):
    task = _task(name)
    assert task.kind in ("stdio", "function")
    assert task.language == "python"
    assert task.title and task.statement.strip()
    md = task.metadata
    assert (md.source, md.licence) == ("original", "Apache-2.0")
    assert md.difficulty in ("easy", "medium", "hard")
    assert md.tags
    assert md.release_date is not None and md.release_date.year == 2026
    assert md.extra["platform"] in PLATFORMS[task.kind]
    assert md.extra["contest_id"] and md.extra["question_id"]
    assert 2 <= len(task.cases("public")) <= 3
    assert 6 <= len(task.cases("hidden")) <= 12
    assert "reference" in task.solutions
    assert set(task.solution("reference").files) == {task.main_file}
    starter = task.starter_files()
    assert set(starter) == {task.main_file}
    if task.kind == "function":
        cls, _, method = task.entry_point.partition(".")
        assert cls == "Solution" and method
        # LeetCode starter: the typed method signature with an empty body
        assert re.search(rf"^class Solution:\n    def {method}\(self\b.*\) -> .+:\n        pass\n",
                         starter[task.main_file], re.M), starter[task.main_file]
        for case in task.cases("public") + task.cases("hidden"):
            assert case.expected is not None and case.args is not None
    else:
        for case in task.cases("public"):
            # the samples are shown in the statement verbatim
            assert "```\n" + case.stdin + "```" in task.statement
            assert "```\n" + case.expected + "```" in task.statement


@pytest.mark.parametrize("name", TASK_NAMES)
@pytest.mark.parametrize("split", ["public", "hidden"])
def test_reference_is_accepted(name, split):
    task = _task(name)
    rep = judge(task, task.solution("reference").files, split=split)
    bad = [(c.name, c.status, c.message) for c in rep.cases if c.status != "accepted"]
    assert rep.verdict == "accepted", bad
    assert rep.passed == rep.total == len(task.cases(split))


@pytest.mark.parametrize("name", TASK_NAMES)
def test_starter_is_not_accepted(name):
    task = _task(name)
    rep = judge(task, task.starter_files(), split="public", early_exit=True)
    assert rep.verdict == "wrong_answer"
    assert rep.passed == 0


@pytest.mark.parametrize("name", [n for n in TASK_NAMES
                                  if _task(n).checker and _task(n).checker.type == "float"])
def test_float_tolerance_rejects_a_close_miss(name):
    """A reference whose answers are off by 1e-4 (relative and absolute) must fail."""
    task = _task(name)
    ref = task.solution("reference").files[task.main_file]
    if task.kind == "function":
        method = task.entry_point.partition(".")[2]
        wrong = ref + (f"\n\n_exact = Solution.{method}\n\n\n"
                       f"def _off(self, *args):\n"
                       f"    value = _exact(self, *args)\n"
                       f"    return value + 1e-4 * max(1.0, abs(value))\n\n\n"
                       f"Solution.{method} = _off\n")
    else:
        # shift every printed number by the same margin
        wrong = ("import builtins\n_print = builtins.print\n\n\n"
                 "def print(*values, **kw):\n"
                 "    _print(*(float(v) + 1e-4 * max(1.0, abs(float(v))) for v in values), **kw)\n\n\n"
                 + ref)
    rep = judge(task, {task.main_file: wrong}, split="public")
    assert rep.verdict == "wrong_answer"
