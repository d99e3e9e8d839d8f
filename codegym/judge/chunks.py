"""A task's test cases split over the workers of a remote sandbox (the Ray backend's nodes).

`splits(sandbox, task, cases)` says whether a judge splits: a stdio task with at least
``sandbox.split_min_cases`` cases on a sandbox with ``map_chunks``. `run_split` cuts the
cases into contiguous chunks, one per worker slot, and runs each chunk with `run_chunk`
on a worker with that worker's own sandbox (the same `run_stdio` as a local judge, so
verdicts, first failing case and per-case times are the local ones). With early exit, a
chunk that fails reports its case to the job's stop board; chunks whose cases all come
after it stop starting cases, chunks before it run on (one of them may hold an earlier
failure), so the first failing case is the local one. `measure_split` times an accepted
program whole on one worker. docs/sandbox.md (Ray) has the protocol and the speedup.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codegym.core.limits import Limits
from codegym.judge.kinds.stdio import run_stdio, stdio_build
from codegym.judge.perf import measure_report
from codegym.judge.report import CaseResult, JudgeReport
from codegym.judge.testgen import Case
from codegym.sandbox.types import Build, ExecResult, RunRequest, Sandbox
from codegym.tasks.schema import Task


def splits(sandbox: Sandbox, task: Task, cases: Sequence[Case]) -> bool:
    """True when this judge runs its cases split over the sandbox's workers."""
    least = sandbox.split_min_cases
    return task.kind == "stdio" and least is not None and len(cases) >= least and int(sandbox.workers or 1) > 1


def chunk_bounds(n: int, k: int) -> list[tuple[int, int]]:
    """`k` contiguous, nearly equal [lo, hi) ranges covering n items (none empty)."""
    k = max(1, min(k, n))
    size, extra = divmod(n, k)
    out, lo = [], 0
    for i in range(k):
        hi = lo + size + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


class _Stoppable(Sandbox):
    """A worker's sandbox whose `run_many` (the case runs) also stops when another chunk
    reported a failure before this chunk's first case, and reports this chunk's own
    early-exit failure (the case's index) to the others."""

    def __init__(self, inner: Sandbox, stop: Any, indices: Sequence[int], first: int):
        self.inner, self.view, self.indices, self.first = inner, stop, list(indices), first
        self.isolation, self.workers, self.root = inner.isolation, inner.workers, inner.root
        self.stopped_by_others = False

    def build(self, language: str, files: Mapping[str, str | bytes], limits: Limits | None = None) -> Build:
        return self.inner.build(language, files, limits)

    def run(self, build: Build, stdin: str | bytes = "", limits: Limits | None = None,
            argv: Sequence[str] = (), extra_files: Mapping[str, str | bytes] | None = None,
            wrapper: Sequence[str] | None = None, randomize_layout: bool = False) -> ExecResult:
        return self.inner.run(build, stdin=stdin, limits=limits, argv=argv, extra_files=extra_files,
                              wrapper=wrapper, randomize_layout=randomize_layout)

    def run_many(self, build: Build, requests: Sequence[RunRequest], limits: Limits | None = None,
                 stop: Callable[[int, ExecResult], bool] | None = None) -> list[ExecResult | None]:
        if stop is None:  # a program checker's runs: never cut short
            return self.inner.run_many(build, requests, limits=limits)

        def stop_here(i: int, res: ExecResult) -> bool:
            if stop(i, res):  # this chunk's own failure under early exit
                self.view.report(self.indices[i])
                return True
            low = self.view.lowest()
            if low is not None and low < self.first:
                self.stopped_by_others = True
                return True
            return False
        return self.inner.run_many(build, requests, limits=limits, stop=stop_here)


