"""``codegym tasks list|validate``: check task suites and list their tasks.

    codegym tasks validate [PATH_OR_SUITE ...] [--oracle] [--sandbox KIND] [-q]
    codegym tasks list [SUITE ...] [--json]

``validate`` checks the schema, sibling files, languages and unique ids (exit 1 when
anything is wrong); ``--oracle`` also judges every solution (and a starter used as
baseline) on all splits against its expected verdict. ``list`` prints a table (or JSON
lines) of ids, kinds, languages, test counts, difficulty and content hash.
``tasks calibrate`` is `codegym.cli.calibrate`'s.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from codegym.core.paths import display_path
from codegym.judge import judge
from codegym.sandbox import make_sandbox
from codegym.tasks.fields import SPLITS
from codegym.tasks.repo import with_reference
from codegym.tasks.suite import SuiteCheck, check_suite, list_suites
from codegym.wrappers.config import RewardConfigError, suite_reward


def register(subparsers):
    """Add ``codegym tasks`` with its ``validate`` and ``list`` commands; returns the
    group's subparsers (where ``tasks calibrate`` and out-of-tree commands go)."""
    tasks = subparsers.add_parser("tasks", help="validate and list task suites",
                                  description="Validate and list task suites.")
    tasks.set_defaults(_group_parser=tasks)
    tsub = tasks.add_subparsers(dest="tasks_command", metavar="TASKS_COMMAND")

    v = tsub.add_parser("validate", help="check task files (schema, files, ids; --oracle: solutions)",
                        description="Check task files: the schema, sibling files, languages, "
                                    "unique ids. Exit status 1 when anything is wrong.")
    v.add_argument("paths", nargs="*", metavar="PATH_OR_SUITE",
                   help="suite names, suite directories or task files (default: every suite)")
    v.add_argument("--oracle", action="store_true",
                   help="also judge every solution (and a starter used as baseline) on all "
                        "splits; each must get its expected verdict (needs codegym.judge.run)")
    v.add_argument("--sandbox", default=None, help="sandbox kind for --oracle (default: local)")
    v.add_argument("-q", "--quiet", action="store_true", help="print only problems and the summary")
    v.set_defaults(func=cmd_tasks_validate)

    ls = tsub.add_parser("list", help="table of the tasks of suites",
                         description="List tasks: id, kind, languages, test counts, "
                                     "difficulty, content hash.")
    ls.add_argument("suites", nargs="*", metavar="SUITE", help="suite names or paths (default: all)")
    ls.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    ls.set_defaults(func=cmd_tasks_list)
    return tsub


def _targets(given: Sequence[str]) -> list[str]:
    return list(given) if given else list_suites()


def cmd_tasks_validate(args: argparse.Namespace) -> int:
    targets = _targets(args.paths)
    if not targets:
        print("no suites found (set CODEGYM_TASKS or pass a path)", file=sys.stderr)
        return 1
    n_files = n_bad = n_errors = 0
    valid = []
    printed: set = set()  # a broken suite.yaml fails every task: say so once
    for target in targets:
        try:
            check = check_suite(target)
        except FileNotFoundError as e:
            print(f"error: {e}")
            n_errors += 1
            continue
        try:  # the suite's declared default reward (suite.yaml `suite: {reward: ...}`)
            suite_reward(check.root)
        except RewardConfigError as e:
            for err in e.errors:
                if err not in printed:
                    printed.add(err)
                    n_errors += 1
                    print(err)
        for path, task, errs in check.results:
            n_files += 1
            if errs:
                n_bad += 1
                for e in errs:
                    if e not in printed:
                        printed.add(e)
                        n_errors += 1
                        print(e)
            elif task is not None:
                valid.append(task)
                if not args.quiet:
                    counts = "/".join(str(len(task.cases(s))) for s in ("public", "hidden", "perf"))
                    print(f"OK  {display_path(path)}  {task.id}  tests {counts}  {task.content_hash[:12]}")
    print(f"{n_files} task file(s): {n_files - n_bad} OK, {n_bad} with errors "
          f"({n_errors} error(s))")
    rc = 1 if n_errors else 0
    if args.oracle:
        orc = _oracle(valid, args.sandbox, quiet=args.quiet)  # always run: it prints every verdict
        rc = rc or orc
    return rc


