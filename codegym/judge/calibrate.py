"""``codegym tasks calibrate``: measure every task's runtime distribution on this machine.

This module owns the calibration of timed tasks:

- `calibrate_task(task, sandbox, ...) -> TaskCalibration`: judges each known solution
  (every accepted one: baseline, reference and, for DMC-Optim tasks, the whole set of
  solutions standing in for human submissions) on the perf split, then measures it with
  `codegym.timing.measurement.measure` (calibration factor, noise floor included) and builds the
  `codegym.tasks.runtimes.TaskRuntimes` record: medians, normalised values, CV, n, the
  baseline/reference ratio and the strict top-30/50/70 % thresholds;
- `perf_workload(task, files, language, sandbox)`: the runs one program is timed on
  (`codegym.judge.run.perf_runs`, as `codegym.judge.run` measures with ``timing=True``);
- the command (`register_tasks`, handler `cmd_calibrate`):

      codegym tasks calibrate [SUITE|PATH ...] [--metric cpu|wall|instructions]
          [--repeats N] [--tasks GLOB] [--write] [--json] ...

  prints a table per suite, lists the tasks whose baseline/reference ratio is under
  ``--min-ratio`` (2x: the RLPF premise that the reference is clearly faster), and
  exits 1 when a solution is not accepted on the perf split or cannot be measured.
  ``--write`` stores the records in ``tasks/<suite>/runtimes.json`` (see
  `codegym.tasks.runtimes`; task YAMLs are never rewritten, so content hashes do not move),
  after each task, so an interrupted run keeps what it measured.

Tasks are measured one at a time and solutions one after another: measurements that
run side by side on a small machine disturb each other more than any statistic can
correct. Each measurement carries its own calibration sample (see `codegym.timing.measurement`),
so drift during a long run is divided out of the normalised values.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from codegym.tasks.runtimes import (SIDECAR, STARTER, SolutionRuntime, TaskRuntimes, suite_dir_of,
                              update_sidecar)

__all__ = ["SolutionResult", "TaskCalibration", "calibrate_task", "perf_workload",
           "register_tasks", "cmd_calibrate", "DEFAULT_MIN_RATIO", "DEFAULT_BUDGET_S"]

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


def perf_workload(task, files: Mapping[str, Any], language: str, sandbox):
    """The runs that time `files` on the task's perf split: `codegym.judge.run.perf_runs`
    (launched as the judge runs the cases, every output checked).

    Raises ValueError for kinds without a timed form (script, repo)."""
    from codegym.judge.run import perf_runs
    from codegym.judge.testgen import materialize

    return perf_runs(task, files, sandbox, language, materialize(task, "perf", sandbox))


def _members(task) -> list[tuple[str, str, dict, str, str]]:
    """[(name, language, files, role, expect)] of the solutions to calibrate, the
    reference first and the baseline last (then: everything else by name)."""
    base = task.baseline_name
    ref = task.reference_name
    out = []
    for name, sol in task.solutions.items():
        role = "reference" if name == ref else "baseline" if name == base else ""
        out.append((name, sol.language or task.language, dict(sol.files), role, sol.expect))
    if base is None and task.starter and STARTER not in task.solutions:
        out.append((STARTER, task.language, task.starter_files(), "baseline", "accepted"))
    rank = {"reference": 0, "": 1, "baseline": 2}
    return sorted(out, key=lambda m: (rank[m[3]], m[0]))


def _first_failure(rep) -> str:
    bad = rep.failing_case() if hasattr(rep, "failing_case") else None
    if bad is not None:
        return f"case {bad.name or bad.index}: {bad.status}" + (
            f": {bad.message.splitlines()[0][:200]}" if bad.message else "")
    return rep.message or rep.compile_output[:200]


def calibrate_task(task, sandbox=None, *, metric: str | None = None, repeats: int | None = None,
                   warmups: int | None = None, min_of: int | None = None,
                   max_repeats: int | None = None, budget_s: float = DEFAULT_BUDGET_S,
                   target_rel_ci: float = 0.02, log: Log | None = None) -> TaskCalibration:
    """Judge and measure every solution of `task` on its perf split (see the module
    docstring). `metric`, `repeats`, `warmups` default to the task's ``perf`` settings;
    `min_of` None is automatic: `codegym.timing.measurement`'s default for the metric, or 1 for a
    solution whose judged perf pass took more than `AUTO_MIN_OF_S` CPU seconds (each
    solution records the value used); `max_repeats` (default max(repeats, 10)) and
    `budget_s` bound each measurement."""
    from codegym.timing import measurement as timing
    from codegym.judge.run import judge

    t0 = time.monotonic()
    p = task.perf
    metric = metric or p.metric
    repeats = int(repeats if repeats is not None else p.repeats)
    warmups = int(warmups if warmups is not None else p.warmups)
    k_default = timing.DEFAULT_MIN_OF[metric] if min_of is None else max(1, int(min_of))
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
        from codegym.sandbox import make_sandbox
        sandbox = make_sandbox()
    for name, lang, files, role, expect in _members(task):
        s = SolutionResult(name=name, language=lang, role=role)
        cal.solutions.append(s)
        if expect != "accepted":
            s.message = f"expected {expect}: not part of the distribution"
            continue
        ts = time.monotonic()
        pass_cpu = 0.0
        try:
            rep = judge(task, files, sandbox=sandbox, split="perf", language=lang)
            s.verdict = rep.verdict
            if rep.verdict != "accepted":
                s.message = _first_failure(rep)
            pass_cpu = sum(c.time_s for c in rep.cases)
        except Exception as e:  # noqa: BLE001 -- report it as this solution's failure
            s.verdict, s.message = "error", f"{type(e).__name__}: {e}"
        if s.verdict == "accepted":
            k = 1 if min_of is None and metric != "instructions" and pass_cpu > AUTO_MIN_OF_S else k_default
            try:
                runs = perf_workload(task, files, lang, sandbox)
                s.measurement = timing.measure(
                    sandbox, runs.build, runs.inputs, metric=metric, warmups=warmups, repeats=repeats,
                    max_repeats=max(max_rep, repeats), target_rel_ci=target_rel_ci,
                    budget_s=budget_s, limits=runs.limits, min_of=k, verify=runs.verify)
                if not s.measurement.ok:
                    s.error = s.measurement.reason or "measurement failed"
                elif s.measurement.normalized is None and metric != "instructions":
                    s.error = s.measurement.reason or "no calibration"
            except timing.UnsupportedMetricError as e:
                s.unsupported, s.error = True, str(e)
            except Exception as e:  # noqa: BLE001
                s.error = f"{type(e).__name__}: {e}"
            if s.error and s.measured and metric != "instructions":
                s.measurement = None  # no normalised value: not comparable, keep it out
        s.elapsed_s = time.monotonic() - ts
        say(_solution_line(task.id, s, metric))
    measured = {s.name: SolutionRuntime.from_measurement(s.language, s.measurement)
                for s in cal.solutions if s.measured}
    if measured:
        cals = [m.calibration for m in measured.values() if m.calibration]
        roles = {s.role: s.name for s in cal.solutions if s.role and s.name in measured}
        cal.record = TaskRuntimes(
            task_id=task.id, content_hash=task.content_hash, metric=metric,
            unit="instructions" if metric == "instructions" else "s",
            calibration=statistics.median(cals) if cals else None, min_of=min_of, warmups=warmups,
            repeats=repeats, baseline=roles.get("baseline"), reference=roles.get("reference"),
            solutions=measured)
    cal.elapsed_s = time.monotonic() - t0
    return cal


# =========================================================================== formatting


def _fmt(v: float | None, unit: str = "s") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if unit == "instructions":
        return f"{v:.3e}"
    return f"{v:.4g}"


def _pct(v: float | None) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{100 * v:.1f}%"


def _solution_line(task_id: str, s: SolutionResult, metric: str) -> str:
    unit = "instructions" if metric == "instructions" else "s"
    head = f"{task_id} {s.name}" + (f" ({s.role})" if s.role else "") + f" [{s.language}]: {s.verdict}"
    if s.measured:
        m = s.measurement
        return (f"{head}, median {_fmt(m.median, unit)} {unit} (n={m.n}x{m.min_of}, cv {_pct(m.cv)}, "
                f"rel CI {_pct(m.rel_ci)}), {s.elapsed_s:.1f} s")
    detail = s.error or s.message
    return f"{head}" + (f": {detail}" if detail else "") + f", {s.elapsed_s:.1f} s"


def _status(c: TaskCalibration, min_ratio: float) -> str:
    if c.skipped:
        return f"skipped: {c.skipped}"
    bad = c.failures
    if bad:
        return "FAIL " + "; ".join(f"{s.name}: {s.verdict if s.verdict != 'accepted' else 'unmeasured'}"
                                   for s in bad)
    unsup = [s.name for s in c.solutions if s.unsupported]
    if c.record is None:
        return "unsupported metric" if unsup else "nothing measured"
    notes = []
    if c.below(min_ratio):
        notes.append(f"ratio < {min_ratio:g}x")
    if unsup:
        notes.append(f"{len(unsup)} unsupported")
    return "ok" + (f" ({', '.join(notes)})" if notes else "")


def _print_table(suite: str, rows: list[TaskCalibration], min_ratio: float, metric_note: str) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{suite}: {len(rows)} task(s) calibrated ({metric_note})", box=box.SIMPLE_HEAD)
    for col, just in (("task", "left"), ("n", "right"), ("baseline", "right"), ("reference", "right"),
                      ("ratio", "right"), ("ratio range", "right"), ("noise", "right"),
                      ("cv max", "right"), ("calib s", "right"), ("distribution (fastest first)", "left"),
                      ("top30/50/70", "left"), ("status", "left")):
        table.add_column(col, justify=just, overflow="fold")
    for c in rows:
        rec = c.record
        if rec is None:
            table.add_row(c.task_id, str(len(c.solutions)), "-", "-", "-", "-", "-", "-", "-", "-", "-",
                          _status(c, min_ratio))
            continue
        unit = rec.unit
        b = rec.solutions.get(rec.baseline or "")
        r = rec.solutions.get(rec.reference or "")
        rci = rec.ratio_ci
        cvs = [s.cv for s in rec.solutions.values() if s.cv is not None]
        dist = " < ".join(f"{n} {_fmt(s.median_s, unit)}" for n, s in rec.sorted())
        tops = "/".join(rec.thresholds[k].solution for k in sorted(
            rec.thresholds, key=lambda k: rec.thresholds[k].percentile))
        ratio = rec.ratio
        table.add_row(
            c.task_id, str(len(rec.solutions)), _fmt(b.median_s if b else None, unit),
            _fmt(r.median_s if r else None, unit),
            "-" if ratio is None else f"{ratio:.2f}x",
            "-" if rci is None else f"{rci[0]:.2f}-{rci[1]:.2f}",
            _pct(rec.noise), _pct(max(cvs) if cvs else None), _fmt(rec.calibration),
            dist, tops, _status(c, min_ratio))
    Console(width=None if sys.stdout.isatty() else 260).print(table)


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


def _machine(sandbox) -> dict:
    return {**machine_facts(), "sandbox": type(sandbox).__name__,
            "isolation": getattr(sandbox, "isolation", None)}


# =========================================================================== command


def register_tasks(subparsers) -> None:
    """Add ``codegym tasks calibrate`` (called by codegym.cli.main for TASKS_COMMAND_MODULES)."""
    c = subparsers.add_parser(
        "calibrate", help="measure baseline/reference/solution runtimes on this machine",
        description="Judge every solution of each task on its perf split and measure it: "
                    "medians, calibration factor, noise, the baseline/reference ratio and "
                    "the strict top-30/50/70%% thresholds. Exit status 1 when a solution is "
                    "not accepted on the perf split or cannot be measured. --write stores the "
                    f"distributions in tasks/<suite>/{SIDECAR} (task files are not touched).")
    c.add_argument("paths", nargs="*", metavar="SUITE|PATH",
                   help="suite names, suite directories or task files (default: every suite)")
    c.add_argument("--metric", choices=("cpu", "wall", "instructions"), default=None,
                   help="timing metric (default: each task's perf.metric)")
    c.add_argument("--repeats", type=int, default=None, metavar="N",
                   help="samples per measurement at least (default: each task's perf.repeats)")
    c.add_argument("--max-repeats", type=int, default=None, metavar="N",
                   help=f"samples a measurement may take to reach 2%% precision "
                        f"(default: max(repeats, {DEFAULT_MAX_REPEATS}))")
    c.add_argument("--warmups", type=int, default=None, metavar="N",
                   help="untimed passes first (default: each task's perf.warmups)")
    c.add_argument("--min-of", type=int, default=None, metavar="K",
                   help="passes per sample, per-input minimum (default: automatic, codegym.timing.measurement's "
                        f"default -- 3 for cpu -- or 1 for solutions whose pass takes over "
                        f"{AUTO_MIN_OF_S:g} s of CPU)")
    c.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, metavar="S",
                   help=f"seconds one solution's measurement may spend (default {DEFAULT_BUDGET_S:g})")
    c.add_argument("--tasks", action="append", default=None, metavar="GLOB",
                   help="only tasks whose id (or bare name) matches; repeatable")
    c.add_argument("--min-ratio", type=float, default=DEFAULT_MIN_RATIO, metavar="R",
                   help=f"list tasks whose baseline/reference ratio is below R (default {DEFAULT_MIN_RATIO:g})")
    c.add_argument("--strict", action="store_true", help="also exit 1 when a task is below --min-ratio")
    c.add_argument("--write", action="store_true",
                   help=f"store the distributions in tasks/<suite>/{SIDECAR}")
    c.add_argument("--json", action="store_true", help="print JSON lines (one per task, then a summary)")
    c.add_argument("--sandbox", default=None, help="sandbox kind (default: local)")
    c.add_argument("-q", "--quiet", action="store_true", help="no per-solution progress on stderr")
    c.set_defaults(func=cmd_calibrate)


def _matches(task_id: str, globs: Sequence[str] | None) -> bool:
    if not globs:
        return True
    bare = task_id.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(task_id, g) or fnmatch.fnmatchcase(bare, g) for g in globs)


def _collect(targets: Iterable[str], globs: Sequence[str] | None,
             err: Callable[[str], None]) -> tuple[list[tuple[str, Any]], int]:
    """[(suite name, task)] of the targets, de-duplicated, and the number of load errors."""
    from codegym.tasks.suite import check_suite
    out, seen, n_err = [], set(), 0
    for target in targets:
        try:
            check = check_suite(target)
        except FileNotFoundError as e:
            err(f"error: {e}")
            n_err += 1
            continue
        for e in check.errors:
            err(str(e))
            n_err += 1
        for t in sorted(check.tasks, key=lambda t: t.id):
            if _matches(t.id, globs) and (t.id, t.content_hash) not in seen:
                seen.add((t.id, t.content_hash))
                out.append((check.name, t))
    return out, n_err


def _keep_ids(suite_dir: Path) -> list[str] | None:
    """Ids of the tasks now in a suite folder (None when it does not load cleanly: then
    nothing is pruned from its sidecar)."""
    from codegym.tasks.suite import check_suite
    try:
        check = check_suite(suite_dir)
    except FileNotFoundError:
        return None
    return None if check.errors else [t.id for t in check.tasks]


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Handler of ``codegym tasks calibrate``; returns the exit code."""
    from codegym.tasks.suite import list_suites

    def err(msg: str) -> None:
        print(msg, file=sys.stderr)

    if args.repeats is not None and args.repeats < 1:
        err("error: --repeats must be at least 1")
        return 2
    targets = list(args.paths) or list_suites()
    if not targets:
        err("no suites found (set CODEGYM_TASKS or pass a path)")
        return 1
    tasks, n_load_errors = _collect(targets, args.tasks, err)
    timed = [(s, t) for s, t in tasks if t.cases("perf")]
    no_perf = [t.id for s, t in tasks if not t.cases("perf")]
    if not timed:
        err("no task with perf cases to calibrate" + (f" (matching {', '.join(args.tasks)})" if args.tasks else ""))
        return 1
    from codegym.sandbox import make_sandbox
    sandbox = make_sandbox(args.sandbox) if args.sandbox else make_sandbox()
    machine = _machine(sandbox)
    log: Log | None = None if args.quiet else err
    results: list[tuple[str, TaskCalibration]] = []
    written: dict[Path, str] = {}
    t_start = time.monotonic()
    for i, (suite, task) in enumerate(timed, 1):
        if log:
            log(f"[{i}/{len(timed)}] {task.id} ({len(task.solutions)} solution(s), "
                f"{len(task.cases('perf'))} perf case(s))")
        c = calibrate_task(task, sandbox, metric=args.metric, repeats=args.repeats,
                           warmups=args.warmups, min_of=args.min_of, max_repeats=args.max_repeats,
                           budget_s=args.budget, log=log)
        results.append((suite, c))
        if args.json:
            print(json.dumps({"type": "task", "suite": suite, **c.to_dict()}), flush=True)
        if args.write and c.complete and c.suite_dir is not None:
            path = c.suite_dir / SIDECAR
            machine["loadavg"] = _machine(sandbox)["loadavg"]
            update_sidecar(path, [c.record], suite=suite, machine=machine)
            written[path] = suite
    if args.write:
        for path, suite in written.items():
            keep = _keep_ids(path.parent)
            if keep is not None:
                update_sidecar(path, [], suite=suite, keep_ids=keep)
    failures = [(c, s) for _, c in results for s in c.failures]
    below = [c for _, c in results if c.below(args.min_ratio)]
    incomplete = [c for _, c in results if not c.skipped and not c.complete]
    if args.json:
        print(json.dumps({
            "type": "summary", "calibrated": sum(1 for _, c in results if c.record is not None),
            "failures": [{"task": c.task_id, "solution": s.name, "verdict": s.verdict,
                          "message": s.message or s.error} for c, s in failures],
            "below_min_ratio": [{"task": c.task_id, "ratio": c.ratio} for c in below],
            "min_ratio": args.min_ratio, "no_perf_cases": no_perf,
            "written": sorted(str(p) for p in written), "load_errors": n_load_errors,
            "elapsed_s": round(time.monotonic() - t_start, 1)}))
    else:
        by_suite: dict[str, list[TaskCalibration]] = {}
        for suite, c in results:
            by_suite.setdefault(suite, []).append(c)
        for suite, rows in by_suite.items():
            mets = sorted({c.metric for c in rows})
            cals = [c.record.calibration for c in rows if c.record and c.record.calibration]
            note = (f"metric {'/'.join(mets)}, seconds per pass over the perf split, ratio of "
                    "calibration-normalised medians") + (
                f", calibration median {statistics.median(cals):.4g} s" if cals else "")
            _print_table(suite, rows, args.min_ratio, note)
        print(f"Tasks whose baseline/reference ratio is under {args.min_ratio:g}x:"
              + ("" if below else " none"))
        for c in below:
            rec = c.record
            print(f"  {c.task_id}: {c.ratio:.2f}x ({rec.baseline} {_fmt(rec.solutions[rec.baseline].median_s)}"
                  f" s / {rec.reference} {_fmt(rec.solutions[rec.reference].median_s)} s)")
        if failures:
            print("Solutions not accepted on the perf split or not measurable:")
            for c, s in failures:
                print(f"  {c.task_id} {s.name} [{s.language}]: {s.verdict}"
                      + (f": {s.message or s.error}" if (s.message or s.error) else ""))
        summary = (f"{sum(1 for _, c in results if c.record is not None)} task(s) calibrated, "
                   f"{len(failures)} solution failure(s), {len(below)} under {args.min_ratio:g}x")
        if no_perf:
            summary += f", {len(no_perf)} task(s) without perf cases skipped"
        summary += f" in {time.monotonic() - t_start:.0f} s"
        print(summary)
        for path in sorted(written):
            print(f"wrote {_rel(path)}")
        if args.write and incomplete:
            print("not written (incomplete): " + ", ".join(c.task_id for c in incomplete))
    rc = 1 if failures or n_load_errors else 0
    if args.strict and below:
        rc = 1
    return rc


def _rel(p: Path) -> str:
    try:
        r = os.path.relpath(p)
    except ValueError:
        return str(p)
    return str(p) if r.startswith("..") else r
