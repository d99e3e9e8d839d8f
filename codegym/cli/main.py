"""The ``codegym`` command line (entry point ``codegym = codegym.cli.main:main``).

This module owns the argument parser and the ``tasks`` command group:

    codegym tasks validate [PATH_OR_SUITE ...] [--oracle] [--sandbox KIND] [-q]
    codegym tasks list [SUITE ...] [--json]

Other commands live in their own modules and are registered here by name, so this
file does not import them (nor their dependencies) until they are listed:

- a module in `COMMAND_MODULES` defines ``register(subparsers)``, adding top-level
  commands (``run``, ``import``, ``eval``, ``report`` ...);
- a module in `TASKS_COMMAND_MODULES` defines ``register_tasks(subparsers)``, adding
  ``codegym tasks <name>`` commands (``calibrate`` ...).

Each command sets ``func=handler`` with ``handler(args) -> int`` (the exit code)
via ``parser.set_defaults``. A listed module that cannot be imported is reported on
stderr and its commands are missing; the rest of the CLI keeps working.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from typing import Callable, Sequence

#: modules that add top-level commands: each defines ``register(subparsers)``
COMMAND_MODULES: list[str] = ["codegym.rollout.runner", "codegym.cli.imports", "codegym.cli.eval",
                                   "codegym.cli.images"]
#: modules that add ``codegym tasks ...`` commands: each defines ``register_tasks(subparsers)``
TASKS_COMMAND_MODULES: list[str] = ["codegym.judge.calibrate"]

Handler = Callable[[argparse.Namespace], int]


def _load_plugins(names: Sequence[str], hook: str, subparsers) -> None:
    for name in names:
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            print(f"codegym: commands from {name} are unavailable: {e}", file=sys.stderr)
            continue
        getattr(mod, hook)(subparsers)


def build_parser() -> argparse.ArgumentParser:
    """The full parser: built-in commands plus the registered modules' ones."""
    from codegym import __version__  # noqa: PLC0415 (kept light: only the version)

    parser = argparse.ArgumentParser(prog="codegym", description="Gymnasium coding environments: "
                                     "tasks, sandboxed judging, rollouts.")
    parser.add_argument("--version", action="version", version=f"codegym {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    register_tasks_group(sub)
    _load_plugins(COMMAND_MODULES, "register", sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 problems found, 2 usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Handler | None = getattr(args, "func", None)
    if func is None:
        # A group without a subcommand: show that group's help.
        (getattr(args, "_group_parser", None) or parser).print_help(sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`codegym tasks list | head`): not an error of ours.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 -- silence the flush at exit
        return 0


# --------------------------------------------------------------------------- tasks


def register_tasks_group(subparsers) -> None:
    """Add ``codegym tasks`` with its ``validate`` and ``list`` commands."""
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

    _load_plugins(TASKS_COMMAND_MODULES, "register_tasks", tsub)


def _targets(given: Sequence[str]) -> list[str]:
    from codegym.tasks.suite import list_suites  # noqa: PLC0415

    return list(given) if given else list_suites()


def cmd_tasks_validate(args: argparse.Namespace) -> int:
    from codegym.tasks.suite import check_suite  # noqa: PLC0415

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
                    print(f"OK  {_rel(path)}  {task.id}  tests {counts}  {task.content_hash[:12]}")
    print(f"{n_files} task file(s): {n_files - n_bad} OK, {n_bad} with errors "
          f"({n_errors} error(s))")
    rc = 1 if n_errors else 0
    if args.oracle:
        orc = _oracle(valid, args.sandbox, quiet=args.quiet)
        if orc == 2:
            return 2
        rc = rc or orc
    return rc


def _oracle(tasks, sandbox_kind: str | None, quiet: bool = False) -> int:
    """Judge the known solutions of each task; 0 when every one gets its expected verdict."""
    try:
        from codegym.judge.run import judge  # noqa: PLC0415 (optional layer)
        from codegym.sandbox import make_sandbox  # noqa: PLC0415
    except ImportError as e:
        print(f"error: --oracle needs codegym.judge.run and codegym.sandbox, which cannot be "
              f"imported here: {e}", file=sys.stderr)
        return 2
    from codegym.tasks.schema import SPLITS  # noqa: PLC0415

    sandbox = make_sandbox(sandbox_kind) if sandbox_kind else make_sandbox()
    failures = 0
    for task in tasks:
        if task.kind == "repo":
            from codegym.tasks import repo as swe  # noqa: PLC0415  (the gold patch becomes the reference)
            task = swe.with_reference(task)
        runs = [(name, sol.language or task.language, dict(sol.files), sol.expect)
                for name, sol in task.solutions.items()]
        if task.baseline_name is None and task.tests.perf and task.starter:
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


def cmd_tasks_list(args: argparse.Namespace) -> int:
    from codegym.tasks.suite import check_suite  # noqa: PLC0415

    rc = 0
    rows = []
    for target in _targets(args.suites):
        try:
            check = check_suite(target)
        except FileNotFoundError as e:
            print(f"error: {e}", file=sys.stderr)
            rc = 1
            continue
        for e in check.errors:
            print(e, file=sys.stderr)
            rc = 1
        for t in sorted(check.tasks, key=lambda t: t.id):
            rows.append((check.name, t))
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
    from rich.console import Console  # noqa: PLC0415 (only the table needs rich)
    from rich.table import Table  # noqa: PLC0415

    from rich import box  # noqa: PLC0415

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


def _rel(p) -> str:
    try:
        r = os.path.relpath(p)
    except ValueError:
        return str(p)
    return str(p) if r.startswith("..") else r


if __name__ == "__main__":
    sys.exit(main())
