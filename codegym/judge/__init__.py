"""The judge: run a task's tests on a workspace and return a `JudgeReport`.

    from codegym.judge import judge
    rep = judge(task, files, sandbox=sb, split="hidden", timing=False)
"""

from codegym.judge.perf import PerfRuns, perf_runs
from codegym.judge.remote import judge_async, judge_remote
from codegym.judge.report import CASE_STATUSES, STAGES, VERDICTS, CaseResult, JudgeReport
from codegym.judge.run import is_blank_code, judge, python_compile_error

__all__ = ["judge", "JudgeReport", "CaseResult", "PerfRuns", "perf_runs", "VERDICTS",
           "CASE_STATUSES", "STAGES", "is_blank_code", "python_compile_error", "judge_remote", "judge_async"]
