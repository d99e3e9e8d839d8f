"""What the judge decides: `JudgeReport`, `CaseResult`, and the verdict rule.

`finish_report` turns the case results into the verdict: ``accepted`` iff every case
passed, ``sandbox_error`` when any case is one (not a verdict), else the status of
the first failing case in case order; ``stage`` and
``progress`` say how far the program got (docs/judge.md lists the rules). The one stage
vocabulary is here: `STAGES` (``JudgeReport.stage``), `PROGRAM_STAGES` (the same with
``ran`` told apart, what the staged reward ranks: `program_stage`) and the progress rule
(`ran_progress`). Also here: the wording of failed runs (`exec_message`,
`STATUS_OF_EXEC`) and message clipping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: every verdict a report can carry
VERDICTS = ("accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit",
            "compile_error", "no_code", "sandbox_error")
#: statuses of one case
CASE_STATUSES = ("passed", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit",
                 "compile_error", "sandbox_error", "skipped")
#: how far a program got, in order (``JudgeReport.stage``; docs/judge.md)
STAGES = ("no_code", "compile_error", "ran", "accepted")
#: the same stages with ``ran`` told apart, in order (what the staged reward ranks, its
#: ``info["staged"]["stage"]``; docs/rewards.md): each one and the `STAGES` entry it
#: refines. ``sandbox_error`` is not a verdict: it is ranked nowhere
PROGRAM_STAGES = {"no_code": "no_code", "compile_error": "compile_error", "runtime_error": "ran",
                  "wrong_answer": "ran", "correct": "accepted", "sandbox_error": "ran"}
#: case statuses that mean "it ran but crashed or ran out of a resource"
RUNTIME_STATUSES = frozenset({"runtime_error", "timeout", "memory_limit", "output_limit"})
#: how much program output / stderr a message quotes
MESSAGE_MAX = 600


@dataclass
class CaseResult:
    """Outcome of one test case.

    status   passed | wrong_answer | runtime_error | timeout | memory_limit | output_limit |
             compile_error | sandbox_error | skipped (not evaluated: early exit)
    time_s   CPU seconds of the run (function kind: of the call); wall_s wall-clock seconds
    memory_mb  peak resident memory of the process
    message  what went wrong (exception, exit code, checker message), truncated
    diff     short expected-vs-got description of the first difference
    score    1.0 passed, partial credit from a program checker, else 0.0
    """

    index: int
    name: str
    status: str
    split: str = ""
    time_s: float = 0.0
    wall_s: float = 0.0
    memory_mb: float = 0.0
    message: str = ""
    diff: str = ""
    score: float = 0.0
    weight: float = 1.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict:
        # every field is a scalar: no deep copy needed (asdict costs ~10x this)
        return {f: getattr(self, f) for f in _CASE_FIELDS}


_CASE_FIELDS = tuple(f.name for f in dataclasses.fields(CaseResult))


@dataclass
class JudgeReport:
    """What the judge decided about one workspace on one split (see docs/judge.md)."""

    verdict: str
    passed: int
    total: int
    cases: list[CaseResult] = field(default_factory=list)
    stage: str = "ran"
    progress: float = 0.0
    compile_output: str = ""
    timing: Any = None
    task_id: str = ""
    task_hash: str = ""
    split: str = "hidden"
    language: str = ""
    checker: str = ""
    score: float = 0.0
    elapsed_s: float = 0.0
    first_failure: int | None = None
    message: str = ""
    timing_error: str = ""

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"

    def failing_case(self) -> CaseResult | None:
        return self.cases[self.first_failure] if self.first_failure is not None else None

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "verdict", "passed", "total", "stage", "progress", "compile_output", "task_id", "task_hash",
            "split", "language", "checker", "score", "elapsed_s", "first_failure", "message",
            "timing_error")}
        d["cases"] = [c.to_dict() for c in self.cases]
        t = self.timing
        d["timing"] = t.to_dict() if hasattr(t, "to_dict") else t
        return d


def case_verdict(results: Sequence[CaseResult | None], cases: Sequence) -> dict[str, Any]:
    """The `JudgeReport` fields the case results decide (None: not evaluated, reported
    ``skipped``): the cases, the counts, the weighted score, and the verdict of the first
    failing case in case order (with its ``message``; an accepted run sets none). Pure."""
    final: list[CaseResult] = []
    for c, r in zip(cases, results):
        final.append(r if r is not None else CaseResult(c.index, c.name, "skipped", c.split, weight=c.weight))
    passed = sum(1 for r in final if r.passed)
    wsum = sum(r.weight for r in final)
    score = (sum(r.weight * (r.score if r.status in ("passed", "wrong_answer") else 0.0) for r in final)
             / wsum) if wsum > 0 else 1.0
    out: dict[str, Any] = {"cases": final, "total": len(final), "passed": passed, "score": score}
    first = next((r for r in final if r.status not in ("passed", "skipped")), None)
    # a case the infrastructure could not run leaves the counts unknown: the report is
    # not a verdict (never a program verdict, whatever the other cases did)
    first = next((r for r in final if r.status == "sandbox_error"), first)
    if first is None and any(r.status == "skipped" for r in final):
        first = next(r for r in final if r.status == "skipped")
        first = CaseResult(first.index, first.name, "sandbox_error", first.split,
                           message="case was not run although no case failed")
    if first is None:
        out.update(verdict="accepted", stage="accepted", progress=1.0, first_failure=None)
    else:
        out.update(verdict=first.status, first_failure=first.index, stage="ran",
                   progress=ran_progress(passed, len(final)),
                   message=f"case {first.index} ({first.name}): {first.status}" + (
                       f": {first.message.splitlines()[0][:200]}" if first.message else ""))
    return out


def finish_report(rep: JudgeReport, results: Sequence[CaseResult | None], cases: Sequence) -> JudgeReport:
    """Fill `rep` from the case results (`case_verdict`); returns `rep`. For a report made
    again after its runs (a timed run that failed), and for verifiers that build their own."""
    for name, value in case_verdict(results, cases).items():
        setattr(rep, name, value)
    return rep


@dataclass(frozen=True)
class Decided:
    """A verdict given before the cases decide one, or without them: no code, a compile
    error, a sandbox fault. Its fields are the `JudgeReport`'s (the report lists no case)."""

    verdict: str
    message: str
    stage: str
    progress: float
    compile_output: str = ""

    @classmethod
    def no_code(cls, message: str) -> Decided:
        return cls("no_code", message, "no_code", 0.0)

    @classmethod
    def compile_error(cls, output: str, message: str) -> Decided:
        return cls("compile_error", message, "compile_error", 0.25, output)

    @classmethod
    def sandbox_error(cls, message: str, stage: str = "ran", progress: float = 0.5) -> Decided:
        """Not a verdict: the infrastructure failed (`stage` and `progress`: how far the
        program had got when it did)."""
        return cls("sandbox_error", message, stage, progress)

    def fields(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "message": self.message, "stage": self.stage,
                "progress": self.progress, "compile_output": self.compile_output}


