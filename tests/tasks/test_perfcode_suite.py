"""Tests of the perfcode suite (tasks/perfcode/): the shape every PerfCode task must have,
that its generators are deterministic, and that the real judge accepts each task's
reference and baseline on the correctness splits (public and hidden).

The perf split is not judged here: its inputs are sized so that the baseline needs about
a CPU second per case, which is too slow for the test suite (see
`codegym tasks calibrate` for measuring it).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from codegym import load_suite, load_task
from codegym.core.languages import get_language
from codegym.sandbox import make_sandbox

REPO = Path(__file__).resolve().parents[2]
PERFCODE = REPO / "tasks" / "perfcode"
TASK_NAMES = sorted(p.stem for p in PERFCODE.glob("*.yaml") if p.name != "suite.yaml")


def _task(name: str):
    return load_task(PERFCODE / f"{name}.yaml")


def _need_toolchain(language: str) -> None:
    spec = get_language(language)
    if not spec.available():
        pytest.skip(f"language {language!r} is not installed here: {spec.install_hint}")


def test_suite_mixes_languages_and_ids():
    suite = load_suite(PERFCODE)
    assert len(suite) >= 12
    assert sorted(t.id for t in suite) == [f"perfcode/{n}" for n in TASK_NAMES]
    by_language = Counter(t.language for t in suite)
    assert by_language["python"] >= 5 and by_language["c"] >= 3 and by_language["cpp"] >= 3


@pytest.mark.parametrize("name", TASK_NAMES)
def test_task_shape(name):
    task = _task(name)
    assert task.kind == "stdio"
    # PerfCode tasks are language-specific: optimise this program, in its language
    assert task.languages == [task.language]
    assert {"reference", "baseline"} <= set(task.solutions)
    for sol in task.solutions.values():
        assert (sol.language or task.language) == task.language
        assert sol.expect == "accepted"
    assert task.solution("baseline").files == task.starter_files()
    assert task.solution("reference").files != task.starter_files()
    assert (task.perf.baseline, task.perf.reference, task.perf.metric, task.perf.repeats) == \
        ("baseline", "reference", "cpu", 5)
    assert task.statement.strip() and task.title
    assert task.metadata.source == "original"

    public, hidden, perf = (task.cases(s) for s in ("public", "hidden", "perf"))
    assert 2 <= len(public) <= 3
    assert all(c.stdin is not None and c.has_expected for c in public)
    assert 5 <= len(hidden) <= 10
    assert any(c.generator is None for c in hidden) and any(c.generator for c in hidden)
    assert all(c.has_expected for c in hidden if c.generator is None)
    assert 1 <= len(perf) <= 3
    # perf inputs come from seeded generators; the reference computes their expected output
    assert all(c.generator is not None and not c.has_expected for c in perf)
    specs = [c.generator.content_hash for c in hidden + perf if c.generator is not None]
    assert len(set(specs)) == len(specs), "two generated cases would produce the same input"


@pytest.mark.parametrize("name", TASK_NAMES)
def test_generator_is_deterministic(name):
    task = _task(name)
    case = next(c for c in task.cases("hidden") if c.generator is not None)
    gen = case.generator
    _need_toolchain(gen.language)
    sb = make_sandbox("local")
    files = {get_language(gen.language).main_file: gen.code}
    runs = [sb.execute(gen.language, files, argv=gen.argv()) for _ in range(2)]
    assert all(r.status == "ok" for r in runs), [r.message or r.stderr for r in runs]
    assert runs[0].stdout and runs[0].stdout == runs[1].stdout
    other = sb.execute(gen.language, files, argv=[str(gen.seed + 1), *map(str, gen.args)])
    assert other.status == "ok" and other.stdout != runs[0].stdout, "the seed is ignored"


@pytest.mark.parametrize("solution", ["reference", "baseline"])
@pytest.mark.parametrize("name", TASK_NAMES)
def test_solution_accepted_on_correctness_splits(name, solution):
    try:
        from codegym.judge.run import judge
    except ImportError as e:
        pytest.skip(f"codegym.judge.run is not importable: {e}")
    task = _task(name)
    sol = task.solution(solution)
    language = sol.language or task.language
    _need_toolchain(language)
    sb = make_sandbox("local")
    for split in ("public", "hidden"):
        report = judge(task, dict(sol.files), sandbox=sb, split=split, language=language)
        failed = [(c.name, c.status, c.message) for c in report.cases if c.status != "accepted"]
        assert report.verdict == "accepted", (split, report.verdict, report.compile_output, failed)
        assert report.passed == report.total == len(task.cases(split))
