"""The chunk protocol of a judge split over workers (`codegym.judge.chunks`), without Ray.

A chunk runs on the local sandbox with a scripted stop board: it reports its own first
failure (as a global case index) under early exit, stops starting cases once the board
holds a failure before its first case (the board is set by a hook after the chunk's
first case: an event, not a deadline), runs nothing when the failure was known before
it started, and runs everything without early exit. The two-node runs are in
tests/sandbox/test_ray_split.py.
"""

from __future__ import annotations

import pytest
import yaml

from codegym import load_task
from codegym.judge.chunks import run_chunk, splits
from codegym.judge.kinds.stdio import stdio_launch
from codegym.judge.testgen import materialize
from codegym.sandbox import make_sandbox

PROGRAM = "n = int(input())\nprint(2 * n + (n in (12, 13)))\n"   # cases 12 and 13 are wrong


class Board:
    """A stop board as a chunk sees it (`codegym.sandbox.ray.StopView`'s interface)."""

    def __init__(self, low=None, after_first=None):
        self.low, self.after_first, self.reported, self.polls = low, after_first, [], 0

    def report(self, index):
        self.reported.append(index)

    def lowest(self):
        self.polls += 1
        if self.after_first is not None and self.polls == 1:
            self.low = self.after_first   # another chunk failed while this one ran its first case
        return self.low

    def wait_lowest(self):
        return self.low

    @staticmethod
    def where():
        return {"node": "here", "pid": 0}


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    p = tmp_path_factory.mktemp("chunks") / "double.yaml"
    p.write_text(yaml.safe_dump({
        "id": "chunks/double", "title": "d", "statement": "Print 2n.", "kind": "stdio", "language": "python",
        "starter": {"main.py": PROGRAM},
        "tests": {"hidden": [{"stdin": f"{i}\n", "expected": f"{2 * i}\n"} for i in range(20)]}}))
    task = load_task(p)
    sb = make_sandbox("local", workers=1)
    argv, extra = stdio_launch("python", {"main.py": PROGRAM}, "main.py", task.preamble)
    yield task, sb, materialize(task, "hidden", sb), argv, extra
    sb.close()


def _run(setup, lo, hi, early, board):
    task, sb, cases, argv, extra = setup
    return run_chunk((lo, cases[lo:hi]), task, {"main.py": PROGRAM}, "python", argv, extra, early,
                     stop=board, sandbox=sb)


def test_a_chunk_reports_its_own_failure_with_the_global_index(setup):
    board = Board()
    results, info = _run(setup, 10, 20, True, board)
    assert min(board.reported) == 12   # a case already sent ahead may fail and report too
    assert results[2].status == "wrong_answer" and info["ran"] < 10 and not info["stopped_by_others"]


def test_a_chunk_stops_when_an_earlier_case_failed_elsewhere(setup):
    board = Board(after_first=3)     # case 3 of another chunk failed meanwhile
    results, info = _run(setup, 5, 12, True, board)
    assert info["stopped_by_others"] and info["ran"] < 7 and board.reported == []
    assert all(r is None or r.status == "passed" for r in results)


def test_a_failure_after_the_chunk_does_not_stop_it(setup):
    board = Board(after_first=15)    # a later case failed: this chunk may hold an earlier one
    results, info = _run(setup, 0, 12, True, board)
    assert info["ran"] == 12 and all(r.status == "passed" for r in results)


def test_known_failure_before_start_runs_nothing(setup):
    results, info = _run(setup, 10, 20, True, Board(low=2))
    assert results == [None] * 10 and info["stopped_by_others"] and info["ran"] == 0


def test_without_early_exit_every_case_runs(setup):
    board = Board(low=0)
    results, info = _run(setup, 10, 20, False, board)
    assert info["ran"] == 10 and [r.status for r in results].count("wrong_answer") == 2


def test_only_large_stdio_tasks_on_a_chunking_sandbox_split(setup):
    task, sb, cases, *_ = setup

    class Chunky:
        split_min_cases, workers = 10, 2

        def map_chunks(self, *a, **k):
            raise AssertionError("not called")
    assert splits(Chunky(), task, cases) and not splits(Chunky(), task, cases[:9])
    assert not splits(sb, task, cases)          # the local sandbox does not split
