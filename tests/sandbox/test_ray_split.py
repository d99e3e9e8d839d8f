"""A task's cases split over the nodes of a Ray cluster (`codegym.judge.chunks`).

The cluster has two nodes started on this machine with ``ray start --head`` and ``ray
start --address`` (`codegym.sandbox.raycluster.LocalCluster`), one CPU each, one sandbox
actor on each. A judge of a task with 1,002 cases splits them in two chunks, one per
node, and gives the local judge's verdict, first failing case, per-case results and a
timing measurement; with early exit, a failure in the first chunk stops the other
node's chunk (whose cases would each take a second: it can only finish by stopping).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from codegym import load_task
from codegym.judge.chunks import chunk_bounds
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.sandbox.raycluster import LocalCluster, ray_cli

try:
    import ray
except ImportError as e:  # pragma: no cover - depends on the environment
    ray = None
    _MISSING = f"ray is not importable ({e}); pip install 'codegym[ray]'"
else:
    _MISSING = "" if ray_cli() else "the `ray` command is not installed"

pytestmark = pytest.mark.ray

N = 1000
REPO = Path(__file__).resolve().parents[2]

REFERENCE = "n = int(input())\nprint(2 * n)\n"
WRONG_AT_700 = "n = int(input())\nprint(2 * n + (n == 700))\n"
#: case 0 is wrong at once; every case of the second chunk (cases 500-999) takes a second
WRONG_FIRST_SLOW_REST = "import time\nn = int(input())\nif n >= 500:\n    time.sleep(1)\nprint(2 * n + (n == 0))\n"


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    p = tmp_path_factory.mktemp("split") / "double.yaml"
    data = {"id": "split/double", "title": "double", "statement": "Print 2n.", "kind": "stdio",
            "language": "python", "starter": {"main.py": REFERENCE},
            "tests": {"hidden": [{"stdin": f"{i}\n", "expected": f"{2 * i}\n"} for i in range(N)],
                      "perf": [{"stdin": "5\n", "expected": "10\n"}, {"stdin": "7\n", "expected": "14\n"}]},
            "limits": {"time_s": 5, "memory_mb": 256},
            "perf": {"repeats": 3, "metric": "cpu"},
            "solutions": {"reference": {"files": {"main.py": REFERENCE}}}}
    p.write_text(yaml.safe_dump(data))
    return load_task(p)


@pytest.fixture(scope="module")
def cluster():
    if _MISSING:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(_MISSING + " (required in CI)")
        print(_MISSING)
        pytest.skip(_MISSING)
    if ray.is_initialized():  # another module's single-node cluster
        ray.shutdown()
    c = LocalCluster([{"num_cpus": 1}, {"num_cpus": 1}]).start()
    try:
        c.connect()
        yield c
    finally:
        ray.shutdown()
        c.stop()


@pytest.fixture(scope="module")
def rsb(cluster):
    s = make_sandbox("ray", num_actors=2, actor_options={"num_cpus": 1})
    yield s
    s.close()


@pytest.fixture(scope="module")
def local():
    s = make_sandbox("local", workers=2)
    yield s
    s.close()


def _job(rsb) -> list[dict]:
    log = list(rsb.chunk_log)
    job = log[-1]["job"]
    return [e for e in log if e["job"] == job]


def test_chunk_bounds():
    assert chunk_bounds(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert chunk_bounds(2, 5) == [(0, 1), (1, 2)]
    assert sum(hi - lo for lo, hi in chunk_bounds(N, 7)) == N


@pytest.mark.slow
def test_cases_split_over_two_nodes(task, rsb, local):
    """One test (one xdist worker, one cluster): parity with the local judge, one chunk
    per node, timing on one worker, early exit across nodes, small tasks not split."""
    # early exit: the first chunk fails at once; the other node's chunk stops
    rep = judge(task, {"main.py": WRONG_FIRST_SLOW_REST}, sandbox=rsb, early_exit=True)
    assert rep.verdict == "wrong_answer" and rep.first_failure == 0
    chunks = {c["first"]: c for c in _job(rsb)}
    later = chunks[N // 2]
    # its cases take a second each: the judge returned because that chunk stopped
    assert later["stopped_by_others"] and later["ran"] < later["cases"]
    assert sum(c.status == "skipped" for c in rep.cases) > N // 2


    # an accepted program (with the 2 perf cases: 1,002): same results as local, one chunk
    # per node, measured on one worker
    ray_rep = judge(task, {"main.py": REFERENCE}, sandbox=rsb, timing=True)
    chunks = _job(rsb)
    assert len(chunks) == 2 and len({c["node"] for c in chunks}) == 2
    assert sorted((c["first"], c["cases"]) for c in chunks) == [(0, (N + 2) // 2), ((N + 2) // 2, (N + 2) // 2)]
    loc_rep = judge(task, {"main.py": REFERENCE}, sandbox=local, timing=True)
    assert ray_rep.verdict == loc_rep.verdict == "accepted"
    assert ray_rep.passed == loc_rep.passed == N + 2
    assert [c.status for c in ray_rep.cases] == [c.status for c in loc_rep.cases]
    assert all(c.time_s > 0 and c.wall_s > 0 and c.memory_mb > 0 for c in ray_rep.cases)
    assert ray_rep.timing is not None and loc_rep.timing is not None
    assert ray_rep.timing.ok and ray_rep.timing.metric == loc_rep.timing.metric == "cpu"
    assert ray_rep.timing.n >= 3

    # a wrong answer in the second chunk: the local first failing case, with or without early exit
    wrong = {"main.py": WRONG_AT_700}
    lo = judge(task, wrong, sandbox=local)
    full = judge(task, wrong, sandbox=rsb)
    assert full.verdict == lo.verdict == "wrong_answer" and full.first_failure == lo.first_failure == 700
    assert [c.status for c in full.cases] == [c.status for c in lo.cases] and full.passed == N - 1
    early = judge(task, wrong, sandbox=rsb, early_exit=True)
    assert early.verdict == "wrong_answer" and early.first_failure == 700

    # fewer cases than `split_min_cases`: not split
    small = load_task(REPO / "tasks" / "examples" / "digit-sum-queries.yaml")
    before = len(rsb.chunk_log)
    assert judge(small, small.solution("reference").files, sandbox=rsb).verdict == "accepted"
    assert len(rsb.chunk_log) == before
