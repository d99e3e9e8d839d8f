"""``codegym rewards simulate``: rank candidate reward configurations on recorded episodes.

    codegym rewards simulate CANDIDATES.yaml --episodes out/eval [--episodes rollouts.jsonl ...]
        [--suite SUITE ...] [--measure] [--metric cpu] [--synthetic 1,1.5,2,3,5]
        [--group-by recorded|task|task_agent] [--save-recording FILE] [--out report.json] [--json]

Reads ``codegym eval`` directories, ``collect`` JSONL or saved recordings; with
``--measure`` times the accepted programs that lack timings (and their tasks' solutions)
in the sandbox; ``--synthetic`` adds seeded programs at known speedups to every group.
Prints one row per configuration, best first (`codegym.evaluation.simulate`).
Exit status: 0, 2 for a bad candidates file or recording.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from codegym.evaluation.recordings import (
    GROUP_BY,
    RecordingError,
    load_recordings,
    measure_recordings,
    save_recordings,
    synthetic_variants,
)
from codegym.evaluation.simulate import SimulationError, load_candidates, simulate
from codegym.sandbox import make_sandbox
from codegym.tasks.load import TaskValidationError
from codegym.tasks.suite import load_suite
from codegym.wrappers.measure import TimingSettings


def register(subparsers):
    """Add ``codegym rewards simulate``."""
    grp = subparsers.add_parser("rewards", help="reward configurations: offline simulation",
                                description="Work with reward configurations.")
    grp.set_defaults(_group_parser=grp)
    sub = grp.add_subparsers(dest="rewards_command", metavar="REWARDS_COMMAND")
    s = sub.add_parser("simulate", help="rank candidate reward configurations on recorded episodes",
                       description="Recompute rewards of recorded episodes under each candidate "
                                   "configuration and rank the configurations (docs/simulate.md).")
    s.add_argument("candidates", metavar="CANDIDATES.yaml")
    s.add_argument("--episodes", action="append", required=True, metavar="PATH",
                   help="an eval directory, results.jsonl, collect JSONL or saved recording (repeatable)")
    s.add_argument("--suite", action="append", default=[], metavar="SUITE",
                   help="suite(s) holding the tasks (for --measure and progress_shaping; default: "
                        "the suite named by each task id)")
    s.add_argument("--measure", action="store_true", help="time accepted programs that lack timings")
    s.add_argument("--metric", choices=("cpu", "wall", "instructions"), default=None,
                   help="metric to measure (default: each task's)")
    s.add_argument("--repeats", type=int, default=5, help="samples per measurement (default 5)")
    s.add_argument("--sandbox", default=None, help="sandbox kind for --measure (default: local)")
    s.add_argument("--synthetic", default="", metavar="S1,S2,...",
                   help="add seeded synthetic programs at these speedups over the baseline")
    s.add_argument("--seed", type=int, default=0, help="seed of the synthetic variants")
    s.add_argument("--group-by", choices=GROUP_BY, default="recorded")
    s.add_argument("--draws", type=int, default=None, help="noise draws (overrides the file's)")
    s.add_argument("--save-recording", default=None, metavar="FILE",
                   help="write the recordings (with measured timings) for later runs")
    s.add_argument("--out", default=None, metavar="FILE", help="write the full report as JSON")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    s.set_defaults(func=cmd_simulate)
    return sub


def tasks_of(task_ids, suites) -> dict:
    """Task id -> Task from the given suites, else from the suite each id names."""
    found: dict = {}
    for s in suites:
        found.update({t.id: t for t in load_suite(s)})
    for tid in sorted(set(task_ids) - set(found)):
        try:
            found.update({t.id: t for t in load_suite(tid.split("/", 1)[0])})
        except (FileNotFoundError, TaskValidationError):
            continue
    return found


def _table(results, console: Console) -> None:
    t = Table(box=box.SIMPLE_HEAD, title="reward configurations, best first")
    for col in ("rank", "configuration", "sound", "score", "non-zero adv", "speed signal", "rank corr",
                "violations", "E[flips]"):
        t.add_column(col, justify="left" if col == "configuration" else "right")
    for r in results:
        rho = "-" if r.rank_correlation is None else f"{r.rank_correlation:+.3f}"
        t.add_row(str(r.rank), r.name, "yes" if r.sound else "NO", f"{r.score:+.3f}", f"{r.nonzero_share:.0%}",
                  f"{r.speed_signal_share:.0%}", rho, f"{r.violations}/{r.violation_pairs}",
                  f"{r.expected_flips:.2f}/{r.flip_pairs}")
    console.print(t)


def cmd_simulate(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    try:
        cands, settings = load_candidates(args.candidates)
        recs = load_recordings(args.episodes, group_by=args.group_by)
    except (SimulationError, RecordingError, OSError) as e:
        print(e, file=sys.stderr)
        return 2
    if args.draws is not None:
        settings.draws = max(1, args.draws)
    needs_tasks = args.measure or any(s.type == "progress_shaping" for c in cands for s in c.specs)
    tasks = tasks_of({r.task_id for r in recs}, args.suite) if needs_tasks else {}
    sandbox = make_sandbox(args.sandbox) if needs_tasks else None
    try:
        if args.measure:
            n = measure_recordings(recs, tasks, sandbox, metric=args.metric,
                                   settings=TimingSettings(repeats=args.repeats, max_pairs=args.repeats),
                                   progress=lambda r: err.print(f"measured {r.key}"))
            err.print(f"measured {n} program(s)")
        if args.synthetic:
            speedups = [float(x) for x in args.synthetic.split(",") if x.strip()]
            recs = recs + synthetic_variants(recs, speedups, seed=args.seed, metric=args.metric)
        if args.save_recording:
            save_recordings(args.save_recording, recs)
        results = simulate(recs, cands, settings, tasks=tasks, sandbox=sandbox)
    except (RecordingError, SimulationError, ValueError) as e:  # ShapingNeedsTasks is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    for r in results:
        if r.details.get("correct_without_times"):
            err.print(f"warning: {r.name}: {r.details['correct_without_times']} correct program(s) have no times "
                      "in its metric (--measure, --metric): scored as unscorable")
    report = {"episodes": len(recs), "synthetic": sum(r.synthetic for r in recs),
              "settings": settings.model_dump(), "configurations": [r.to_dict() for r in results]}
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _table(results, Console(width=None if sys.stdout.isatty() else 140))
    return 0
