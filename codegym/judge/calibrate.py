"""Calibration of timed tasks: each known solution's runtime on this machine.

`calibrate_task(task, sandbox, ...) -> TaskCalibration` judges each solution that must be
accepted (baseline, reference and, for DMC-Optim tasks, the solutions standing in for
human submissions) on the perf split, measures it (`codegym.timing.measure`, calibration
included; the runs are `codegym.judge.perf.perf_workload`) and builds the
`codegym.tasks.runtimes.TaskRuntimes` record: medians, normalised values, CV, the
baseline/reference ratio and the strict top-30/50/70 % thresholds. Solutions are measured
one after another (side by side they disturb each other). The command is
`codegym.cli.calibrate` (``codegym tasks calibrate``); docs/judge.md has the details.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codegym.judge.perf import perf_workload
from codegym.judge.run import judge
from codegym.sandbox import make_sandbox
from codegym.sandbox.types import Sandbox
from codegym.tasks.runtimes import SolutionRuntime, TaskRuntimes, suite_dir_of
from codegym.tasks.schema import STARTER, Task
from codegym.timing.measurement import measure
from codegym.timing.metrics import DEFAULT_MIN_OF, UnsupportedMetricError

#: a baseline should be at least this many times slower than its reference (RLPF tasks)
DEFAULT_MIN_RATIO = 2.0
#: seconds one solution's measurement may spend (timing.measure's budget)
DEFAULT_BUDGET_S = 60.0
#: samples a measurement may take beyond the requested repeats to reach its precision
DEFAULT_MAX_REPEATS = 10
#: automatic min_of: a solution whose judged pass over the perf split took more CPU seconds
#: than this is sampled with min_of=1 (one pass per sample). Minimum-of-k drops runs hit by
#: a busy neighbour, which matters for short runs; a long run averages such interference
#: out, and its budget buys more samples (a CV at all) instead of repeated passes.
AUTO_MIN_OF_S = 0.5

Log = Callable[[str], None]


# =========================================================================== records


@dataclass
class SolutionResult:
    """One solution of a task: its perf-split verdict and its measurement.

    role         "baseline", "reference", or "" (another member of the distribution)
    verdict      judge verdict on the perf split; "skipped" when not judged (a solution
                 expected to fail); "error" when judging raised
    measurement  `codegym.timing.measurement.Measurement` (None when not measured)
    error        why the measurement is missing or invalid
    unsupported  the metric cannot measure this solution (instructions of Python code)
    """

    name: str
    language: str
    role: str = ""
    verdict: str = "skipped"
    message: str = ""
    measurement: Any = None
    error: str = ""
    unsupported: bool = False
    elapsed_s: float = 0.0

    @property
    def measured(self) -> bool:
        m = self.measurement
        return m is not None and bool(m.ok) and m.median is not None

    @property
    def failed(self) -> bool:
        """Judged and not accepted, or accepted but not measurable (other than by metric)."""
        if self.verdict == "skipped":
            return False
        if self.verdict != "accepted":
            return True
        return not self.measured and not self.unsupported

    def to_dict(self) -> dict:
        m = self.measurement
        d: dict[str, Any] = {"language": self.language, "role": self.role, "verdict": self.verdict,
                             "message": self.message, "error": self.error,
                             "unsupported": self.unsupported, "elapsed_s": round(self.elapsed_s, 3)}
        if self.measured:
            d.update(SolutionRuntime.from_measurement(self.language, m).to_dict())
        return d


@dataclass
class TaskCalibration:
    """What calibrating one task found.

    skipped   why the task was not calibrated ("" when it was)
    solutions every solution considered, in measurement order
    record    the distribution (None when nothing could be measured)
    complete  every solution that must be accepted was accepted and measured (only
              complete records are written to the sidecar)
    """

    task_id: str
    content_hash: str
    suite_dir: Path | None
    metric: str
    skipped: str = ""
    solutions: list[SolutionResult] = field(default_factory=list)
    record: TaskRuntimes | None = None
    elapsed_s: float = 0.0

    @property
    def failures(self) -> list[SolutionResult]:
        return [s for s in self.solutions if s.failed]

    @property
    def complete(self) -> bool:
        return self.record is not None and not self.failures

    @property
    def ratio(self) -> float | None:
        return self.record.ratio if self.record else None

    def below(self, min_ratio: float) -> bool:
        """True when both baseline and reference were measured and their ratio < min_ratio."""
        r = self.ratio
        return r is not None and r < min_ratio

    def to_dict(self) -> dict:
        rec = self.record
        return {
            "id": self.task_id, "content_hash": self.content_hash, "metric": self.metric,
            "skipped": self.skipped, "complete": self.complete,
            "baseline": rec.baseline if rec else None, "reference": rec.reference if rec else None,
            "ratio": rec.ratio if rec else None, "ratio_ci": list(rec.ratio_ci) if rec and rec.ratio_ci else None,
            "noise": rec.noise if rec else None, "calibration": rec.calibration if rec else None,
            "order": [n for n, _ in rec.sorted()] if rec else [],
            "thresholds": {k: v.to_dict() for k, v in rec.thresholds.items()} if rec else {},
            "solutions": {s.name: s.to_dict() for s in self.solutions},
            "elapsed_s": round(self.elapsed_s, 3),
        }


# =========================================================================== measuring


def _members(task: Task) -> list[tuple[str, str, dict, str, str]]:
    """[(name, language, files, role, expect)] of the solutions to calibrate, the
    reference first and the baseline last (then: everything else by name)."""
    base = task.baseline_name
    ref = task.reference_name
    out = []
    for name, sol in task.solutions.items():
        role = "reference" if name == ref else "baseline" if name == base else ""
        out.append((name, sol.language or task.language, dict(sol.files), role, sol.expect))
    if task.baseline_is_starter and task.starter:
        out.append((STARTER, task.language, task.starter_files(), "baseline", "accepted"))
    rank = {"reference": 0, "": 1, "baseline": 2}
    return sorted(out, key=lambda m: (rank[m[3]], m[0]))


def _first_failure(rep) -> str:
    bad = rep.failing_case() if hasattr(rep, "failing_case") else None
    if bad is not None:
        return f"case {bad.name or bad.index}: {bad.status}" + (
            f": {bad.message.splitlines()[0][:200]}" if bad.message else "")
    return rep.message or rep.compile_output[:200]


def calibrate_task(task: Task, sandbox: Sandbox | None = None, *, metric: str | None = None, repeats: int | None = None,
                   warmups: int | None = None, min_of: int | None = None,
                   max_repeats: int | None = None, budget_s: float = DEFAULT_BUDGET_S,
                   target_rel_ci: float = 0.02, log: Log | None = None) -> TaskCalibration:
    """Judge and measure every solution of `task` on its perf split (see docs/judge.md).
    `metric`, `repeats`, `warmups` default to the task's ``perf`` settings; `min_of` None
    is automatic: `codegym.timing`'s default for the metric, or 1 for a solution whose
    judged perf pass took more than `AUTO_MIN_OF_S` CPU seconds (each solution records the
    value used); `max_repeats` (default max(repeats, 10)) and `budget_s` bound each
    measurement."""
    t0 = time.monotonic()
    p = task.perf
    metric = metric or p.metric
    repeats = int(repeats if repeats is not None else p.repeats)
    warmups = int(warmups if warmups is not None else p.warmups)
    k_default = DEFAULT_MIN_OF[metric] if min_of is None else max(1, int(min_of))
    max_rep = int(max_repeats if max_repeats is not None else max(repeats, DEFAULT_MAX_REPEATS))
    cal = TaskCalibration(task.id, task.content_hash, suite_dir_of(task), metric)
    say = log or (lambda _msg: None)
    if not task.cases("perf"):
        cal.skipped = "no perf cases"
        return cal
    if task.kind not in ("stdio", "function"):
        cal.skipped = f"timing is not supported for {task.kind} tasks"
        return cal
    if sandbox is None:
        sandbox = make_sandbox()
    settings: dict[str, Any] = dict(metric=metric, warmups=warmups, repeats=repeats, max_repeats=max(max_rep, repeats),
                    target_rel_ci=target_rel_ci, budget_s=budget_s)
    for name, lang, files, role, expect in _members(task):
        s = SolutionResult(name=name, language=lang, role=role)
        cal.solutions.append(s)
        if expect != "accepted":
            s.message = f"expected {expect}: not part of the distribution"
            continue
        ts = time.monotonic()
        pass_cpu = _judge_solution(task, s, files, sandbox)
        if s.verdict == "accepted":
            k = 1 if min_of is None and metric != "instructions" and pass_cpu > AUTO_MIN_OF_S else k_default
            _measure_solution(task, s, files, sandbox, min_of=k, **settings)
        s.elapsed_s = time.monotonic() - ts
        say(solution_line(task.id, s, metric))
    cal.record = _record(task, cal, metric, min_of=min_of, warmups=warmups, repeats=repeats)
    cal.elapsed_s = time.monotonic() - t0
    return cal


def _judge_solution(task: Task, s: SolutionResult, files: dict, sandbox: Sandbox) -> float:
    """Judge solution `s` on the perf split (its verdict and message go into `s`); returns
    the CPU seconds of the judged pass."""
    try:
        rep = judge(task, files, sandbox=sandbox, split="perf", language=s.language)
    except Exception as e:  # noqa: BLE001 -- report it as this solution's failure
        s.verdict, s.message = "error", f"{type(e).__name__}: {e}"
        return 0.0
    s.verdict = rep.verdict
    if rep.verdict != "accepted":
        s.message = _first_failure(rep)
    return sum(c.time_s for c in rep.cases)


def _measure_solution(task: Task, s: SolutionResult, files: dict, sandbox: Sandbox, *, metric: str, **settings) -> None:
    """Measure accepted solution `s` (its measurement, or why there is none, go into `s`)."""
    try:
        runs = perf_workload(task, files, s.language, sandbox)
        s.measurement = measure(sandbox, runs.build, runs.inputs, metric=metric, limits=runs.limits,
                                verify=runs.verify, **settings)
        if not s.measurement.ok:
            s.error = s.measurement.reason or "measurement failed"
        elif s.measurement.normalized is None and metric != "instructions":
            s.error = s.measurement.reason or "no calibration"
    except UnsupportedMetricError as e:
        s.unsupported, s.error = True, str(e)
    except Exception as e:  # noqa: BLE001
        s.error = f"{type(e).__name__}: {e}"
    if s.error and s.measured and metric != "instructions":
        s.measurement = None  # no normalised value: not comparable, keep it out


def _record(task: Task, cal: TaskCalibration, metric: str, *, min_of: int | None, warmups: int,
            repeats: int) -> TaskRuntimes | None:
    """The runtime distribution of the measured solutions (None: none was measured)."""
    measured = {s.name: SolutionRuntime.from_measurement(s.language, s.measurement)
                for s in cal.solutions if s.measured}
    if not measured:
        return None
    cals = [m.calibration for m in measured.values() if m.calibration]
    roles = {s.role: s.name for s in cal.solutions if s.role and s.name in measured}
    return TaskRuntimes(
        task_id=task.id, content_hash=task.content_hash, metric=metric,
        unit="instructions" if metric == "instructions" else "s",
        calibration=statistics.median(cals) if cals else None, min_of=min_of, warmups=warmups,
        repeats=repeats, baseline=roles.get("baseline"), reference=roles.get("reference"),
        solutions=measured)


# =========================================================================== formatting


def fmt_value(v: float | None, unit: str = "s") -> str:
    """A measured value for tables: 4 significant digits ("-" when missing)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if unit == "instructions":
        return f"{v:.3e}"
    return f"{v:.4g}"


def fmt_pct(v: float | None) -> str:
    """A fraction as a percentage ("-" when missing)."""
    return "-" if v is None or not math.isfinite(v) else f"{100 * v:.1f}%"


def solution_line(task_id: str, s: SolutionResult, metric: str) -> str:
    """One progress line: a solution's verdict and measurement."""
    unit = "instructions" if metric == "instructions" else "s"
    head = f"{task_id} {s.name}" + (f" ({s.role})" if s.role else "") + f" [{s.language}]: {s.verdict}"
    if s.measured:
        m = s.measurement
        return (f"{head}, median {fmt_value(m.median, unit)} {unit} (n={m.n}x{m.min_of}, cv {fmt_pct(m.cv)}, "
                f"rel CI {fmt_pct(m.rel_ci)}), {s.elapsed_s:.1f} s")
    detail = s.error or s.message
    return f"{head}" + (f": {detail}" if detail else "") + f", {s.elapsed_s:.1f} s"


def machine_facts() -> dict:
    """What a measurement's machine was: host, platform, CPU model and count, Python, load."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {"host": platform.node(), "platform": platform.platform(), "cpu": cpu, "cpus": os.cpu_count(),
            "python": platform.python_version(), "loadavg": load}
