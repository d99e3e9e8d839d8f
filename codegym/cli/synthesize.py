"""``codegym synthesize CONFIG.yaml``: verified SFT data from teacher models, and their tournament.

    codegym synthesize synth.yaml [--out DIR] [--workers N] [--limit N] [-q] [--key VAR[=URL]]

The config is an eval config whose agents are the teachers, plus a ``synthesis:``
block (`codegym.evaluation.synthesis`). Running it again continues an interrupted run.
Prints the tournament ranking and the files written. Exit status: 0 done, 1 some
episodes failed (errors.jsonl; run again to retry them), 2 config or directory
problems, 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys

from rich import box
from rich.console import Console
from rich.table import Table

from codegym.cli.eval import add_key_option, user_keys
from codegym.evaluation.config import ConfigError
from codegym.evaluation.store import EvalError
from codegym.evaluation.synthesis import load_synthesis_config, run_synthesis


def register(subparsers):
    """Add ``codegym synthesize``."""
    s = subparsers.add_parser("synthesize", help="verified SFT data from teacher models, and their tournament",
                              description="Let teacher models solve tasks with execution feedback, keep the "
                                          "verified solutions as SFT data, rank the teachers (docs/synthesis.md).")
    s.add_argument("config", metavar="CONFIG.yaml")
    s.add_argument("--out", default=None, help="output directory (default: the config's `out`)")
    s.add_argument("--workers", type=int, default=None, help="episodes in parallel (default: the config's)")
    s.add_argument("--limit", type=int, default=None, help="play at most N new episodes, then stop")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    add_key_option(s)
    s.set_defaults(func=cmd_synthesize)
    return s


def _ranking(table, console: Console) -> None:
    t = Table(box=box.SIMPLE_HEAD, title=f"teachers on {table['contested_tasks']} contested task(s) "
                                         f"({len(table['saturated'])} saturated, shown apart)")
    for col in ("rank", "teacher", "pass rate", "interval", "accepted", "kept", "copies", "duplicates"):
        t.add_column(col, justify="left" if col == "teacher" else "right")
    for r in table["ranking"]:
        rate = "-" if r["rate"] != r["rate"] else f"{100 * r['rate']:.1f}%"
        ci = "-" if r["lo"] != r["lo"] else f"[{100 * r['lo']:.1f}, {100 * r['hi']:.1f}]"
        t.add_row(str(r["rank"]), r["teacher"], rate, ci, f"{r['accepted']}/{r['episodes']}", str(r.get("kept")),
                  str(r.get("copied")), str(r.get("duplicates")))
    console.print(t)


def cmd_synthesize(args: argparse.Namespace) -> int:
    try:
        sc = load_synthesis_config(args.config, keys=user_keys(args))
    except (ConfigError, OSError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
    for line in sc.eval.notices:
        print(line, file=sys.stderr)
    console = Console(stderr=True)
    try:
        res = run_synthesis(sc, args.out, progress=False if args.quiet else None, workers=args.workers,
                            limit=args.limit, console=console)
    except EvalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    s = res.summary
    console.print(f"{res.out_dir}: {res.episodes} episode(s) stored; {res.accepted} accepted, {res.copied} "
                  f"copies, {res.duplicates} duplicates, {res.kept} kept as SFT examples")
    _ranking(res.table, Console(width=None if sys.stdout.isatty() else 140))
    for p in res.files:
        console.print(f"wrote {p}")
    if s is not None and s.interrupted:
        console.print("interrupted: run the same command again to continue")
        return 130
    return 1 if s is not None and s.failed else 0
