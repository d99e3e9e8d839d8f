"""``codegym tasks calibrate``: measure every task's runtime distribution on this machine.

    codegym tasks calibrate [SUITE|PATH ...] [--metric cpu|wall|instructions]
        [--repeats N] [--tasks GLOB] [--write] [--json] ...

prints a table per suite, lists the tasks whose baseline/reference ratio is under
``--min-ratio`` (2x: the RLPF premise that the reference is clearly faster), and exits 1
when a solution is not accepted on the perf split or cannot be measured. ``--write``
stores the records in ``tasks/<suite>/runtimes.json`` (`codegym.tasks.runtimes`; task
files are never rewritten) after each task, so an interrupted run keeps what it measured.
The measuring is `codegym.judge.calibrate`.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from codegym.cli.tasks import checked_suites
from codegym.judge.calibrate import (
    AUTO_MIN_OF_S,
    DEFAULT_BUDGET_S,
    DEFAULT_MAX_REPEATS,
    DEFAULT_MIN_RATIO,
    Log,
    TaskCalibration,
    calibrate_task,
    fmt_pct,
    fmt_value,
    machine_facts,
)
from codegym.sandbox import make_sandbox
from codegym.sandbox.types import Sandbox
from codegym.tasks.runtimes import SIDECAR, update_sidecar
from codegym.tasks.suite import check_suite, list_suites


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
        dist = " < ".join(f"{n} {fmt_value(s.median_s, unit)}" for n, s in rec.sorted())
        tops = "/".join(rec.thresholds[k].solution for k in sorted(
            rec.thresholds, key=lambda k: rec.thresholds[k].percentile))
        ratio = rec.ratio
        table.add_row(
            c.task_id, str(len(rec.solutions)), fmt_value(b.median_s if b else None, unit),
            fmt_value(r.median_s if r else None, unit),
            "-" if ratio is None else f"{ratio:.2f}x",
            "-" if rci is None else f"{rci[0]:.2f}-{rci[1]:.2f}",
            fmt_pct(rec.noise), fmt_pct(max(cvs) if cvs else None), fmt_value(rec.calibration),
            dist, tops, _status(c, min_ratio))
    Console(width=None if sys.stdout.isatty() else 260).print(table)


def _machine(sandbox: Sandbox) -> dict:
    return {**machine_facts(), "sandbox": type(sandbox).__name__,
            "isolation": sandbox.isolation}


def register_tasks(subparsers) -> None:
    """Add ``codegym tasks calibrate`` (`codegym.cli.main.build_parser` calls it)."""
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
    out, seen = [], set()
    checks, n_err = checked_suites(targets, err)
    for check in checks:
        for t in sorted(check.tasks, key=lambda t: t.id):
            if _matches(t.id, globs) and (t.id, t.content_hash) not in seen:
                seen.add((t.id, t.content_hash))
                out.append((check.name, t))
    return out, n_err


def _keep_ids(suite_dir: Path) -> list[str] | None:
    """Ids of the tasks now in a suite folder (None when it does not load cleanly: then
    nothing is pruned from its sidecar)."""
    try:
        check = check_suite(suite_dir)
    except FileNotFoundError:
        return None
    return None if check.errors else [t.id for t in check.tasks]


def cmd_calibrate(args: argparse.Namespace) -> int:
    """Handler of ``codegym tasks calibrate``; returns the exit code."""
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
    t_start = time.monotonic()
    results, written = _calibrate_all(args, timed, None if args.quiet else err)
    failures = [(c, s) for _, c in results for s in c.failures]
    below = [c for _, c in results if c.below(args.min_ratio)]
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
        _print_report(args, results, failures, below, no_perf, written, t_start)
    rc = 1 if failures or n_load_errors else 0
    if args.strict and below:
        rc = 1
    return rc


def _calibrate_all(args: argparse.Namespace, timed: list[tuple[str, Any]],
                   log: Log | None) -> tuple[list[tuple[str, TaskCalibration]], dict[Path, str]]:
    """Calibrate each (suite, task) in turn (JSON lines and sidecars as asked); returns
    [(suite, calibration)] and the sidecars written."""
    sandbox = make_sandbox(args.sandbox) if args.sandbox else make_sandbox()
    machine = _machine(sandbox)
    results: list[tuple[str, TaskCalibration]] = []
    written: dict[Path, str] = {}
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
    return results, written


def _print_report(args: argparse.Namespace, results: list[tuple[str, TaskCalibration]], failures: list,
                  below: list[TaskCalibration], no_perf: list[str], written: dict[Path, str],
                  t_start: float) -> None:
    """The tables per suite, the tasks under --min-ratio, the failures and a summary line."""
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
        print(f"  {c.task_id}: {c.ratio:.2f}x ({rec.baseline} {fmt_value(rec.solutions[rec.baseline].median_s)}"
              f" s / {rec.reference} {fmt_value(rec.solutions[rec.reference].median_s)} s)")
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
    incomplete = [c for _, c in results if not c.skipped and not c.complete]
    if args.write and incomplete:
        print("not written (incomplete): " + ", ".join(c.task_id for c in incomplete))


def _rel(p: Path) -> str:
    try:
        r = os.path.relpath(p)
    except ValueError:
        return str(p)
    return str(p) if r.startswith("..") else r
