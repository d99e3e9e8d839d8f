"""One stage vocabulary (issue 31.4): the judge's `STAGES` (``JudgeReport.stage``) and
`PROGRAM_STAGES` (the staged reward's ``info["staged"]["stage"]``) are one table in
`codegym.judge.report`, and a real report's two stages agree; one progress rule."""

from __future__ import annotations

import pytest

from codegym.judge.report import PROGRAM_STAGES, STAGES, program_stage, ran_progress
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.tasks.schema import Task
from codegym.wrappers.base import failed_report
from codegym.wrappers.staged import StageValues, staged_reward

CASES = [{"stdin": "1 2\n", "expected": "3\n"}, {"stdin": "5 7\n", "expected": "12\n"},
         {"stdin": "-4 4\n", "expected": "0\n"}]
PROGRAMS = {  # program -> (JudgeReport.stage, the staged reward's stage)
    "# nothing yet\n": ("no_code", "no_code"),
    "print(1\n": ("compile_error", "compile_error"),
    "raise SystemExit(3)\n": ("ran", "runtime_error"),
    "a, b = map(int, input().split())\nprint(a + b if a < 5 else 0)\n": ("ran", "wrong_answer"),
    "a, b = map(int, input().split())\nprint(a + b)\n": ("accepted", "correct"),
}


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


def test_the_vocabulary_is_one_table():
    assert STAGES == ("no_code", "compile_error", "ran", "accepted")
    assert set(PROGRAM_STAGES.values()) <= set(STAGES)
    # every stage the staged reward ranks has its value, and no other
    values = StageValues().to_dict()
    assert set(PROGRAM_STAGES) <= set(values)
    assert set(PROGRAM_STAGES) == {k for k in values if k not in ("wrong_answer_weight", "speed_weight", "bonus",
                                                                   "bonus_speedup")}


@pytest.mark.parametrize("src", sorted(PROGRAMS))
def test_a_judged_report_and_its_reward_name_the_same_stage(sb, src):
    task = Task(id="t/stages", statement="s", kind="stdio", language="python", tests={"hidden": CASES},
                limits={"time_s": 2, "memory_mb": 256})
    rep = judge(task, {"main.py": src}, sandbox=sb)
    judge_stage, reward_stage = PROGRAMS[src]
    d = rep.to_dict()
    assert rep.stage == judge_stage, rep
    assert program_stage(d)[0] == reward_stage
    assert staged_reward(d)[1]["stage"] == reward_stage
    assert PROGRAM_STAGES[reward_stage] == rep.stage  # the finer stage refines the report's


def test_one_progress_rule():
    assert [ran_progress(p, 4) for p in range(5)] == [0.5, 0.625, 0.75, 0.875, 1.0]
    assert ran_progress(0, 0) == 0.5
    rep = {"verdict": "accepted", "stage": "accepted", "passed": 3, "total": 4, "progress": 1.0}
    out = failed_report(rep, "wrong_answer", "perf split: case 3", passed=2)
    assert (out["stage"], out["progress"]) == ("ran", ran_progress(2, 4))
