"""codegym.judge.testgen: generated inputs and reference-computed expectations, their caches
(memory and disk, keyed by content hash) and the errors that name the failing case."""

from __future__ import annotations

import pytest

from codegym.judge import testgen
from codegym.tasks.schema import Task

GEN = """import sys, random
seed, n = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
print(n)
print(*(rng.randint(1, 100) for _ in range(n)))
"""
REF = "input()\nprint(sum(map(int, input().split())))\n"


@pytest.fixture(scope="module")
def sb():
    from codegym.sandbox import make_sandbox
    return make_sandbox("local")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGYM_CACHE", str(tmp_path))
    testgen.clear_memory_cache()
    yield tmp_path
    testgen.clear_memory_cache()


def gen_task(seeds=(1, 2, 3), ref=REF, gen=GEN, task_id="t/gen"):
    hidden = [{"name": f"g{s}", "generator": {"code": gen, "seed": s, "args": [5 + s]}} for s in seeds]
    hidden.append({"name": "plain", "stdin": "2\n1 2\n", "expected": "3\n"})
    return Task(id=task_id, statement="s", kind="stdio", language="python",
                tests={"public": [{"stdin": "1\n7\n"}], "hidden": hidden},
                solutions={"reference": {"files": {"main.py": ref}}})


def test_generated_inputs_and_expected_are_cached(sb, cache):
    task = gen_task()
    before = dict(testgen.STATS)
    cases = testgen.materialize(task, "hidden", sb)
    runs = testgen.STATS["generator_runs"] - before.get("generator_runs", 0)
    refs = testgen.STATS["reference_runs"] - before.get("reference_runs", 0)
    assert runs == 3 and refs == 3
    assert [c.name for c in cases] == ["g1", "g2", "g3", "plain"]
    for c in cases[:3]:
        n, values = c.stdin.split("\n", 1)
        assert int(n) == len(values.split()) and c.generated and c.computed
        assert int(c.expected) == sum(map(int, values.split()))
    assert cases[3].expected == "3\n" and not cases[3].computed
    files = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert len([f for f in files if f.endswith(".in")]) == 3
    assert len([f for f in files if f.endswith(".out")]) == 3
    assert not [f for f in files if f.startswith(".tmp")]   # atomic writes leave no temporaries

    # memory hit: nothing runs
    again = testgen.materialize(task, "hidden", sb)
    assert again == cases and testgen.STATS["generator_runs"] - before.get("generator_runs", 0) == 3
    # disk hit after the memory cache is gone: still nothing runs
    testgen.clear_memory_cache()
    again = testgen.materialize(task, "hidden", sb)
    assert [c.stdin for c in again] == [c.stdin for c in cases]
    assert [c.expected for c in again] == [c.expected for c in cases]
    assert testgen.STATS["generator_runs"] - before.get("generator_runs", 0) == 3
    assert testgen.STATS["reference_runs"] - before.get("reference_runs", 0) == 3

    # another task with one shared generator spec and one new seed: only the new one runs
    other = gen_task(seeds=(2, 9), task_id="t/other")
    testgen.materialize(other, "hidden", sb)
    assert testgen.STATS["generator_runs"] - before.get("generator_runs", 0) == 4
    # a changed reference recomputes expectations but reuses the inputs
    changed = gen_task(ref=REF + "# v2\n", task_id="t/gen")
    testgen.materialize(changed, "hidden", sb)
    assert testgen.STATS["generator_runs"] - before.get("generator_runs", 0) == 4
    assert testgen.STATS["reference_runs"] - before.get("reference_runs", 0) == 3 + 1 + 3


def test_split_all_orders_and_indexes(sb):
    cases = testgen.materialize(gen_task(), "all", sb)
    assert [c.split for c in cases] == ["public"] + ["hidden"] * 4
    assert [c.index for c in cases] == list(range(5))
    assert cases[0].expected == "7\n" and cases[0].name == "public[0]"
    with pytest.raises(ValueError):
        testgen.materialize(gen_task(), "nope", sb)


def test_generator_failure_names_task_and_case(sb):
    task = gen_task(gen="import sys\nsys.exit('generator broke')\n")
    with pytest.raises(testgen.TestgenError) as e:
        testgen.materialize(task, "hidden", sb)
    msg = str(e.value)
    assert "t/gen" in msg and "hidden[" in msg and "generator" in msg and "generator broke" in msg


def test_reference_failure_names_task_and_case(sb):
    task = gen_task(ref="raise RuntimeError('reference broke')\n")
    with pytest.raises(testgen.TestgenError) as e:
        testgen.materialize(task, "hidden", sb)
    msg = str(e.value)
    assert "t/gen" in msg and "(g1)" in msg and "reference" in msg and "reference broke" in msg


def test_judge_reports_testgen_failure_as_sandbox_error(sb):
    from codegym.judge.run import judge
    task = gen_task(gen="raise SystemExit(2)\n")
    rep = judge(task, {"main.py": REF}, sandbox=sb)
    assert rep.verdict == "sandbox_error" and "t/gen" in rep.message


def test_function_expectations_computed_and_cached(sb):
    task = Task(id="t/fn", statement="s", kind="function", language="python", entry_point="f",
                tests={"hidden": [{"args": [3]}, {"args": [4]}, {"args": [5], "expected": [5, 25]}]},
                solutions={"reference": {"files": {"main.py": "def f(x):\n    return (x, x * x)\n"}}})
    before = testgen.STATS["reference_runs"]
    cases = testgen.materialize(task, "hidden", sb)
    assert cases[0].expected == (3, 9) and cases[1].expected == (4, 16) and cases[2].expected == [5, 25]
    assert testgen.STATS["reference_runs"] - before == 2
    testgen.clear_memory_cache()
    again = testgen.materialize(task, "hidden", sb)
    assert [c.expected for c in again] == [c.expected for c in cases]
    assert testgen.STATS["reference_runs"] - before == 2