def ran_progress(passed: int, total: int) -> float:
    """``progress`` of a program that ran and failed: 0.5 + 0.5 * passed / total (0.5 with no
    test; accepted is 1.0, compile_error 0.25, no_code 0)."""
    return 0.5 + 0.5 * passed / total if total else 0.5


def program_stage(report: Mapping[str, Any]) -> tuple[str, float]:
    """(stage of `PROGRAM_STAGES`, fraction of tests passed) of a judge report (a dict of
    `JudgeReport.to_dict`).

    A program that ran and failed is in ``runtime_error`` when no test passed and every
    test that was evaluated crashed or ran out of a resource (the first failing case's
    status when the report lists no cases), else in ``wrong_answer``.
    """
    verdict = report.get("verdict")
    passed = int(report.get("passed") or 0)
    total = int(report.get("total") or 0)
    frac = passed / total if total else 0.0
    if verdict == "accepted":
        return "correct", 1.0
    if verdict in ("no_code", "compile_error", "sandbox_error"):
        return verdict, 0.0
    if passed == 0:
        cases = [c for c in report.get("cases") or () if c.get("status") not in ("skipped", "passed")]
        statuses = {c.get("status") for c in cases} if cases else {verdict}
        if statuses <= RUNTIME_STATUSES:
            return "runtime_error", 0.0
    return "wrong_answer", frac


# --------------------------------------------------------------------------- messages


def clip(s: str, n: int = MESSAGE_MAX) -> str:
    """`s` cut to its first `n` characters (with "...")."""
    s = s or ""
    return s if len(s) <= n else s[: n - 3] + "..."


def tail(s: str, n: int = MESSAGE_MAX) -> str:
    """The last `n` characters of `s` (with "..."), trailing whitespace dropped."""
    s = (s or "").rstrip()
    return s if len(s) <= n else "..." + s[-(n - 3):]


#: case status of a run that did not end ok
STATUS_OF_EXEC = {"runtime_error": "runtime_error", "timeout": "timeout", "memory_limit": "memory_limit",
                  "output_limit": "output_limit", "sandbox_error": "sandbox_error",
                  "compile_error": "runtime_error"}


def exec_message(res) -> str:
    """What went wrong in a run (an `ExecResult`): the limit hit, or the exit code or
    signal, then the tail of its stderr."""
    parts = []
    if res.status == "timeout":
        parts.append(res.message or "time limit exceeded")
    elif res.status == "memory_limit":
        parts.append(res.message or "memory limit exceeded")
    elif res.status == "output_limit":
        parts.append(res.message or "output limit exceeded")
    else:
        if res.signal:
            parts.append(f"killed by signal {res.signal}")
        elif res.exit_code not in (None, 0):
            parts.append(f"exit code {res.exit_code}")
        if res.message and res.message not in parts:
            parts.append(res.message)
    err = tail(res.stderr)
    if err:
        parts.append(err)
    return clip("\n".join(parts))


