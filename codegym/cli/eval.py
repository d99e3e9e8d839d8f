"""``codegym eval CONFIG.yaml`` and ``codegym report DIR``.

`register(subparsers)` adds both commands (``codegym.cli.main`` calls it); `main(argv)`
runs them standalone (``python -m codegym.cli.eval eval CONFIG.yaml``).

    codegym eval examples/eval.yaml [--out DIR] [--workers N] [--limit N] [-q] [--no-report] [--key VAR[=URL]]
    codegym report results/smoke          # regenerate report.html, results.json, summary.md

Exit status of ``eval``: 0 when every planned episode is stored, 1 when some failed
(see ``errors.jsonl``; running the same command again retries them), 2 for a config or
output-directory problem, 130 when interrupted (running it again continues).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rich.console import Console

from codegym.core.keys import KeyGrants
from codegym.core.settings import user_settings
from codegym.core.yamldoc import DocValidationError
from codegym.evaluation.config import ConfigError, load_config
from codegym.evaluation.report import write_report
from codegym.evaluation.runner import run_eval
from codegym.evaluation.store import EvalError


def user_keys(args: argparse.Namespace) -> KeyGrants:
    """The key grants of ``--key`` and the user's settings; raises ValueError (one line)."""
    try:
        return KeyGrants.from_user(args.key or (), user_settings())
    except DocValidationError as e:
        raise ValueError(str(e)) from None


def add_key_option(p: argparse.ArgumentParser) -> None:
    """``--key VAR[=URL]`` (repeatable): an API key variable the config may name, and where it may go."""
    p.add_argument("--key", action="append", metavar="VAR[=URL]",
                   help="let the config name this API key variable (*_API_KEY, *_TOKEN) and send it to URL "
                        "(default: your own endpoint, CODEGYM_LLM_BASE_URL / OPENAI_BASE_URL); a key goes "
                        "to no other base URL (docs/eval.md)")


def cmd_eval(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config, keys=user_keys(args))
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for line in cfg.notices:
        print(line, file=sys.stderr)
    console = Console(stderr=True)
    try:
        summary = run_eval(cfg, args.out, progress=False if args.quiet else None, workers=args.workers,
                           limit=args.limit, report=False if args.no_report else None, console=console)
    except EvalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stored = summary.stored_before + summary.ran
    console.print(f"{summary.out_dir}: {stored} of {summary.planned} episode(s) stored "
                  f"({summary.stored_before} before this run, {summary.ran} now"
                  + (f", {summary.failed} failed: see errors.jsonl" if summary.failed else "") + ")"
                  + (f"; {summary.speed_comparisons} speed comparison(s)" if summary.speed_comparisons else ""))
    for p in summary.report_files:
        console.print(f"wrote {p}")
    if summary.interrupted:
        console.print("interrupted: run the same command again to continue")
        return 130
    return 1 if summary.failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    try:
        paths = write_report(args.dir)
    except EvalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for p in paths:
        print(f"wrote {p}")
    return 0


def register(subparsers) -> None:
    """Add ``codegym eval`` and ``codegym report``."""
    p = subparsers.add_parser("eval", help="benchmark agents on suites from a config (resumable)",
                              description="Run an eval config: every agent on the same tasks, seeds and "
                                          "budgets; results appended to OUT/results.jsonl (rerun to "
                                          "continue an interrupted run), then the report.")
    p.add_argument("config", metavar="CONFIG.yaml")
    p.add_argument("--out", help="output directory (default: `out:` of the config)")
    p.add_argument("--workers", type=int, default=None, help="episodes played in parallel (threads)")
    p.add_argument("--limit", type=int, default=None, help="play at most N new episodes, then stop")
    p.add_argument("--no-report", action="store_true", help="do not write the report at the end")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    add_key_option(p)
    p.set_defaults(func=cmd_eval)

    r = subparsers.add_parser("report", help="regenerate an eval's report from its stored results",
                              description="Write report.html, results.json and summary.md of an eval "
                                          "directory from its manifest.json and results.jsonl.")
    r.add_argument("dir", metavar="RESULTS_DIR")
    r.set_defaults(func=cmd_report)


def main(argv: Sequence[str] | None = None) -> int:
    """The two commands on their own (``python -m codegym.cli.eval``)."""
    parser = argparse.ArgumentParser(prog="codegym")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