def run_chunk(chunk: tuple[int, list[Case]], task: Task, files: Mapping[str, Any], language: str,
              argv: Sequence[str], extra: Mapping[str, Any] | None, early_exit: bool, *, stop: Any,
              sandbox: Sandbox) -> tuple[list[CaseResult | None], dict[str, Any]]:
    """One chunk on a worker: its cases run with the worker's sandbox (see the module
    docstring); returns (results, info: where, cases run, stopped, seconds)."""
    t0 = time.monotonic()
    first, cases = chunk
    info: dict[str, Any] = {**stop.where(), "first": first, "cases": len(cases), "ran": 0,
                            "stopped_by_others": False}
    if early_exit:
        low = stop.wait_lowest()
        if low is not None and low < first:  # an earlier case failed before this chunk started
            info.update(stopped_by_others=True, elapsed_s=time.monotonic() - t0)
            return [None] * len(cases), info
    build = stdio_build(sandbox, language, files, extra)
    if not build.ok:  # it built in the driver: failing here is the worker's fault, not the program's
        res = build.result
        why = f"the program did not build on a worker: {(res.message if res else '') or 'build failed'}"
        results: list[CaseResult | None] = [CaseResult(c.index, c.name, "sandbox_error", c.split, message=why,
                                                       weight=c.weight) for c in cases]
        info.update(elapsed_s=time.monotonic() - t0)
        return results, info
    sb = _Stoppable(sandbox, stop, [c.index for c in cases], first) if early_exit else None
    results = run_stdio(task, build, cases, sb or sandbox, early_exit, language, argv, extra)
    info.update(ran=sum(r is not None for r in results), elapsed_s=time.monotonic() - t0,
                stopped_by_others=sb is not None and sb.stopped_by_others)
    return results, info


def _gave_up(cases: list[Case], why: str) -> list[CaseResult | None]:
    msg = f"ray sandbox infrastructure failure: {why}"
    return [CaseResult(c.index, c.name, "sandbox_error", c.split, message=msg, weight=c.weight) for c in cases]


def run_split(task: Task, files: Mapping[str, Any], language: str, argv: Sequence[str],
              extra: Mapping[str, Any] | None, cases: list[Case], sandbox: Sandbox,
              early_exit: bool) -> list[CaseResult | None]:
    """Every case's result (None: not run), the cases run in chunks on the sandbox's
    workers (one chunk per worker slot); see the module docstring."""
    bounds = chunk_bounds(len(cases), int(sandbox.workers or 1))
    chunks = [(lo, cases[lo:hi]) for lo, hi in bounds]
    values = sandbox.map_chunks(run_chunk, chunks, task, dict(files), language, list(argv),
                                dict(extra) if extra else None, early_exit,
                                on_give_up=lambda i, why: _gave_up(chunks[i][1], why))
    out: list[CaseResult | None] = [None] * len(cases)
    for (lo, hi), res in zip(bounds, values):
        out[lo:hi] = res
    return out


def _measure_on_worker(rep: JudgeReport, task: Task, files: Mapping[str, Any], cases: list[Case], language: str,
                       argv: Sequence[str], extra: Mapping[str, Any] | None, *, sandbox: Sandbox) -> JudgeReport:
    build = stdio_build(sandbox, language, files, extra)
    measure_report(rep, task, files, cases, list(rep.cases), sandbox, language, build)
    return rep


def measure_split(rep: JudgeReport, task: Task, files: Mapping[str, Any], cases: list[Case], language: str,
                  argv: Sequence[str], extra: Mapping[str, Any] | None, sandbox: Sandbox) -> JudgeReport:
    """`measure_report` of an accepted program run whole on one worker (a measurement's
    runs all on one machine); the worker's report (timing, and a verdict a failed timed
    run changed) is returned."""
    def gave_up(why: str) -> JudgeReport:
        rep.timing_error = f"ray sandbox infrastructure failure: {why}"
        return rep
    return sandbox.remote_call(_measure_on_worker, rep, task, dict(files), cases, language, list(argv),
                               dict(extra) if extra else None, on_give_up=gave_up)
