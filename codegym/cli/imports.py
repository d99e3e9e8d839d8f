"""``codegym import``: turn benchmark files into task suites (registered by codegym.cli.main).

    codegym import humaneval FILE --out DIR [--mode auto|plain|plus] [--max-plus N]
    codegym import multipl-e FILE --out DIR [--no-repair] [--public none|tests]
    codegym import lcb FILE_OR_DATASET --out DIR [--since D] [--until D] [--difficulty easy,medium]
    codegym import leetcode-contest FILE --out DIR [--since D] [--until D] [--difficulty ...]
    codegym import swebench FILE --out DIR [--ids ID ...] [--test-command CMD] [--repo-url URL]

Each writes ``DIR/suite.yaml`` and one task YAML per problem (ids keep the
source's: ``HumanEval/0`` -> ``humaneval/HumanEval_0``), prints a summary
(``--json``: the `ImportReport` as JSON) and exits 0, or 1 when nothing could
be imported. The suite is then usable as ``gym.make("codegym/Suite-v0",
suite=DIR)`` and ``codegym tasks validate DIR``.

`register(subparsers)` adds the group (``codegym.cli.main`` calls it).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from codegym.importers.common import ImportError_
from codegym.importers.humaneval import import_humaneval
from codegym.importers.lcb import import_lcb, import_leetcode_contest
from codegym.importers.multiple import import_multiple
from codegym.importers.swebench import import_swebench
from codegym.sandbox import make_sandbox
from codegym.tasks.load import TaskValidationError

__all__ = ["register", "add_swebench_import"]


def register(subparsers) -> None:
    """Add the ``import`` command group."""
    p = subparsers.add_parser("import", help="import a benchmark file as a task suite",
                              description="Import benchmark files (HumanEval/EvalPlus, MultiPL-E, "
                                          "LiveCodeBench, LeetCode contest) as codegym task suites.")
    p.set_defaults(_group_parser=p)
    sub = p.add_subparsers(dest="import_command", metavar="BENCHMARK")

    h = sub.add_parser("humaneval", help="HumanEval, HumanEval+ / MBPP+ (EvalPlus) .jsonl[.gz]",
                       description="HumanEval (script tasks) and EvalPlus HumanEval+/MBPP+ (function tasks "
                                   "whose expected outputs are computed by the reference in the sandbox).")
    _common(h)
    h.add_argument("--mode", choices=("auto", "plain", "plus"), default="auto",
                   help="plain: script tasks with the original tests; plus: EvalPlus differential tests "
                        "(auto: plus when records have base_input)")
    h.add_argument("--max-plus", type=int, default=None, metavar="N",
                   help="keep only the first N plus inputs per problem (default: all)")
    h.add_argument("--ids", nargs="+", default=None, metavar="TASK_ID", help="only these source ids")
    h.add_argument("--time-floor", type=float, default=1.0, help="EvalPlus per-input time floor, s (default 1)")
    h.add_argument("--time-factor", type=float, default=4.0,
                   help="EvalPlus per-input limit = max(floor, factor x reference CPU time) (default 4)")
    h.add_argument("--memory-mb", type=int, default=1024, help="memory limit of the tasks (default 1024)")
    h.add_argument("--no-public", action="store_true",
                   help="EvalPlus: do not copy the base inputs into the public split")
    h.add_argument("--sandbox", default=None, help="sandbox kind for the reference runs (default: local)")
    h.set_defaults(func=cmd_humaneval)

    m = sub.add_parser("multipl-e", help="MultiPL-E prompts .jsonl (Julia, JavaScript)",
                       description="MultiPL-E problems as script tasks: prompt + completion + tests.")
    _common(m)
    m.add_argument("--no-repair", action="store_true", help="keep known-defective prompts verbatim")
    m.add_argument("--public", choices=("none", "tests"), default="none",
                   help="tests: also use the tests as the public split (reveals them)")
    m.add_argument("--time-s", type=float, default=None, help="CPU seconds per program (Julia default 15)")
    m.add_argument("--ids", nargs="+", default=None, metavar="NAME", help="only these problem names")
    m.set_defaults(func=cmd_multiple)

    lc = sub.add_parser("lcb", help="LiveCodeBench .jsonl (or a hub dataset with `datasets`)",
                        description="LiveCodeBench problems (functional -> function tasks, stdin -> stdio "
                                    "tasks), filtered by release date and difficulty.")
    _common(lc)
    _window(lc)
    lc.add_argument("--platform", default=None, help="leetcode, atcoder, codeforces (comma-separated)")
    lc.add_argument("--time-s", type=float, default=6.0, help="seconds per test (LCB default 6)")
    lc.set_defaults(func=cmd_lcb)

    lt = sub.add_parser("leetcode-contest", help="DeepSeek-Coder LeetCode contest .jsonl[.gz]",
                        description="LeetCode contest problems (prompt + assert tests) as function tasks.")
    _common(lt)
    _window(lt)
    lt.add_argument("--time-s", type=float, default=6.0, help="seconds per test (default 6)")
    lt.set_defaults(func=cmd_leetcode_contest)

    add_swebench_import(sub)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the benchmark file")
    p.add_argument("--out", required=True, metavar="DIR", help="suite folder to write")
    p.add_argument("--suite-name", default=None, help="suite part of the task ids (default per benchmark)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N problems")
    p.add_argument("--no-validate", action="store_true", help="do not load the written files back")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")


def _window(p: argparse.ArgumentParser) -> None:
    p.add_argument("--since", default=None, metavar="YYYY-MM-DD", help="release date >= this")
    p.add_argument("--until", default=None, metavar="YYYY-MM-DD", help="release date <= this")
    p.add_argument("--difficulty", default=None, help="easy, medium, hard (comma-separated)")


def _finish(args: argparse.Namespace, report) -> int:
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.summary())
        if report.written:
            print(f"use it: codegym tasks validate {args.out}  |  "
                  f"gym.make('codegym/Suite-v0', suite={args.out!r})")
    return 0 if report.written else 1


def _guard(fn):
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ImportError_, TaskValidationError, ValueError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    run.__name__ = fn.__name__
    return run


@_guard
def cmd_humaneval(args: argparse.Namespace) -> int:
    sandbox = make_sandbox(args.sandbox) if args.sandbox else None
    report = import_humaneval(args.file, args.out, mode=args.mode, max_plus=args.max_plus,
                              suite_name=args.suite_name, sandbox=sandbox, ids=args.ids, limit=args.limit,
                              time_floor=args.time_floor, time_factor=args.time_factor,
                              memory_mb=args.memory_mb, public_base=not args.no_public,
                              validate=not args.no_validate)
    return _finish(args, report)


@_guard
def cmd_multiple(args: argparse.Namespace) -> int:
    report = import_multiple(args.file, args.out, suite_name=args.suite_name, repair=not args.no_repair,
                             public=args.public, time_s=args.time_s, ids=args.ids, limit=args.limit,
                             validate=not args.no_validate)
    return _finish(args, report)


@_guard
def cmd_lcb(args: argparse.Namespace) -> int:
    report = import_lcb(args.file, args.out, since=args.since, until=args.until, difficulty=args.difficulty,
                        platform=args.platform, suite_name=args.suite_name or "lcb", time_s=args.time_s,
                        limit=args.limit, validate=not args.no_validate)
    return _finish(args, report)


@_guard
def cmd_leetcode_contest(args: argparse.Namespace) -> int:
    report = import_leetcode_contest(args.file, args.out, since=args.since, until=args.until,
                                     difficulty=args.difficulty, suite_name=args.suite_name or "leetcode-contest",
                                     time_s=args.time_s, limit=args.limit, validate=not args.no_validate)
    return _finish(args, report)


def _cmd_import_swebench(args: argparse.Namespace) -> int:
    try:
        rep = import_swebench(args.file, args.out, suite=args.suite_name, ids=args.ids or None, limit=args.limit,
                              test_command=shlex.split(args.test_command) if args.test_command else None,
                              validate=not args.no_validate, repo_url=args.repo_url)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(rep.to_dict(), indent=2) if args.json else rep.summary())
    return 0 if rep.written else 1


def add_swebench_import(import_subparsers) -> argparse.ArgumentParser:
    """Add ``swebench`` to the subcommands of ``codegym import`` (FILE, --out, --suite-name,
    --limit, --no-validate, --json as the others', plus --ids, --test-command, --repo-url)."""
    p = import_subparsers.add_parser(
        "swebench", help="SWE-bench instances (.json / .jsonl[.gz]) as repo tasks",
        description="Import SWE-bench task instances (fields instance_id, repo, base_commit, patch, "
                    "test_patch, problem_statement, FAIL_TO_PASS, PASS_TO_PASS, version, "
                    "environment_setup_commit) into a suite folder of repo tasks.")
    p.add_argument("file", metavar="FILE", help="instances: .json (list) or .jsonl, optionally .gz")
    p.add_argument("--out", required=True, metavar="DIR", help="suite folder to write (e.g. tasks/swebench)")
    p.add_argument("--suite-name", default=None, help="suite part of the task ids (default: the folder name)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N instances")
    p.add_argument("--ids", nargs="+", default=None, metavar="INSTANCE_ID", help="only these instance ids")
    p.add_argument("--test-command", default=None,
                   help="test runner argv prefix (default: pytest -rA, or the repository's SWE-bench runner)")
    p.add_argument("--repo-url", default="https://github.com/{repo}.git",
                   help="repository URL template; {repo} is the record's owner/name (default: GitHub)")
    p.add_argument("--no-validate", action="store_true", help="do not load the written files back")
    p.add_argument("--json", action="store_true", help="print the import report as JSON")
    p.set_defaults(func=_cmd_import_swebench)
    return p