def _oracle(tasks, sandbox_kind: str | None, quiet: bool = False) -> int:
    """Judge the known solutions of each task; 0 when every one gets its expected verdict."""
    sandbox = make_sandbox(sandbox_kind) if sandbox_kind else make_sandbox()
    failures = 0
    for task in tasks:
        if task.kind == "repo":
            task = with_reference(task)  # the gold patch becomes the reference
        runs = [(name, sol.language or task.language, dict(sol.files), sol.expect)
                for name, sol in task.solutions.items()]
        if task.baseline_is_starter and task.tests.perf and task.starter:
            runs.append(("starter (baseline)", task.language, task.starter_files(), "accepted"))
        if not runs:
            print(f"ORACLE  {task.id}: no solutions to judge")
            continue
        for name, language, files, expect in runs:
            parts, verdict, detail = [], "accepted", ""
            try:
                for split in SPLITS:
                    if not task.cases(split):
                        continue
                    rep = judge(task, files, sandbox=sandbox, split=split, language=language)
                    parts.append(f"{split} {rep.passed}/{rep.total}")
                    if rep.verdict != "accepted":
                        verdict = rep.verdict
                        bad = next((c for c in rep.cases if c.status != "accepted"), None)
                        if bad is not None:
                            detail = f" at {split} case {bad.name or bad.index}: {bad.message}".rstrip()
                        break
            except Exception as e:  # noqa: BLE001 -- report and go on with the next solution
                verdict, detail = "error", f": {type(e).__name__}: {e}"
            ok = verdict == expect
            failures += not ok
            if not ok or not quiet:
                want = "" if expect == "accepted" else f" (expected {expect})"
                status = "ok  " if ok else "FAIL"
                print(f"ORACLE {status} {task.id} {name} [{language}]: {verdict}{want}; "
                      f"{', '.join(parts)}{detail if not ok or expect != 'accepted' else ''}")
    print(f"oracle: {failures} solution(s) without their expected verdict")
    return 1 if failures else 0


def checked_suites(targets: Iterable[str], err: Callable[[str], None]) -> tuple[list[SuiteCheck], int]:
    """`check_suite` of each target that exists; a missing target and every file error go
    to `err` (in target order). Returns the checks and the number of errors."""
    checks, n_err = [], 0
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
        checks.append(check)
    return checks, n_err


def cmd_tasks_list(args: argparse.Namespace) -> int:
    checks, n_err = checked_suites(_targets(args.suites), lambda msg: print(msg, file=sys.stderr))
    rc = 1 if n_err else 0
    rows = [(check.name, t) for check in checks for t in sorted(check.tasks, key=lambda t: t.id)]
    if args.json:
        for suite, t in rows:
            print(json.dumps({
                "suite": suite, "id": t.id, "version": t.version, "kind": t.kind,
                "language": t.language, "languages": t.languages, "title": t.title,
                "public": len(t.tests.public), "hidden": len(t.tests.hidden),
                "perf": len(t.tests.perf), "difficulty": t.metadata.difficulty,
                "tags": t.metadata.tags, "hash": t.content_hash, "key": t.key,
                "path": t.source_path,
            }))
        return rc
    table = Table(title=f"{len(rows)} task(s)", box=box.SIMPLE_HEAD)
    table.add_column("id", overflow="fold")
    table.add_column("kind")
    table.add_column("languages", overflow="fold")
    for split in ("public", "hidden", "perf"):
        table.add_column(f"#{split}", justify="right")
    table.add_column("difficulty")
    table.add_column("hash", no_wrap=True)
    for _, t in rows:
        langs = ",".join(t.languages) if t.languages else ("all" if t.kind == "stdio" else t.language)
        table.add_row(t.id, t.kind, langs, str(len(t.tests.public)), str(len(t.tests.hidden)),
                      str(len(t.tests.perf)), t.metadata.difficulty or "", t.content_hash[:12])
    # Not a terminal (a pipe, a file): do not wrap rows at rich's default 80 columns.
    Console(width=None if sys.stdout.isatty() else 240).print(table)
    return rc
