"""The judge: run a task's tests on a workspace and return a `JudgeReport`.

    from codegym.judge import judge
    rep = judge(task, files, sandbox=sb, split="hidden", timing=False)
"""

from codegym.judge.run import (
    CASE_STATUSES,
    STAGES,
    VERDICTS,
    CaseResult,
    JudgeReport,
    PerfRuns,
    is_blank_code,
    judge,
    perf_runs,
    python_compile_error,
)

__all__ = ["judge", "JudgeReport", "CaseResult", "PerfRuns", "perf_runs", "VERDICTS",
           "CASE_STATUSES", "STAGES", "is_blank_code", "python_compile_error"]
