"""The function kind (Python): the driver calls the entry point once per case.

One driver run holds a chunk of cases (as many chunks as the sandbox has workers, 16
cases at least per chunk); each case is called under its own CPU and wall-clock guard
and its return value comes back as a frame. Values are decoded and compared in the host
(`ValueChecker`): expected values never enter the sandbox. When a run ends early (the
driver's time guard, a crash), the cases it did not reach run again in a new chunk.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from codegym.judge.harness import FUNCTION_DRIVER
from codegym.judge.kinds.common import case_checkers, case_limits
from codegym.judge.protocol import (
    DecodeError,
    decode_value,
    function_request,
    new_nonce,
    parse_function_frames,
    solution_files,
    value_cap,
)
from codegym.judge.report import STATUS_OF_EXEC, CaseResult, clip, exec_message, tail
from codegym.judge.testgen import Case
from codegym.sandbox import RunRequest
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task

#: statuses of a frame that are case statuses as they are (others: runtime_error)
FRAME_STATUSES = ("runtime_error", "timeout", "memory_limit", "output_limit")
#: what decoding a wire value can raise
DECODE_ERRORS = (DecodeError, ValueError, TypeError, KeyError, RecursionError)


def run_function(task: Task, files: Mapping[str, Any], main_file: str, cases: list[Case], sandbox: Sandbox,
                 early_exit: bool) -> tuple[list[CaseResult | None], str | None]:
    """Returns (results, compile_error message or None)."""
    build = sandbox.build("python", {"main.py": FUNCTION_DRIVER})
    sol_files = solution_files(dict(files))
    if not build.ok:
        res = build.result
        msg = exec_message(res) if res is not None else "build failed"
        st = "sandbox_error" if res is not None and res.status == "sandbox_error" else "runtime_error"
        return [CaseResult(c.index, c.name, st, c.split, message=msg, weight=c.weight) for c in cases], None
    return _FunctionRun(task, main_file, cases, sol_files, early_exit).run(sandbox, build)


class _FunctionRun:
    """The cases of one judged function task, run chunk by chunk."""

    def __init__(self, task: Task, main_file: str, cases: list[Case], sol_files: dict, early_exit: bool):
        self.task, self.main_file, self.cases = task, main_file, cases
        self.sol_files, self.early_exit = sol_files, early_exit
        self.out: list[CaseResult | None] = [None] * len(cases)
        self.checker_for = case_checkers(task, value=True)
        self.per_case = [(lim.time_s, lim.wall()) for lim in (case_limits(task, c) for c in cases)]
        self.import_time = task.limits.time_s
        assert task.entry_point is not None  # (a function task has one: `codegym.tasks.checks`)
        self.entry: str = task.entry_point
        self.compile_error: str | None = None
        self.stopped = False

    def run(self, sandbox: Sandbox, build) -> tuple[list[CaseResult | None], str | None]:
        n = len(self.cases)
        workers = max(1, int(sandbox.workers or 1))
        n_chunks = max(1, min(workers, math.ceil(n / 16)))
        size = math.ceil(n / n_chunks) if n else 0
        pending = [list(range(k, min(n, k + size))) for k in range(0, n, size)] if n else []
        while pending and not self.stopped:
            pending = self.run_chunks(sandbox, build, pending)
            if self.compile_error is not None:
                return self.out, self.compile_error
        return self.out, None

    def run_chunks(self, sandbox: Sandbox, build, batch: list[list[int]]) -> list[list[int]]:
        """Run one driver per chunk of `batch`; returns the chunks still to run."""
        reqs = [self.request(idxs) for idxs in batch]
        follow: list[list[int]] = []
        absorbed: set[int] = set()

        def stop(k: int, res) -> bool:
            absorbed.add(k)
            failed, rest = self.absorb(batch[k], reqs[k][0], res)
            if rest:
                follow.append(rest)
            if failed and self.early_exit:
                self.stopped = True
                return True
            return False

        results = sandbox.run_many(build, [r for _, r in reqs], stop=stop)
        for k, res in enumerate(results):
            if res is not None and k not in absorbed:   # finished after the stop
                self.absorb(batch[k], reqs[k][0], res)
        return sorted(follow)

    def request(self, idxs: list[int]) -> tuple[str, RunRequest]:
        """(nonce, request) of one driver run over the cases `idxs`."""
        cases, per_case, limits = self.cases, self.per_case, self.task.limits
        nonce = new_nonce()
        body = function_request(
            nonce, self.main_file, self.entry,
            [(i, list(cases[i].args or []), dict(cases[i].kwargs or {}), per_case[i][0], per_case[i][1])
             for i in idxs], import_time=self.import_time, stop_on_error=self.early_exit,
            cap=value_cap(limits), preamble=self.task.preamble)
        cpu = sum(per_case[i][0] for i in idxs) + self.import_time + 1.0
        wall = sum(per_case[i][1] for i in idxs) + limits.wall() + 2.0
        return nonce, RunRequest(stdin=body, limits=limits.replace(time_s=cpu, wall_s=wall),
                                 extra_files=self.sol_files)

    def absorb(self, idxs: list[int], nonce: str, res) -> tuple[bool, list[int]]:
        """Fill the results of one chunk; returns (a case failed, indices still to run)."""
        frames = parse_function_frames(res.stdout, nonce)
        if frames.import_error is not None:
            self.import_failed(idxs, frames.import_error)
            return True, []
        failed = False
        prev_status = None
        for pos, i in enumerate(idxs):
            c = self.cases[i]
            fr = frames.results.get(i)
            if fr is None:  # the process ended during this case (or never reached it)
                if prev_status == "timeout" and res.status == "ok":
                    # the driver's own time guard ended the run after the previous case
                    return failed, idxs[pos:]
                failed = True
                if frames.done:
                    self.out[i] = CaseResult(c.index, c.name, "sandbox_error", c.split,
                                             message="the driver reported no result for this case",
                                             weight=c.weight)
                    continue
                self.out[i] = self.ended_during(c, res)
                return True, idxs[pos + 1:]
            prev_status = fr.get("s")
            r = self.out[i] = self.result_of(c, fr)
            if not r.passed:
                failed = True
                if prev_status != "ok" and self.early_exit:
                    return True, []
        return failed, []

    def import_failed(self, idxs: list[int], err: dict) -> None:
        """Every case of the chunk fails as importing the candidate did."""
        kind = err.get("import")
        msg = clip(str(err.get("e", "")))
        if kind == "compile_error":
            self.compile_error = msg
        status = kind if kind in ("timeout", "memory_limit") else "runtime_error"
        for i in idxs:
            c = self.cases[i]
            self.out[i] = CaseResult(c.index, c.name, status, c.split, message=msg, weight=c.weight)

    @staticmethod
    def ended_during(c: Case, res) -> CaseResult:
        """The case during which the driver's process ended without a frame."""
        st = STATUS_OF_EXEC.get(res.status, "runtime_error")
        if res.status == "ok":
            msg = "the program exited during the call" + (f" (exit code {res.exit_code})"
                                                           if res.exit_code else "")
            msg = clip(msg + ("\n" + tail(res.stderr) if res.stderr.strip() else ""))
        else:
            msg = exec_message(res)
        return CaseResult(c.index, c.name, st, c.split, wall_s=res.wall_s, memory_mb=res.max_rss_mb,
                          message=msg, weight=c.weight)

    def result_of(self, c: Case, fr: dict) -> CaseResult:
        """The case's result from its frame: the returned value checked, or the failure."""
        st = fr.get("s")
        t, w, m = float(fr.get("t") or 0.0), float(fr.get("w") or 0.0), float(fr.get("m") or 0.0)
        if st != "ok":
            status = st if st in FRAME_STATUSES else "runtime_error"
            return CaseResult(c.index, c.name, status, c.split, time_s=t, wall_s=w, memory_mb=m,
                              message=clip(str(fr.get("e", ""))), weight=c.weight)
        try:
            got = decode_value(fr.get("v"))
        except DECODE_ERRORS as e:
            return CaseResult(c.index, c.name, "wrong_answer", c.split, time_s=t, wall_s=w, memory_mb=m,
                              message=f"undecodable return value: {e}", weight=c.weight)
        r = self.checker_for(c).check_value(c.expected, got, c.args, c.kwargs)
        return CaseResult(c.index, c.name, "passed" if r.ok else "wrong_answer", c.split, time_s=t, wall_s=w,
                          memory_mb=m, message=r.message, diff=r.diff, score=1.0 if r.ok else 0.0,
                          weight=c.weight)


