"""The stdio kind: one run per case (stdin in, stdout checked in the host).

The program is built once and run with ``run_many``. Python programs are not built:
the sandbox's launcher is, and their files travel as extra files of each run, so no
candidate's code ever sits in the build store other runs can read. Program checkers
(special judges) run after the cases, in parallel, grouped by checker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codegym.judge.checkers.base import CheckResult
from codegym.judge.checkers.program import ProgramChecker
from codegym.judge.kinds.common import case_checkers, case_limits
from codegym.judge.protocol import unshift_lines, with_preamble
from codegym.judge.report import STATUS_OF_EXEC, CaseResult, exec_message
from codegym.judge.testgen import Case
from codegym.sandbox import RunRequest
from codegym.sandbox.launcher import LAUNCHER, hidden_files
from codegym.sandbox.types import Sandbox
from codegym.tasks.schema import Task


def stdio_launch(lang: str, files: Mapping[str, Any], main_file: str,
                 preamble: str | None = None) -> tuple[list[str], dict | None]:
    """(argv, extra files) of a stdio run. Python programs run through the launcher with
    their files as extra files of each run: they never enter the sandbox's build store,
    which later runs can read (a policy must not learn to copy a peer's solution). A
    task's `preamble` (Python) is prepended to the main file."""
    if lang == "python":
        return [main_file], hidden_files(with_preamble(dict(files), main_file, preamble))
    return [], None


def stdio_build(sandbox: Sandbox, lang: str, files: Mapping[str, Any], extra: Mapping[str, Any] | None):
    """The build a stdio program runs as: the launcher when its files are `extra` files
    (see `stdio_launch`), else the program's own files."""
    if extra is not None:
        return sandbox.build(lang, {"main.py": LAUNCHER})
    return sandbox.build(lang, dict(files))


def run_stdio(task: Task, build, cases: list[Case], sandbox: Sandbox, early_exit: bool, language: str,
              argv: Sequence[str] = (), extra: Mapping[str, Any] | None = None) -> list[CaseResult | None]:
    """Run every case (all of them, or until the first failure with `early_exit`) and
    check each output; None for a case never evaluated."""
    out: list[CaseResult | None] = [None] * len(cases)
    checker_for = case_checkers(task)
    program_pending: list[int] = []
    preamble = task.preamble if language == "python" and argv else None

    def evaluate(i: int, res) -> bool:
        """Fill out[i]; True when the case failed (for early exit)."""
        case = cases[i]
        base = dict(index=case.index, name=case.name, split=case.split, time_s=res.cpu_s, wall_s=res.wall_s,
                    memory_mb=res.max_rss_mb, weight=case.weight)
        if res.status != "ok":
            out[i] = CaseResult(status=STATUS_OF_EXEC.get(res.status, "runtime_error"),
                                message=unshift_lines(exec_message(res), argv[0] if argv else "", preamble),
                                **base)
            return True
        chk = checker_for(case)
        if isinstance(chk, ProgramChecker):
            program_pending.append(i)
            out[i] = CaseResult(status="passed", score=1.0, **base)  # provisional
            return False
        r = chk.check(case.expected, res.stdout, case.stdin or "")
        if res.stdout_truncated and r.ok:
            r = CheckResult(False, 0.0, "output was truncated", "")
        out[i] = CaseResult(status="passed" if r.ok else "wrong_answer", message=r.message, diff=r.diff,
                            score=r.score if r.ok else 0.0, **base)
        return not r.ok

    def stop(i: int, res) -> bool:
        failed = evaluate(i, res)
        return early_exit and failed

    reqs = [RunRequest(stdin=case.stdin or "", argv=argv, extra_files=extra,
                       limits=case_limits(task, case) if case.time_s else None) for case in cases]
    results = sandbox.run_many(build, reqs, limits=task.limits, stop=stop)
    for i, res in enumerate(results):
        if res is not None and out[i] is None:
            evaluate(i, res)
    if program_pending:
        _check_with_programs(sandbox, cases, results, out, program_pending, checker_for)
    return out


def _check_with_programs(sandbox: Sandbox, cases: list[Case], results: list, out: list[CaseResult | None],
                         pending: list[int], checker_for) -> None:
    """Run the program checkers of the `pending` cases (provisionally passed), grouped by
    checker, and settle those cases: a failing checker is a sandbox_error, not a verdict."""
    groups: dict[int, list[int]] = {}
    for i in pending:
        groups.setdefault(id(checker_for(cases[i])), []).append(i)
    for idxs in groups.values():
        chk = checker_for(cases[idxs[0]])
        checks = chk.check_many(sandbox, [(cases[i].stdin or "", cases[i].expected,
                                           results[i].stdout) for i in idxs])
        for i, r in zip(idxs, checks):
            cr = out[i]
            assert cr is not None
            if r.failed:
                cr.status = "sandbox_error"
            elif not r.ok:
                cr.status = "wrong_answer"
            cr.score = r.score if not r.failed else 0.0
            cr.message, cr.diff = r.message, r.diff


