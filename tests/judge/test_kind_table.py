"""The judge's kinds as a table (issue 31.2): every task kind has a `KindRunner` in
`KIND_RUNNERS`, every runner returns one shape (`KindResult`: a result per case, or a
`Decided` verdict), and the verdicts decided before the cases run are values
(`source_verdict`, `Decided`), the report built from them once."""

from __future__ import annotations

import inspect

import pytest
from _repo_tasks import CENTS, SUITE

from codegym.judge.kinds.table import KIND_RUNNERS, KindResult, build_failed
from codegym.judge.report import CaseResult, Decided, JudgeReport
from codegym.judge.run import judge, source_verdict
from codegym.judge.testgen import materialize
from codegym.sandbox import make_sandbox
from codegym.tasks.fields import KINDS
from codegym.tasks.schema import Task

LIM = {"time_s": 2, "memory_mb": 256}
SUM = [{"stdin": "1 2\n", "expected": "3\n"}, {"stdin": "5 7\n", "expected": "12\n"}]
ADD = "def add(a, b):\n    return a + b\n"
TASKS = {
    "stdio": (lambda: Task(id="t/stdio", statement="s", kind="stdio", language="python", tests={"hidden": SUM},
                           limits=LIM), "a, b = map(int, input().split())\nprint(a + b)\n"),
    "function": (lambda: Task(id="t/fn", statement="s", kind="function", language="python", entry_point="add",
                              tests={"hidden": [{"args": [1, 2], "expected": 3}]}, limits=LIM), ADD),
    "script": (lambda: Task(id="t/script", statement="s", kind="script", language="python", entry_point="add",
                            tests={"hidden": [{"code": "assert add(1, 2) == 3"}]}, limits=LIM), ADD),
}


@pytest.fixture(scope="module")
def sb():
    return make_sandbox("local")


def test_every_kind_is_registered_with_one_signature():
    assert set(KIND_RUNNERS) == set(KINDS)
    shapes = {str(inspect.signature(r.run)) for r in KIND_RUNNERS.values()}
    assert len(shapes) == 1, shapes
    assert all(inspect.signature(r.run).return_annotation in (KindResult, "KindResult") for r in KIND_RUNNERS.values())
    assert [k for k, r in KIND_RUNNERS.items() if not r.checks_source] == ["repo"]


def _run(kind: str, task, files, sb) -> KindResult:
    return KIND_RUNNERS[kind].run(task, files, materialize(task, "hidden", sb), sb, language=task.language,
                                  main_file=task.main_file_for(task.language) or "", early_exit=False)


@pytest.mark.parametrize("kind", sorted(TASKS))
def test_each_runner_returns_one_shape(kind, sb):
    make, src = TASKS[kind]
    task = make()
    main = task.main_file_for("python")
    out = _run(kind, task, {main: src}, sb)
    assert isinstance(out, KindResult) and out.decided is None
    assert out.results and all(isinstance(r, CaseResult) and r.passed for r in out.results)
    # a program the run finds broken: a Decided verdict, in the same shape
    broken = _run(kind, task, {main: "def add(a, b):\n    return a +\n"}, sb)
    assert isinstance(broken, KindResult)
    if kind == "stdio":  # (a Python program is not built: its syntax error is a run's)
        assert broken.decided is None and broken.results[0].status == "runtime_error"
    else:
        assert broken.decided is not None and broken.decided.verdict == "compile_error" and not broken.results


def test_the_repo_runner_returns_the_same_shape(sb):
    task = SUITE.get(CENTS)
    out = _run("repo", task, {}, sb)
    assert isinstance(out, KindResult) and out.decided is None and out.launch is None
    assert len(out.results) == len(task.cases("hidden")) and all(isinstance(r, CaseResult) for r in out.results)
    msg = KIND_RUNNERS["repo"].message(task, {"split": "hidden", "verdict": "wrong_answer", "cases": out.results,
                                              "message": "case 0"})
    assert msg.startswith("resolution NO: ") and msg.endswith("; case 0")


def test_the_function_runner_refuses_another_language_as_a_value(sb):
    make, _ = TASKS["function"]
    task = make()
    out = KIND_RUNNERS["function"].run(task, {"main.c": "int main(){}"}, [], sb, language="c", main_file="main.c",
                                       early_exit=False)
    assert out.decided == Decided("sandbox_error", "function tasks run Python only", "ran", 0.25)


def test_early_verdicts_are_values():
    assert source_verdict({}, "main.py", "python") == Decided.no_code("main.py is missing or holds no code")
    d = source_verdict({"main.py": "print(1\n"}, "main.py", "python")
    assert d is not None and (d.verdict, d.stage, d.progress) == ("compile_error", "compile_error", 0.25)
    assert "SyntaxError" in d.compile_output and d.message == d.compile_output.splitlines()[-1]
    assert source_verdict({"main.py": "print(1)\n"}, "main.py", "python") is None

    class Failed:
        status, stderr, stdout, message = "compile_error", "main.c:1: error", "", "compilation failed"
    assert build_failed(Failed()).fields() == {"verdict": "compile_error", "message": "compilation failed",
                                               "stage": "compile_error", "progress": 0.25,
                                               "compile_output": "main.c:1: error"}
    assert build_failed(None).verdict == "sandbox_error"


def test_a_decided_report_has_every_field_of_one_built_before(sb):
    make, _ = TASKS["stdio"]
    rep = judge(make(), {"main.py": "print(1\n"}, sandbox=sb)
    assert isinstance(rep, JudgeReport)
    d = rep.to_dict()
    d.pop("elapsed_s")
    assert d == {"verdict": "compile_error", "passed": 0, "total": 2, "stage": "compile_error", "progress": 0.25,
                 "compile_output": rep.compile_output, "task_id": "t/stdio", "task_hash": make().content_hash,
                 "split": "hidden", "language": "python", "checker": "tokens@1", "score": 0.0,
                 "first_failure": None, "message": rep.compile_output.splitlines()[-1], "timing_error": "",
                 "cases": [], "timing": None}
