"""``codegym tasks mine``: SWE tasks from a repository's history (registered by codegym.cli.main).

    codegym tasks mine REPO --out DIR [--name OWNER/NAME] [--since DATE] [--until DATE]
                       [--max N] [--max-commits N] [--install REQ ...] [--env NAME=VALUE ...]
                       [--test-command CMD] [--licence SPDX] [--runs N] [--json]
    codegym tasks pack DIR [--check]

``mine`` walks REPO's commits that change source and tests and keeps the verified tasks
(`codegym.importers.mine.mine_repository`); ``pack`` stores the repositories of a mined
suite as one git bundle each (`codegym.importers.minepack.pack_suite`). Exit 0 when a task
was kept (pack: when every task's tree is unchanged), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys

from codegym.cli.imports import env_pairs
from codegym.importers.mine import mine_repository
from codegym.importers.minepack import pack_suite
from codegym.importers.swebench import PYTEST_COMMAND


def register_tasks(tasks_sub) -> None:
    """Add ``mine`` and ``pack`` to ``codegym tasks``."""
    p = tasks_sub.add_parser(
        "mine", help="mine SWE tasks from a repository's history",
        description="Walk the commits that change both source and tests; for each, run the changed test "
                    "files on the parent with the commit's test changes, before and after its source "
                    "changes (twice each: flaky tests are left out), and write a SWE task with "
                    "FAIL_TO_PASS / PASS_TO_PASS, kept only when the gold patch resolves it and neither the "
                    "no-op nor a patch that only edits tests does.")
    p.add_argument("repo", metavar="REPO", help="a local clone or mirror (bare or not), or a git URL")
    p.add_argument("--out", required=True, metavar="DIR", help="suite folder (created; existing tasks kept)")
    p.add_argument("--name", default=None, help="owner/name of the repository (default: from the path)")
    p.add_argument("--since", default=None, metavar="DATE", help="only commits after this date (git's --since)")
    p.add_argument("--until", default=None, metavar="DATE", help="only commits before this date")
    p.add_argument("--max", type=int, default=None, metavar="N", help="stop after N tasks kept")
    p.add_argument("--max-commits", type=int, default=None, metavar="N", help="stop after N candidate commits")
    p.add_argument("--install", action="append", default=None, metavar="REQ",
                   help="pip requirement added to the tests' environment (repeatable): each commit's is pytest "
                        "and what the repository declares at that commit; a distribution named again takes this "
                        "version")
    p.add_argument("--env", action="append", default=None, metavar="NAME=VALUE",
                   help="environment variable of the test commands (repeatable)")
    p.add_argument("--test-command", default=None,
                   help=f"test runner argv prefix (default: {' '.join(PYTEST_COMMAND)})")
    p.add_argument("--licence", default=None, help="the repository's SPDX licence, when its LICENSE file is "
                                                   "not recognised or not permissive (you checked it)")
    p.add_argument("--runs", type=int, default=2, help="runs of each side, to find flaky tests (default 2)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_mine)

    k = tasks_sub.add_parser(
        "pack", help="store a mined suite's repositories as one git bundle each",
        description="Replace the repository sources of a mined suite by one git bundle per repository "
                    "(repos/<owner>__<name>.bundle) holding only the base trees the tasks need.")
    k.add_argument("dir", metavar="DIR", help="the suite folder")
    k.set_defaults(func=cmd_pack)


def cmd_mine(args: argparse.Namespace) -> int:
    try:
        rep = mine_repository(args.repo, args.out, name=args.name, since=args.since, until=args.until,
                              max_tasks=args.max, max_commits=args.max_commits, install=args.install,
                              env=env_pairs(args.env), licence=args.licence, runs=args.runs,
                              prefix=shlex.split(args.test_command) if args.test_command else PYTEST_COMMAND,
                              log=None if args.json else print)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(rep.to_dict(), indent=2) if args.json else rep.summary())
    return 0 if rep.kept else 1


def cmd_pack(args: argparse.Namespace) -> int:
    try:
        rep = pack_suite(args.dir, log=print)
    except (ValueError, OSError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(rep.summary)
    for name, why in rep.dropped:
        print(f"dropped {name}: {why}")
    return 0
